"""The evaluation report: `results.json` (everything measured), `report.md` (the tables a
person reads) and PNG charts (matplotlib, Agg backend), plus the deltas against a previous
`results.json` (`--compare`). Pure rendering: results in, files and text out."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from services.evaluation.thesis import UNANSWERABLE_KINDS

Results = dict[str, Any]

THESIS_COLUMNS = (
    ("right_at_1", "right@1"),
    ("mrr", "MRR"),
    ("ndcg_at_5", "nDCG@5"),
    ("silence_accuracy", "silence acc."),
    ("nothing_stored_silence", "silence, nothing stored"),
    ("answered_at_default_floor", "answered @ floor"),
    ("narrative_set_recall_at_5", "narrative set R@5"),
    ("narrative_set_recall_at_5_floor", "narrative R@5 @ floor"),
    ("intent_accuracy", "intent acc."),
)
LOCOMO_COLUMNS = (
    ("turn_recall_at_5", "turn R@5"),
    ("turn_recall_at_10", "turn R@10"),
    ("session_recall_at_5", "session R@5"),
    ("session_recall_at_10", "session R@10"),
)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return "—" if math.isnan(value) else f"{value:.3f}"
    if value is None:
        return "—"
    return str(value)


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(c) for c in row) + " |" for row in rows]
    return lines


# ---------------------------------------------------------------- markdown


def _thesis_md(name: str, block: Results) -> list[str]:
    lines = [
        f"### {name} ({block['deployment']}: {block['drawers']} drawers, "
        f"{block['queries']} queries, {block['wall_s']} s)",
        "",
    ]
    rows = [
        [ranker, *(stats.get(key) for key, _ in THESIS_COLUMNS)]
        for ranker, stats in block["rankers"].items()
    ]
    lines += _table(["ranker", *(label for _, label in THESIS_COLUMNS)], rows)
    kinds = sorted({k for stats in block["rankers"].values() for k in stats["by_kind"]})
    lines += [
        "",
        "By query kind (right@1 / MRR; unanswerable kinds: silence accuracy; "
        "narrative: set recall@5):",
        "",
    ]
    kind_rows = []
    for kind in kinds:
        row: list[Any] = [kind]
        n = 0
        for stats in block["rankers"].values():
            cell = stats["by_kind"].get(kind, {})
            n = int(cell.get("n", 0))
            if kind in UNANSWERABLE_KINDS:
                row.append(_fmt(cell.get("silence_correct")))
            elif kind == "narrative":
                row.append(_fmt(cell.get("set_recall_at_5")))
            else:
                row.append(f"{_fmt(cell.get('right_at_1'))} / {_fmt(cell.get('mrr'))}")
        kind_rows.append([*row, n])
    lines += _table(["kind", *block["rankers"], "n"], kind_rows)
    return [*lines, ""]


def _scifact_md(block: Results) -> list[str]:
    scope = "a subset (not comparable to BEIR)" if block["subset"] else "the full test split"
    lines = [
        f"{block['corpus']} abstracts, {block['queries']} test queries ({scope}); "
        f"load {block['load_s']} s, total {block['wall_s']} s. Uniform metadata: one type, "
        "one room, one author, all active, salience 1.0 at the search instant.",
        "",
    ]
    rows = [
        [ranker, stats["ndcg_at_10"], stats["recall_at_100"], stats["mrr_at_10"], stats["search_s"]]
        for ranker, stats in block["rankers"].items()
    ]
    for name, published in block["published"].items():
        value = published.get("ndcg_at_10")
        rows.append([f"published {name}", value, None, None, None])
    lines += _table(["ranker", "nDCG@10", "Recall@100", "MRR@10", "search s"], rows)
    same = block["full_vs_hybrid"]
    lines += [
        "",
        f"Full scoring vs hybrid under uniform metadata: identical top-100 ranking on "
        f"**{same['identical_top100']} of {same['queries']}** queries "
        f"(identical top-10 on {same['identical_top10']}).",
        "",
        "Published figures: "
        + "; ".join(f"{n}: {p['source']}" for n, p in block["published"].items())
        + ".",
        "",
    ]
    return lines


LOCOMO_MODE_LABELS = {
    "dense": "search_raw, dense",
    "hybrid": "search_raw, hybrid",
    "authored": "search over drawers composed from the sessions (full scoring; a drawer "
    "counts the turns it was made from)",
}


def _locomo_md(block: Results) -> list[str]:
    lines = [
        f"{block['conversations']} conversations, {block['sessions']} sessions, "
        f"{block['turns']} turns, {block['questions']} questions (categories 1–4 with "
        f"evidence; {block['skipped_questions']} skipped), {block['wall_s']} s. "
        f"**{block['note'][:1].upper()}{block['note'][1:]}.**",
        "",
    ]
    for mode, stats in block["modes"].items():
        lines += [f"{LOCOMO_MODE_LABELS.get(mode, f'search_raw, {mode}')}:", ""]
        rows = [["all", *(stats["overall"][k] for k, _ in LOCOMO_COLUMNS), stats["overall"]["n"]]]
        rows += [
            [category, *(cell[k] for k, _ in LOCOMO_COLUMNS), cell["n"]]
            for category, cell in stats["by_category"].items()
        ]
        lines += _table(["category", *(label for _, label in LOCOMO_COLUMNS), "n"], rows)
        lines.append("")
    authored = block.get("authored")
    if authored:
        lines += [
            f"Authored drawers: {authored['invoker']}. Compose wrote "
            f"{authored['drawers_authored']} drawers, of which the searches surfaced "
            f"{authored['drawers_surfaced']}; {authored['evidence_turns_in_a_drawer']} of "
            f"{authored['evidence_turns']} evidence turns are a source of some drawer "
            "(the ceiling of turn recall through drawers: what extraction kept).",
            "",
        ]
    return lines


COMPOSER_COLUMNS = (
    ("coverage", "coverage"),
    ("precision", "precision"),
    ("type_accuracy", "type acc."),
    ("canonical_recall", "canonical R"),
    ("canonical_precision", "canonical P"),
    ("attribution", "attribution"),
    ("clean_text", "clean text"),
    ("signature_verbatim", "signature verbatim"),
)


def _composer_md(block: Results) -> list[str]:
    lines = [
        f"Invoker: {block['invoker']}. Each expected drawer is paired with a draft citing one "
        "of its turns (eval/sets/composer, services/evaluation/composer.py).",
        "",
    ]
    rows = [
        [name, stats["sessions"], stats["expected_drawers"], stats["drafts"],
         *(stats[key] for key, _ in COMPOSER_COLUMNS)]
        for name, stats in block["files"].items()
    ]  # fmt: skip
    header = ["set", "sessions", "expected", "drafts", *(label for _, label in COMPOSER_COLUMNS)]
    return [*lines, *_table(header, rows), ""]


SUPERSESSION_COLUMNS = (
    ("current_right_at_1", "current right@1"),
    ("current_right_at_1_shown", "… as shown"),
    ("current_stale_shown", "stale shown (top 5)"),
    ("current_stale_above", "stale above current"),
    ("history_chain_recall_at_5", "history chain recall@5"),
    ("stable_right_at_1", "stable right@1"),
    ("stable_right_at_1_shown", "… as shown"),
)


def _supersession_md(name: str, block: Results) -> list[str]:
    lines = [
        f"### {name}: {block['drawers']} drawers, {block['links']} supersedes links, "
        f"{block['queries']} queries",
        "",
    ]
    rows = [
        [mode, intent, *(summary[key] for key, _ in SUPERSESSION_COLUMNS)]
        for mode, by_intent in block["modes"].items()
        for intent, summary in by_intent.items()
    ]
    header = ["links", "intent", *(label for _, label in SUPERSESSION_COLUMNS)]
    return [*lines, *_table(header, rows), ""]


def _updates_md(block: Results) -> list[str]:
    lines = [
        f"{block['pairs']} pairs (eval/sets/updates); duplicate cosine "
        f"{block['duplicate_similarity']}, related cosine {block['related_similarity']}. "
        "`named`: the write names the old drawer as one it may update (a supersession "
        "candidate); `duplicate`: the write hands the old drawer back.",
        "",
    ]
    rows = [
        [relation, int(r["n"]), r["named"], r["duplicate"], r["stored_silently"]]
        for relation, r in block["by_relation"].items()
    ]
    header = ["relation", "pairs", "named", "duplicate", "stored silently"]
    return [*lines, *_table(header, rows), ""]


def render_markdown(results: Results, compare_lines: list[str] | None = None) -> str:
    machine = results.get("machine", {})
    lines = [
        f"# Engram evaluation — {results['started_at'][:10]}",
        "",
        f"- target: {results['target']}",
        f"- sets: {', '.join(results['sets'])}{' (quick subsets)' if results['quick'] else ''}",
        f"- wall time: {results['wall_s']} s",
        f"- machine (where `engram eval` ran): {machine.get('cpu', '?')}, "
        f"{machine.get('cores', '?')} cores, {machine.get('memory_gib', '?')} GiB, "
        f"GPU {machine.get('gpu') or 'none'}",
        "",
    ]
    sets = results["sets"]
    if "thesis" in sets:
        lines += ["## Thesis sets: decisions over discussion", ""]
        for name, block in sets["thesis"].items():
            lines += _thesis_md(name, block)
    if "supersession" in sets:
        lines += [
            "## Supersession scenarios: the current decision, not the stale one",
            "",
            "Each set is asked without its supersedes links, then with them (full ranker). "
            "`stale shown`: a replaced drawer among the first five results an agent gets; "
            "`stale above current`: ranked above the current decision. right@1 ranks every "
            "candidate (min_score -1); `as shown` is the first result at the store's default "
            "floor, what an agent gets.",
            "",
        ]
        for name, block in sets["supersession"].items():
            lines += _supersession_md(name, block)
    if "updates" in sets:
        lines += ["## Updates: does a write name what it may replace?", ""]
        lines += _updates_md(sets["updates"])
    if "scifact" in sets:
        lines += ["## BEIR SciFact: is scoring working by accident?", ""]
        lines += _scifact_md(sets["scifact"])
    if "locomo" in sets:
        lines += ["## LoCoMo: conversational memory through search_raw", ""]
        lines += _locomo_md(sets["locomo"])
    if "composer" in sets:
        lines += ["## Composer sets: what the offline composer keeps", ""]
        lines += _composer_md(sets["composer"])
    if compare_lines:
        lines += ["## Compared with the previous run", "", *compare_lines, ""]
    charts = results.get("charts", [])
    if charts:
        lines += ["## Charts", "", *(f"![{c}]({c})" for c in charts), ""]
    return "\n".join(lines)


# ---------------------------------------------------------------- charts


def render_charts(results: Results, directory: Path) -> list[str]:
    """PNG charts next to the report; the file names written."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written: list[str] = []
    sets = results["sets"]
    for name, block in sets.get("thesis", {}).items():
        kinds = sorted(
            k
            for k in {k for s in block["rankers"].values() for k in s["by_kind"]}
            if k not in (*UNANSWERABLE_KINDS, "narrative")
        )
        if not kinds:
            continue
        figure, axis = plt.subplots(figsize=(8, 4))
        width = 0.8 / max(1, len(block["rankers"]))
        for index, (ranker, stats) in enumerate(block["rankers"].items()):
            values = [stats["by_kind"].get(k, {}).get("right_at_1", 0.0) for k in kinds]
            axis.bar([i + index * width for i in range(len(kinds))], values, width, label=ranker)
        axis.set_xticks([i + width * (len(block["rankers"]) - 1) / 2 for i in range(len(kinds))])
        axis.set_xticklabels(kinds)
        axis.set_ylim(0, 1)
        axis.set_ylabel("right@1")
        axis.set_title(f"{name}: right@1 by query kind")
        axis.legend()
        file = f"thesis-{_slug(name)}.png"
        figure.tight_layout()
        figure.savefig(directory / file, dpi=100)
        plt.close(figure)
        written.append(file)
    if "scifact" in sets:
        block = sets["scifact"]
        figure, axis = plt.subplots(figsize=(7, 4))
        names = list(block["rankers"])
        axis.bar(names, [block["rankers"][n]["ndcg_at_10"] for n in names], color="tab:blue")
        for (label, published), style in zip(block["published"].items(), ("--", ":"), strict=False):
            if published.get("ndcg_at_10") is not None:
                axis.axhline(
                    published["ndcg_at_10"],
                    linestyle=style,
                    color="gray",
                    label=f"published {label}",
                )
        axis.set_ylim(0, 1)
        axis.set_ylabel("nDCG@10")
        axis.set_title("BEIR SciFact nDCG@10 by ranker")
        axis.legend()
        figure.tight_layout()
        figure.savefig(directory / "scifact.png", dpi=100)
        plt.close(figure)
        written.append("scifact.png")
    if "locomo" in sets:
        block = sets["locomo"]
        figure, axis = plt.subplots(figsize=(8, 4))
        modes = list(block["modes"])
        width = 0.8 / max(1, len(modes))
        labels = [label for _, label in LOCOMO_COLUMNS]
        for index, mode in enumerate(modes):
            values = [block["modes"][mode]["overall"][k] for k, _ in LOCOMO_COLUMNS]
            axis.bar([i + index * width for i in range(len(labels))], values, width, label=mode)
        axis.set_xticks([i + width * (len(modes) - 1) / 2 for i in range(len(labels))])
        axis.set_xticklabels(labels)
        axis.set_ylim(0, 1)
        axis.set_title("LoCoMo evidence recall: search_raw and authored drawers")
        axis.legend()
        figure.tight_layout()
        figure.savefig(directory / "locomo.png", dpi=100)
        plt.close(figure)
        written.append("locomo.png")
    return written


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-") or "set"


