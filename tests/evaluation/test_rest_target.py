"""`engram eval` through `ClientTarget.rest` against the real gateway app (ASGI transport) over the
real tiers: the same tiny datasets as the gRPC end-to-end test, every set, report written."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.evaluation.run import EvalOptions, run_eval
from services.evaluation.target import ClientTarget, EvalTargetError
from tests.evaluation.tiny import write_tiny_data
from tests.gateway.conftest import ADMIN_TOKEN, Api, api, tiers  # noqa: F401 (fixtures)

# The sets asked of the target (the composer sets run in-process whatever the target).
TARGET_SETS = ("thesis", "supersession", "scifact", "locomo")


@pytest.mark.slow
async def test_tiny_eval_through_rest_matches_the_contract(
    tmp_path: Path,
    api: Api,  # noqa: F811
) -> None:
    data = write_tiny_data(tmp_path / "data")
    target = ClientTarget.rest("http://gateway", ADMIN_TOKEN, client=api.client)
    options = EvalOptions(
        sets=TARGET_SETS,
        data_dir=data,
        thesis_files=(data / "tiny_thesis.json",),
        supersession_files=(data / "tiny_supersession.json",),
        out_root=tmp_path / "out",
    )
    results, report = await run_eval(target, options, progress=lambda _: None)
    assert results["target"] == "REST gateway http://gateway"
    assert results["sets"]["thesis"]["tiny_thesis"]["rankers"]["full"]["silence_accuracy"] == 1.0
    linked = results["sets"]["supersession"]["tiny_supersession"]["modes"]["links_on"]["given"]
    assert linked["current_stale_shown"] == 0.0, f"links made through this face bind: {linked}"
    scifact = results["sets"]["scifact"]
    assert scifact["full_vs_hybrid"]["identical_top100"] == 3
    assert all(s["recall_at_100"] == 1.0 for s in scifact["rankers"].values())
    locomo = results["sets"]["locomo"]["modes"]["hybrid"]["overall"]
    assert locomo["turn_recall_at_10"] == 1.0 and locomo["n"] == 3
    authored = results["sets"]["locomo"]["authored"]
    assert authored["drawers_authored"] >= 1, f"compose through REST wrote nothing: {authored}"
    assert report.exists()
    stores = await api.client.get("/v1/stores", headers=api.admin)
    assert not [s for s in stores.json()["stores"] if s["spec"]["name"].startswith("eval-")], (
        "every throw-away store is deleted"
    )


async def test_rest_errors_name_the_operation_and_the_code(api: Api) -> None:  # noqa: F811
    target = ClientTarget.rest("http://gateway", "egm_not-a-token", client=api.client)
    with pytest.raises(EvalTargetError, match=r"delete_store over rest refused: unauthenticated"):
        await target.drop_store("eval-missing")
