"""`engram bench`: run the benchmark sections, print them, and write bench/results/."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.bench.machine import describe_machine
from services.bench.report import write_results


@dataclass(frozen=True)
class BenchOptions:
    """What `engram bench` was asked for: a smoke run, and the store sizes the retrieval
    section measures (empty: its plan's, 10k / 100k / 1M)."""

    quick: bool = False
    sizes: tuple[int, ...] = ()


def _embedder(options: BenchOptions) -> dict[str, Any]:
    from services.bench import embedder

    return embedder.run(options.quick)


def _retrieval(options: BenchOptions) -> dict[str, Any]:
    from services.bench import retrieval

    return retrieval.run(options.quick, sizes=options.sizes)


def _lifecycle(options: BenchOptions) -> dict[str, Any]:
    from services.bench import lifecycle

    return lifecycle.run(options.quick)


def _corpus(options: BenchOptions) -> dict[str, Any]:
    from services.bench import corpus

    return corpus.run(options.quick)


def _gateway(options: BenchOptions) -> dict[str, Any]:
    from services.bench import gateway

    return gateway.run(options.quick)


# Section name → runner. Later tiers add their sections here.
SECTIONS: dict[str, Callable[[BenchOptions], dict[str, Any]]] = {
    "embedder": _embedder,
    "retrieval": _retrieval,
    "lifecycle": _lifecycle,
    "corpus": _corpus,
    "gateway": _gateway,
}


def run_bench(
    *,
    quick: bool,
    only: list[str],
    sizes: tuple[int, ...] = (),
    out_dir: Path = Path("bench/results"),
) -> int:
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
        outcome = section(BenchOptions(quick=quick, sizes=sizes))
        results["sections"][name] = outcome
        markdown.append(outcome.get("markdown", ""))
        print("\n" + outcome.get("markdown", json.dumps(outcome, indent=2)), flush=True)
    results["markdown"] = "\n\n".join(markdown) + "\n"
    json_path, md_path = write_results(results, out_dir)
    print(f"\nwritten: {json_path} and {md_path}")
    return 0