# ---------------------------------------------------------------- compare


def flatten(results: Results) -> dict[str, float]:
    """Every numeric metric as `set/.../metric` → value (counts and timings included)."""
    flat: dict[str, float] = {}

    def walk(prefix: str, value: Any) -> Iterator[tuple[str, float]]:
        if isinstance(value, dict):
            for key, inner in value.items():
                if key == "published":
                    continue
                yield from walk(f"{prefix}/{key}" if prefix else str(key), inner)
        elif isinstance(value, bool):
            return
        elif isinstance(value, int | float):
            yield prefix, float(value)

    for key, value in walk("", results.get("sets", {})):
        flat[key] = value
    return flat


# Counts and timings: what a run measured with, not how well it did.
_COUNTS = frozenset(
    {
        "n",
        "topical_n",
        "silence_n",
        "nothing_stored_n",
        "narrative_n",
        "corpus",
        "queries",
        "drawers",
    }
    | {"conversations", "sessions", "turns", "questions", "skipped_questions"}
)
_TIMINGS = frozenset({"wall_s", "load_s", "search_s"})


def compare(current: Results, previous: Results, *, include_timings: bool = False) -> list[str]:
    """A markdown table of the metrics present in both runs whose value changed, with deltas
    (counts left out; timings only with `include_timings`); a line saying so when nothing
    changed."""
    now, before = flatten(current), flatten(previous)
    rows = []
    for key in sorted(now.keys() & before.keys()):
        last = key.rsplit("/", 1)[-1]
        if last in _COUNTS or (last in _TIMINGS and not include_timings):
            continue
        old, new = before[key], now[key]
        if math.isnan(old) and math.isnan(new):
            continue
        delta = new - old
        if abs(delta) < 1e-9:
            continue
        rows.append([key, old, new, f"{delta:+.3f}"])
    only_before = sorted(before.keys() - now.keys())
    lines = (
        _table(["metric", "before", "now", "delta"], rows)
        if rows
        else ["No metric present in both runs changed."]
    )
    if only_before:
        lines += ["", f"{len(only_before)} metrics of the previous run were not measured now."]
    return lines


def write_report(results: Results, directory: Path, compare_lines: list[str] | None = None) -> Path:
    """results.json, the charts and report.md in `directory`; the report's path."""
    directory.mkdir(parents=True, exist_ok=True)
    results["charts"] = render_charts(results, directory)
    (directory / "results.json").write_text(json.dumps(results, indent=2, allow_nan=True) + "\n")
    report = directory / "report.md"
    report.write_text(render_markdown(results, compare_lines) + "\n")
    return report
