"""The report renders (markdown, JSON, PNG charts) and `--compare` prints the right deltas."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from services.evaluation.report import compare, flatten, render_markdown, write_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _thesis_ranker(right: float) -> dict[str, Any]:
    return {
        "right_at_1": right,
        "mrr": 0.75,
        "ndcg_at_5": 0.5,
        "topical_n": 4,
        "silence_accuracy": 1.0,
        "silence_n": 1,
        "nothing_stored_silence": 0.5,
        "nothing_stored_n": 2,
        "answered_at_default_floor": 0.75,
        "narrative_set_recall_at_5": math.nan,
        "narrative_n": 0,
        "by_kind": {
            "authority": {"right_at_1": right, "mrr": 0.75, "n": 4},
            "silence": {"silence_correct": 1.0, "n": 1},
            "nothing_stored": {"silence_correct": 0.5, "n": 2},
        },
    }


def results(full_right: float = 0.5, dense_ndcg: float = 0.6) -> dict[str, Any]:
    return {
        "version": 1,
        "started_at": "2026-07-01T10:00:00+00:00",
        "finished_at": "2026-07-01T10:05:00+00:00",
        "wall_s": 300.0,
        "target": "test target",
        "quick": False,
        "machine": {"cpu": "Test CPU", "cores": 2, "memory_gib": 8.0, "gpu": None},
        "sets": {
            "thesis": {
                "dev_default": {
                    "name": "dev_default",
                    "deployment": "default",
                    "drawers": 9,
                    "queries": 5,
                    "load_s": 1.0,
                    "wall_s": 2.0,
                    "rankers": {
                        "cosine": _thesis_ranker(0.25),
                        "full": _thesis_ranker(full_right),
                    },
                }
            },
            "scifact": {
                "corpus": 10,
                "queries": 3,
                "subset": True,
                "load_s": 1.0,
                "wall_s": 3.0,
                "rankers": {
                    "keyword": {
                        "ndcg_at_10": 0.7,
                        "recall_at_100": 0.9,
                        "mrr_at_10": 0.6,
                        "search_s": 1.0,
                    },
                    "dense": {
                        "ndcg_at_10": dense_ndcg,
                        "recall_at_100": 0.9,
                        "mrr_at_10": 0.5,
                        "search_s": 1.0,
                    },
                },
                "full_vs_hybrid": {"queries": 3, "identical_top100": 3, "identical_top10": 3},
                "published": {"BM25": {"ndcg_at_10": 0.665, "source": "BEIR"}},
            },
            "locomo": {
                "conversations": 1,
                "sessions": 2,
                "turns": 8,
                "questions": 3,
                "skipped_questions": 1,
                "wall_s": 1.0,
                "note": "retrieval only, no LLM-judged QA",
                "modes": {
                    "dense": {
                        "overall": {
                            "turn_recall_at_5": 0.5,
                            "turn_recall_at_10": 1.0,
                            "session_recall_at_5": 1.0,
                            "session_recall_at_10": 1.0,
                            "n": 3,
                        },
                        "by_category": {},
                    }
                },
            },
        },
    }


def test_report_writes_markdown_json_and_pngs(tmp_path: Path) -> None:
    data = results()
    report = write_report(data, tmp_path)
    text = report.read_text()
    assert "| full | 0.500 | 0.750 | 0.500 | 1.000 | 0.500 | 0.750 | — |" in text, text
    assert "| nothing_stored | 0.500 | 0.500 | 2 |" in text, text
    assert "identical top-100 ranking on **3 of 3** queries" in text
    assert "| published BM25 | 0.665 |" in text
    assert "Retrieval only, no LLM-judged QA." in text
    assert "| all | 0.500 | 1.000 | 1.000 | 1.000 | 3 |" in text
    stored = json.loads((tmp_path / "results.json").read_text())
    assert stored["sets"]["scifact"]["rankers"]["keyword"]["ndcg_at_10"] == 0.7
    assert sorted(stored["charts"]) == ["locomo.png", "scifact.png", "thesis-dev-default.png"]
    for chart in stored["charts"]:
        assert (tmp_path / chart).read_bytes().startswith(PNG_MAGIC), chart
        assert f"![{chart}]({chart})" in text


def test_compare_lists_only_changed_quality_metrics_with_deltas() -> None:
    before = results(full_right=0.5, dense_ndcg=0.6)
    now = results(full_right=0.75, dense_ndcg=0.55)
    now["sets"]["scifact"]["wall_s"] = 99.0  # a timing: left out by default
    lines = compare(now, before)
    table = "\n".join(lines)
    assert "| thesis/dev_default/rankers/full/right_at_1 | 0.500 | 0.750 | +0.250 |" in table
    assert "| thesis/dev_default/rankers/full/by_kind/authority/right_at_1 | 0.500 | 0.750 |" in (
        table
    )
    assert "| scifact/rankers/dense/ndcg_at_10 | 0.600 | 0.550 | -0.050 |" in table
    assert "wall_s" not in table and "cosine" not in table, "unchanged and timings stay out"
    assert len(lines) == 2 + 3, f"header, rule and three changed metrics: {table}"
    assert "wall_s" in "\n".join(compare(now, before, include_timings=True))


def test_compare_says_when_nothing_changed_and_what_went_missing() -> None:
    before = results()
    now = results()
    del now["sets"]["locomo"]
    lines = compare(now, before)
    assert lines[0] == "No metric present in both runs changed."
    assert "were not measured now" in lines[-1]


def test_flatten_skips_published_figures_and_flags() -> None:
    flat = flatten(results())
    assert "scifact/rankers/keyword/ndcg_at_10" in flat
    assert not any("published" in key for key in flat)
    assert "scifact/subset" not in flat, "booleans are not metrics"


def test_markdown_names_the_machine() -> None:
    text = render_markdown(results())
    assert "Test CPU, 2 cores, 8.0 GiB, GPU none" in text


def test_locomo_authored_drawers_are_labelled_with_their_ceiling(tmp_path: Path) -> None:
    data = results()
    locomo = data["sets"]["locomo"]
    locomo["modes"]["authored"] = locomo["modes"]["dense"]
    locomo["authored"] = {
        "invoker": "offline extractive",
        "drawers_authored": 20,
        "drawers_surfaced": 12,
        "evidence_turns": 4,
        "evidence_turns_in_a_drawer": 1,
    }
    text = write_report(data, tmp_path).read_text()
    assert "search_raw, dense:" in text
    assert "search over drawers composed from the sessions (full scoring" in text
    assert "Compose wrote 20 drawers, of which the searches surfaced 12; 1 of 4" in text
