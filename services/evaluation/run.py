"""`engram eval`: run the standard sets against a target and write the report.

    eval/results/<date>/report.md      the tables
    eval/results/<date>/results.json   every figure (what `--compare` reads)
    eval/results/<date>/*.png          charts

Data is read from `ENGRAM_EVAL_DATA`, else `../shared/eval` beside the repository (the layout
of shared/eval/README.md). `--quick` runs CI-sized subsets whose figures are not comparable to
published ones; the report says so.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from services.evaluation.locomo import load_locomo
from services.evaluation.report import Results, compare, write_report
from services.evaluation.runners import run_locomo, run_scifact, run_supersession, run_thesis
from services.evaluation.scifact import load_beir
from services.evaluation.supersession import load_supersession_set
from services.evaluation.target import EvalTarget
from services.evaluation.thesis import load_thesis_set, nothing_stored_files

SETS = ("thesis", "supersession", "updates", "scifact", "locomo", "composer")
THESIS_FILES = ("dev_default.json", "dev_companion.json")
REPO_ROOT = Path(__file__).resolve().parents[2]
# Engram's own development sets, run beside the shared ones (eval/sets/README.md).
OWN_THESIS_DIR = REPO_ROOT / "eval" / "sets" / "thesis"
SUPERSESSION_DIR = REPO_ROOT / "eval" / "sets" / "supersession"

# --quick: small enough for CI on two cores, large enough to exercise every code path.
QUICK_SCIFACT_QUERIES = 30
QUICK_SCIFACT_DISTRACTORS = 300
QUICK_LOCOMO_CONVERSATIONS = 1
QUICK_LOCOMO_QUESTIONS = 40


def default_data_dir() -> Path:
    """`ENGRAM_EVAL_DATA`, else `../shared/eval` next to the repository."""
    configured = os.environ.get("ENGRAM_EVAL_DATA")
    return Path(configured) if configured else REPO_ROOT.parent / "shared" / "eval"


@dataclass
class EvalOptions:
    sets: tuple[str, ...] = SETS
    quick: bool = False
    data_dir: Path = field(default_factory=default_data_dir)
    thesis_files: tuple[Path, ...] = ()  # empty: the two shared sets and Engram's own
    supersession_files: tuple[Path, ...] = ()  # empty: every set in eval/sets/supersession
    out_root: Path = field(default_factory=lambda: Path("eval") / "results")
    compare_with: Path | None = None
    concurrency: int = 4
    scifact_queries: int | None = None  # a stated subset of the test queries (None: all)
    locomo_conversations: int | None = None  # the first N conversations (None: all)
    locomo_authored: bool = True  # also through composed drawers (needs the authoring tier)
    composer_files: tuple[Path, ...] = ()  # empty: every set in eval/sets/composer

    def __post_init__(self) -> None:
        unknown = sorted(set(self.sets) - set(SETS))
        if unknown:
            raise ValueError(f"unknown sets {unknown}: choose from {', '.join(SETS)}")


def _machine() -> dict[str, Any]:
    try:
        from services.bench.machine import describe_machine

        return describe_machine()
    except Exception as error:  # the report is still worth writing without it
        return {"error": f"machine description failed: {error}"}


def _need(path: Path, what: str) -> Path:
    if not path.exists():
        raise FileNotFoundError(
            f"{what} not found at {path}: set ENGRAM_EVAL_DATA or pass --data to the directory "
            "laid out as shared/eval/README.md describes"
        )
    return path


async def _run_composer(files: tuple[Path, ...], say: Callable[[str], None]) -> dict[str, Any]:
    """The composer sets through the offline extractive invoker, in this process: it is the
    authoring tier's default composer, deterministic, and needs only the bundled model."""
    import numpy as np
    import numpy.typing as npt

    from services.authoring.core import ExtractiveInvoker
    from services.embedder.core import load_model, resolve_model_path
    from services.evaluation.composer import run_composer_sets

    model = load_model(resolve_model_path(""), device="cpu", fp16=False, torch_threads=2)

    async def embed(texts: list[str]) -> npt.NDArray[np.float32]:
        return model.encode(texts, batch_size=64)

    invoker = ExtractiveInvoker(embed)
    return await run_composer_sets(
        invoker.compose, f"{invoker.name} ({invoker.model}), in-process", files, progress=say
    )


