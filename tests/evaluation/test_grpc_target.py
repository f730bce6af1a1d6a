"""`engram eval` end to end through `ClientTarget.grpc`, the gateway's public gRPC API, over the
real tiers (real gRPC, the real model): a tiny dataset of every kind, drawers authored from the
LoCoMo sessions, the report written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from engram.v1 import gateway_pb2

from services.evaluation.run import EvalOptions, run_eval
from services.evaluation.target import ClientTarget, EvalTargetError
from tests.evaluation.tiny import write_tiny_data
from tests.gateway.conftest import ADMIN_TOKEN, Api, api, tiers  # noqa: F401 (fixtures)

# The sets asked of the target (the composer sets run in-process whatever the target).
TARGET_SETS = ("thesis", "supersession", "scifact", "locomo")

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
async def test_tiny_eval_through_public_grpc_writes_a_report(
    tmp_path: Path,
    api: Api,  # noqa: F811
) -> None:
    data = write_tiny_data(tmp_path / "data")
    target = ClientTarget.grpc(f"127.0.0.1:{api.app.state.grpc_port}", ADMIN_TOKEN)
    options = EvalOptions(
        sets=TARGET_SETS,
        data_dir=data,
        thesis_files=(data / "tiny_thesis.json",),
        supersession_files=(data / "tiny_supersession.json",),
        out_root=tmp_path / "results",
    )
    try:
        results, report = await run_eval(target, options, progress=lambda _: None)
    finally:
        await target.aclose()

    linked = results["sets"]["supersession"]["tiny_supersession"]["modes"]["links_on"]["given"]
    assert linked["current_stale_shown"] == 0.0, f"links made through this face bind: {linked}"
    thesis = results["sets"]["thesis"]["tiny_thesis"]
    assert thesis["drawers"] == 10 and thesis["queries"] == 5
    assert set(thesis["rankers"]) == {"cosine", "hybrid", "full", "full_inferred"}
    assert 0.0 <= thesis["rankers"]["full_inferred"]["intent_accuracy"] <= 1.0
    full = thesis["rankers"]["full"]
    assert full["topical_n"] == 3 and full["silence_n"] == 1 and full["narrative_n"] == 1
    assert full["silence_accuracy"] == 1.0, "the sourdough question must come back empty"
    for stats in thesis["rankers"].values():
        assert 0.0 <= stats["right_at_1"] <= 1.0 and 0.0 < stats["mrr"] <= 1.0

    scifact = results["sets"]["scifact"]
    assert scifact["corpus"] == 10 and scifact["queries"] == 3
    assert set(scifact["rankers"]) == {"keyword", "dense", "hybrid", "full"}
    for name, stats in scifact["rankers"].items():
        assert stats["recall_at_100"] == 1.0, f"{name}: ten abstracts, a hundred answers"
        assert stats["ndcg_at_10"] > 0.5, f"{name}: each claim names its abstract's words"
    same = scifact["full_vs_hybrid"]
    assert same["identical_top100"] == same["queries"] == 3, (
        "uniform metadata: dampening must leave full scoring ranking exactly like hybrid"
    )

    locomo = results["sets"]["locomo"]
    assert locomo["questions"] == 3 and locomo["skipped_questions"] == 1
    assert locomo["note"] == "retrieval only, no LLM-judged QA"
    assert set(locomo["modes"]) == {"dense", "hybrid", "authored"}
    for mode in ("dense", "hybrid"):
        overall = locomo["modes"][mode]["overall"]
        assert overall["turn_recall_at_10"] == 1.0, "eight turns: ten results hold them all"
        assert overall["session_recall_at_10"] == 1.0
        assert 0.0 < overall["turn_recall_at_5"] <= 1.0

    authored = locomo["modes"]["authored"]
    counts = locomo["authored"]
    assert counts["drawers_authored"] >= counts["drawers_surfaced"] >= 1, counts
    assert 1 <= counts["evidence_turns_in_a_drawer"] <= counts["evidence_turns"] == 3, counts
    assert authored["by_category"]["temporal"]["turn_recall_at_10"] == 1.0, (
        "the pottery question should surface a drawer made from D2:3 (Ana's blue bowl); "
        f"got {authored}"
    )
    assert report.name == "report.md" and report.exists()
    text = report.read_text()
    assert "## BEIR SciFact" in text and "Retrieval only, no LLM-judged QA." in text
    assert json.loads((report.parent / "results.json").read_text())["sets"].keys() == set(
        TARGET_SETS
    )
    for chart in results["charts"]:
        assert (report.parent / chart).read_bytes().startswith(PNG_MAGIC), chart


async def test_grpc_target_with_a_bad_token_says_so(api: Api) -> None:  # noqa: F811
    target = ClientTarget.grpc(f"127.0.0.1:{api.app.state.grpc_port}", "egm_not-a-token")
    try:
        with pytest.raises(
            EvalTargetError, match="create_store over grpc refused: unauthenticated"
        ):
            await target.create_store(gateway_pb2.StoreSpec(name="eval-never"))
    finally:
        await target.aclose()
