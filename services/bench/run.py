"""`engram bench`: run the benchmark sections, print them, and write bench/results/."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from services.bench.machine import describe_machine
from services.bench.report import write_results


def _embedder(quick: bool) -> dict[str, Any]:
    from services.bench import embedder

    return embedder.run(quick)


def _retrieval(quick: bool) -> dict[str, Any]:
    from services.bench import retrieval

    return retrieval.run(quick)


def _lifecycle(quick: bool) -> dict[str, Any]:
    from services.bench import lifecycle

    return lifecycle.run(quick)


def _corpus(quick: bool) -> dict[str, Any]:
    from services.bench import corpus

    return corpus.run(quick)


def _gateway(quick: bool) -> dict[str, Any]:
    from services.bench import gateway

    return gateway.run(quick)


# Section name → runner. Later tiers add their sections here.
SECTIONS: dict[str, Callable[[bool], dict[str, Any]]] = {
    "embedder": _embedder,
    "retrieval": _retrieval,
    "lifecycle": _lifecycle,
    "corpus": _corpus,
    "gateway": _gateway,
}


def run_bench(*, quick: bool, only: list[str], out_dir: Path = Path("bench/results")) -> int:
    """Run the chosen sections (all by default); print markdown; write JSON + markdown files."""
    logging.basicConfig(level=logging.WARNING)
    unknown = [name for name in only if name not in SECTIONS]
    if unknown:
        print(f"unknown section(s) {unknown}; choose from {sorted(SECTIONS)}")
        return 2
    machine = describe_machine()
    header = (
        f"## Engram bench{' (quick)' if quick else ''}\n\n"
        f"Machine: {machine['cpu']}, {machine['cores']} cores, {machine['memory_gib']} GiB, "
        f"GPU: {machine['gpu'] or 'none'}; Python {machine['python']}, torch {machine['torch']}"
    )
    print(header, flush=True)
    results: dict[str, Any] = {"machine": machine, "quick": quick, "sections": {}}
    markdown = [header]
    for name, section in SECTIONS.items():
        if only and name not in only:
            continue
        outcome = section(quick)
        results["sections"][name] = outcome
        markdown.append(outcome.get("markdown", ""))
        print("\n" + outcome.get("markdown", json.dumps(outcome, indent=2)), flush=True)
    results["markdown"] = "\n\n".join(markdown) + "\n"
    json_path, md_path = write_results(results, out_dir)
    print(f"\nwritten: {json_path} and {md_path}")
    return 0
