"""`engram eval --in-process`: the tiers started inside the eval process, the tiny datasets,
every set but LoCoMo's authored mode, throw-away stores dropped, temporary data removed."""

from __future__ import annotations

from pathlib import Path

import pytest
from engram.v1 import authoring_pb2

from services.evaluation.composer import COMPOSER_DIR
from services.evaluation.inprocess import InProcessTarget
from services.evaluation.run import EvalOptions, run_eval
from services.evaluation.target import EvalTargetError
from tests.evaluation.tiny import write_tiny_data


@pytest.mark.slow
async def test_tiny_eval_in_process_scores_every_set(tmp_path: Path) -> None:
    data = write_tiny_data(tmp_path / "data")
    target = await InProcessTarget().start()
    try:
        options = EvalOptions(
            data_dir=data,
            thesis_files=(data / "tiny_thesis.json",),
            supersession_files=(data / "tiny_supersession.json",),
            out_root=tmp_path / "out",
            locomo_authored=False,
            composer_files=(COMPOSER_DIR / "default_b.json",),
        )
        results, report = await run_eval(target, options, progress=lambda _: None)
        with pytest.raises(EvalTargetError, match="authoring tier"):
            await target.compose("any", authoring_pb2.ComposeRequest())
    finally:
        await target.aclose()
    composer = results["sets"]["composer"]["files"]["default_b"]
    assert composer["sessions"] == 12 and composer["parse_problems"] == 0, composer
    assert "Composer sets" in report.read_text()
    thesis = results["sets"]["thesis"]["tiny_thesis"]["rankers"]
    assert thesis["full"]["silence_accuracy"] == 1.0, thesis["full"]
    assert thesis["full"]["right_at_1"] == 1.0, "the live decision wins every topical query"
    superseded = results["sets"]["supersession"]["tiny_supersession"]["modes"]
    assert superseded["links_off"]["given"]["current_stale_shown"] == 1.0, superseded
    on = superseded["links_on"]["given"]
    assert (on["current_right_at_1"], on["current_stale_shown"]) == (1.0, 0.0), on
    assert on["history_chain_recall_at_5"] == 1.0, "history still reaches the whole chain"
    assert "Supersession scenarios" in report.read_text()
    updates = results["sets"]["updates"]["by_relation"]
    assert updates["updates"]["n"] == 100 and 0.0 <= updates["updates"]["named"] <= 1.0
    scifact = results["sets"]["scifact"]
    assert scifact["full_vs_hybrid"]["identical_top100"] == 3
    locomo = results["sets"]["locomo"]
    assert "authored" not in locomo and locomo["modes"]["hybrid"]["overall"]["n"] == 3
    assert report.exists()
    assert target.description.startswith("in-process")
