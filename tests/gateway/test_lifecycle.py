"""The lifecycle over REST, as an operator drives it: a session start, a consolidation proposed,
applied and undone, each route and its tier from the operation table."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from services.runtime.embedding import RECORD
from tests.gateway.conftest import Api, Tiers

SAME = (
    "The Architect decided that the API returns 404 for missing drawers.",
    "For a missing drawer the API returns a 404, as the Architect decided.",
)


async def _write(api: Api, store: str, content: str) -> dict[str, Any]:
    answer = await api.client.post(
        f"/v1/stores/{store}/drawers",
        json={
            "drawer": {
                "content": content,
                "memory_type": "decision",
                "wing": "projects",
                "room": "projects/api",
            },
            "allow_new_wing": True,
        },
        headers=await api.as_tier("write", store),
    )
    assert answer.status_code == 200, answer.text
    drawer: dict[str, Any] = answer.json()["drawer"]
    return drawer


async def _job(api: Api, store: str, body: dict[str, Any]) -> dict[str, Any]:
    started = await api.client.post(
        f"/v1/stores/{store}/consolidate", json=body, headers=await api.as_tier("write", store)
    )
    assert started.status_code == 202, started.text
    job = await api.wait_job(started.json()["id"])
    assert job["state"] == "JOB_STATE_DONE", job
    result: dict[str, Any] = job["consolidate"]
    return result


async def test_prime_and_a_consolidation_round_trip_over_rest(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    first, second = [await _write(api, store_name, text) for text in SAME]
    read = await api.as_tier("read", store_name)

    primed = await api.client.post(f"/v1/stores/{store_name}/prime", json={}, headers=read)
    assert primed.status_code == 200, primed.text
    assert {i["drawer_id"] for i in primed.json()["items"]} <= {first["id"], second["id"]}
    assert primed.json()["text"], "the rendered recollection"

    dry = await _job(api, store_name, {})
    assert dry["dry_run"] is True
    (proposal,) = dry["proposals"]
    assert set(proposal["source_ids"]) == {first["id"], second["id"]} and proposal["mergeable"]

    applied = await _job(api, store_name, {"apply": True, "proposal_ids": [proposal["id"]]})
    assert applied["applied"] == 1
    listed = await api.client.get(f"/v1/stores/{store_name}/consolidations", headers=read)
    (consolidation,) = listed.json()["consolidations"]
    found = await api.client.post(
        f"/v1/stores/{store_name}/search",
        json={"query": "what does the API return for a missing drawer?"},
        headers=read,
    )
    assert [h["drawer"]["id"] for h in found.json()["results"]][:1] == [consolidation["merged_id"]]

    undo = f"/v1/stores/{store_name}/consolidations/{consolidation['id']}:undo"
    refused = await api.client.post(undo, json={}, headers=await api.as_tier("write", store_name))
    assert refused.status_code == 403, "undo is an admin's act"
    undone = await api.client.post(undo, json={"reason": "merged too eagerly"}, headers=api.admin)
    assert undone.status_code == 200 and undone.json()["undone_at"], undone.text
    again = await api.client.post(
        f"/v1/stores/{store_name}/search",
        json={"query": "what does the API return for a missing drawer?", "min_score": -1},
        headers=read,
    )
    ids = {h["drawer"]["id"] for h in again.json()["results"]}
    assert {first["id"], second["id"]} <= ids and consolidation["merged_id"] not in ids

    bad = await api.client.post(
        f"/v1/stores/{store_name}/consolidate",
        json={"min_similarity": 0.5},
        headers=await api.as_tier("write", store_name),
    )
    assert bad.status_code == 422 and "min_similarity" in bad.json()["error"]["message"]


async def test_a_store_of_another_model_is_shown_with_what_to_do_and_reembedded(
    api: Api, tiers: Tiers, store_name: str
) -> None:
    await api.create_store(store_name)
    assert tiers.retrieval_root is not None
    folder = tiers.retrieval_root / store_name
    folder.mkdir(parents=True)
    (folder / RECORD).write_text(
        json.dumps({"model": "bge-small-en", "fingerprint": "0" * 32, "dimension": 384})
    )
    shown = await api.client.get(f"/v1/stores/{store_name}", headers=api.admin)
    assert shown.status_code == 200, "the registry entry is still shown"
    assert "bge-small-en" in shown.json()["attention"] and "/reembed" in shown.json()["attention"]
    listed = await api.client.get("/v1/stores", headers=api.admin)
    assert listed.status_code == 200, "one refused store does not break the listing"
    refused = await api.client.post(
        f"/v1/stores/{store_name}/search", json={"query": "anything"}, headers=api.admin
    )
    assert refused.status_code == 412, refused.text

    not_admin = await api.client.post(
        f"/v1/stores/{store_name}/reembed", headers=await api.as_tier("write", store_name)
    )
    assert not_admin.status_code == 403
    began = await api.client.post(f"/v1/stores/{store_name}/reembed", headers=api.admin)
    assert began.status_code == 200, began.text
    assert began.json()["drawers"]["state"] in ("running", "done"), began.text
    raw_job = await api.wait_job(began.json()["raw"]["id"])
    assert raw_job["state"] == "JOB_STATE_DONE", raw_job
    for _ in range(100):
        stats = await api.client.get(f"/v1/stores/{store_name}/stats", headers=api.admin)
        if stats.json().get("reembed", {}).get("state") == "done":
            break
        await asyncio.sleep(0.05)
    assert stats.json()["reembed"]["state"] == "done", stats.text
    shown = await api.client.get(f"/v1/stores/{store_name}", headers=api.admin)
    assert shown.json()["attention"] == ""