async def _run_updates(say: Callable[[str], None]) -> dict[str, Any]:
    """The write path's neighbour rule on the update pairs, with the bundled model here."""
    import numpy as np
    import numpy.typing as npt

    from services.embedder.core import load_model, resolve_model_path
    from services.evaluation.updates import load_pairs, run_updates

    model = load_model(resolve_model_path(""), device="cpu", fp16=False, torch_threads=2)

    async def embed(texts: list[str]) -> npt.NDArray[np.float32]:
        return model.encode(texts, batch_size=64)

    result = await run_updates(embed, load_pairs())
    updates = result["by_relation"]["updates"]
    say(f"updates: {updates['named']:.2f} of updates named to the writer")
    return result


def results_dir(root: Path, when: datetime) -> Path:
    """`root/<YYYY-MM-DD>`, or `root/<YYYY-MM-DD>-<HHMMSS>` when that day already has one."""
    day = root / when.strftime("%Y-%m-%d")
    return day if not day.exists() else root / when.strftime("%Y-%m-%d-%H%M%S")


async def run_eval(
    target: EvalTarget,
    options: EvalOptions,
    progress: Callable[[str], None] | None = None,
) -> tuple[Results, Path]:
    """Run the chosen sets and write the report; (results, report path)."""
    say = progress or (lambda message: print(message, file=sys.stderr, flush=True))
    started_at = datetime.now(UTC)
    started = time.perf_counter()
    sets: dict[str, Any] = {}
    if "thesis" in options.sets:
        files = options.thesis_files or (
            *(options.data_dir / f for f in THESIS_FILES),
            *sorted(OWN_THESIS_DIR.glob("*.json")),
        )
        sets["thesis"] = {}
        for file in files:
            thesis = load_thesis_set(
                _need(file, "thesis set"), extra_queries=nothing_stored_files(file)
            )
            say(f"thesis {thesis.name}: {len(thesis.drawers)} drawers, {len(thesis.queries)} asks")
            sets["thesis"][file.stem] = await run_thesis(
                target, thesis, concurrency=options.concurrency, progress=say
            )
    if "supersession" in options.sets:
        sets["supersession"] = {}
        for file in options.supersession_files or sorted(SUPERSESSION_DIR.glob("*.json")):
            scenario = load_supersession_set(file)
            say(f"supersession {scenario.name}: {len(scenario.links)} links")
            sets["supersession"][file.stem] = await run_supersession(
                target, scenario, concurrency=options.concurrency, progress=say
            )
    if "updates" in options.sets:
        sets["updates"] = await _run_updates(say)
    if "scifact" in options.sets:
        beir = load_beir(_need(options.data_dir / "scifact", "BEIR SciFact"))
        subset = False
        if options.quick:
            beir, subset = beir.subset(QUICK_SCIFACT_QUERIES, QUICK_SCIFACT_DISTRACTORS), True
        elif options.scifact_queries:
            beir = beir.subset(options.scifact_queries, len(beir.corpus))
            subset = True
        say(f"scifact: {len(beir.corpus)} abstracts, {len(beir.queries)} queries")
        sets["scifact"] = await run_scifact(
            target, beir, subset=subset, concurrency=options.concurrency, progress=say
        )
    if "locomo" in options.sets:
        conversations = load_locomo(_need(options.data_dir / "locomo" / "locomo10.json", "LoCoMo"))
        questions = None
        if options.quick:
            conversations = conversations[:QUICK_LOCOMO_CONVERSATIONS]
            questions = QUICK_LOCOMO_QUESTIONS
        elif options.locomo_conversations:
            conversations = conversations[: options.locomo_conversations]
        say(f"locomo: {len(conversations)} conversations")
        sets["locomo"] = await run_locomo(
            target,
            conversations,
            questions_per_conversation=questions,
            concurrency=options.concurrency,
            authored=options.locomo_authored,
            progress=say,
        )
    if "composer" in options.sets:
        sets["composer"] = await _run_composer(options.composer_files, say)
    results: Results = {
        "version": 1,
        "started_at": started_at.isoformat(),
        "finished_at": datetime.now(UTC).isoformat(),
        "wall_s": round(time.perf_counter() - started, 2),
        "target": target.description,
        "quick": options.quick,
        "machine": _machine(),
        "sets": sets,
    }
    compare_lines = None
    if options.compare_with is not None:
        previous = json.loads(options.compare_with.read_text())
        compare_lines = compare(results, previous)
        print("\n".join(compare_lines))
    directory = results_dir(options.out_root, started_at)
    report = write_report(results, directory, compare_lines)
    return results, report
