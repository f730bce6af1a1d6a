"""Drawers through the authoring tier and search over REST: the issue table's body and answer
fields, batch, context packs, recording a retrieval, JSONL export/import, and errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.gateway.conftest import Api

FACTS = (
    ("The billing service stores invoices in Postgres with daily backups.", "architecture"),
    ("Deploys to production happen on Tuesdays after the integration suite passes.", "workflow"),
    ("The team decided to drop the legacy XML importer in favour of JSONL.", "decision"),
)


async def _seed(api: Api, store: str) -> list[dict[str, Any]]:
    await api.create_store(store)
    headers = await api.as_tier("write", store)
    drawers = []
    for content, memory_type in FACTS:
        answer = await api.client.post(
            f"/v1/stores/{store}/drawers",
            json={
                "drawer": {
                    "content": content,
                    "memory_type": memory_type,
                    "wing": "projects",
                    "room": "projects/billing",
                    "added_by": "tester",
                },
                "allow_new_wing": True,
                "reason": "seeding the gateway test",
            },
            headers=headers,
        )
        assert answer.status_code == 200, answer.text
        drawers.append(answer.json()["drawer"])
    return drawers


async def test_search_body_and_answer_fields(api: Api, store_name: str) -> None:
    await _seed(api, store_name)
    headers = await api.as_tier("read", store_name)
    answer = await api.client.post(
        f"/v1/stores/{store_name}/search",
        json={
            "query": "where are invoices stored",
            "intent": "",
            "n_results": 2,
            "min_score": 0,
            "wing": "projects",
            "room": "projects/billing",
            "memory_types": ["architecture", "workflow"],
            "include_breakdown": True,
            "include_deprecated": False,
            "as_of": "2030-01-01T00:00:00Z",
        },
        headers=headers,
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert set(body) >= {"intent", "intent_inferred", "results", "dampening"}
    assert body["intent_inferred"] is True
    assert 1 <= len(body["results"]) <= 2
    top = body["results"][0]
    assert top["drawer"]["content"] == FACTS[0][0]
    assert top["drawer"]["memory_type"] in ("architecture", "workflow")
    assert "final_score" in top["breakdown"]
    assert isinstance(top["score"], float)
    assert body["dampening"]["signals"]

    explicit = await api.client.post(
        f"/v1/stores/{store_name}/search",
        json={"query": "deploy days", "intent": "planning", "min_score": 0},
        headers=headers,
    )
    assert explicit.status_code == 200, explicit.text
    assert explicit.json()["intent"] == "planning"
    assert explicit.json()["intent_inferred"] is False


async def test_batch_pack_record_and_reads(api: Api, store_name: str) -> None:
    drawers = await _seed(api, store_name)
    headers = await api.as_tier("read", store_name)
    batch = await api.client.post(
        f"/v1/stores/{store_name}/search:batch",
        json={"searches": [{"query": "invoices", "min_score": 0}, {"query": "deploys"}]},
        headers=headers,
    )
    assert batch.status_code == 200, batch.text
    assert len(batch.json()["responses"]) == 2

    pack = await api.client.post(
        f"/v1/stores/{store_name}/context-pack",
        json={"query": "how does billing work", "min_score": 0},
        headers=headers,
    )
    assert pack.status_code == 200, pack.text
    assert pack.json()["items"] and pack.json()["text"]

    drawer_id = drawers[0]["id"]
    recorded = await api.client.post(
        f"/v1/stores/{store_name}/drawers/{drawer_id}:record-retrieval",
        json={"query": "invoices"},
        headers=headers,
    )
    assert recorded.status_code == 200, recorded.text
    assert recorded.json()["drawers"][0]["id"] == drawer_id
    assert recorded.json()["drawers"][0]["retrieval_count"] == 1

    got = await api.client.get(f"/v1/stores/{store_name}/drawers/{drawer_id}", headers=headers)
    assert got.status_code == 200 and got.json()["id"] == drawer_id
    listed = await api.client.get(
        f"/v1/stores/{store_name}/drawers",
        params={"memory_types": ["decision"], "include_facets": "true", "page_size": 10},
        headers=headers,
    )
    assert listed.status_code == 200, listed.text
    assert [d["memory_type"] for d in listed.json()["drawers"]] == ["decision"]
    assert listed.json()["facets"]["wings"][0]["wing"] == "projects"
    provenance = await api.client.get(
        f"/v1/stores/{store_name}/drawers/{drawer_id}/provenance", headers=headers
    )
    assert provenance.status_code == 200, provenance.text
    assert provenance.json()["entries"][0]["action"] == "created"


async def test_a_read_token_cannot_raise_a_drawer_it_was_not_shown(
    api: Api, store_name: str
) -> None:
    """Recording a use is feedback, not a lever: without a search that returned the drawer to
    this token, and beyond one record per such search, it is refused and salience stays."""
    drawers = await _seed(api, store_name)
    reader = await api.as_tier("read", store_name)
    target = drawers[-1]["id"]
    record = f"/v1/stores/{store_name}/drawers/{target}:record-retrieval"
    for _ in range(3):
        refused = await api.client.post(record, json={}, headers=reader)
        assert refused.status_code == 200, refused.text
        assert refused.json()["drawers"] == [], refused.json()
        assert refused.json()["refused"][0]["drawer_id"] == target
    shown = await api.client.post(
        f"/v1/stores/{store_name}/search",
        json={"query": "legacy XML importer", "min_score": -1, "n_results": 10},
        headers=reader,
    )
    assert target in [hit["drawer"]["id"] for hit in shown.json()["results"]]
    counted = await api.client.post(record, json={}, headers=reader)
    twice = await api.client.post(record, json={}, headers=reader)
    assert counted.json()["drawers"][0]["retrieval_count"] == 1, counted.json()
    assert "already recorded" in twice.json()["refused"][0]["reason"], twice.json()


async def test_update_delete_and_tier_rules_of_authoring(api: Api, store_name: str) -> None:
    drawers = await _seed(api, store_name)
    drawer_id = drawers[1]["id"]
    write = await api.as_tier("write", store_name)
    updated = await api.client.patch(
        f"/v1/stores/{store_name}/drawers/{drawer_id}",
        json={"topic": "release cadence", "reason": "tagging"},
        headers=write,
    )
    assert updated.status_code == 200, updated.text
    assert updated.json()["drawer"]["topic"] == "release cadence"
    pinned = await api.client.patch(
        f"/v1/stores/{store_name}/drawers/{drawer_id}",
        json={"pin_status": "PIN_STATUS_PINNED", "reason": "authority"},
        headers=write,
    )
    assert pinned.status_code == 403, pinned.text  # the tier's own rule: only admin pins
    deleted = await api.client.delete(
        f"/v1/stores/{store_name}/drawers/{drawer_id}",
        params={"reason": "obsolete"},
        headers=write,
    )
    assert deleted.status_code == 200, deleted.text
    gone = await api.client.get(f"/v1/stores/{store_name}/drawers/{drawer_id}", headers=write)
    assert gone.status_code == 404


async def test_export_and_import_jsonl(api: Api, store_name: str) -> None:
    await _seed(api, store_name)
    exported = await api.client.get(f"/v1/stores/{store_name}/drawers:export", headers=api.admin)
    assert exported.status_code == 200, exported.text
    assert exported.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in exported.text.splitlines() if line.strip()]
    assert sorted(line["content"] for line in lines) == sorted(c for c, _ in FACTS)

    target = store_name + "-copy"
    await api.create_store(target)
    imported = await api.client.post(
        f"/v1/stores/{target}/drawers:import",
        content=exported.content,
        headers={**api.admin, "content-type": "application/x-ndjson"},
    )
    assert imported.status_code == 200, imported.text
    assert imported.json()["imported"] == len(FACTS)
    stats = await api.client.get(f"/v1/stores/{target}/stats", headers=api.admin)
    assert int(stats.json()["drawers"]) == len(FACTS)

    write = await api.as_tier("write")
    refused = await api.client.get(f"/v1/stores/{store_name}/drawers:export", headers=write)
    assert refused.status_code == 403

    garbage = b'{"id": "x-1", "content": ""}\nnot json at all\n'
    rejected = await api.client.post(
        f"/v1/stores/{target}/drawers:import",
        content=garbage,
        headers={**api.admin, "content-type": "application/x-ndjson"},
    )
    assert rejected.status_code == 422, "an import that writes nothing is not a success"
    message = rejected.json()["error"]["message"]
    assert "nothing was imported (2 bad lines" in message and "line 2:" in message, message
    stats = await api.client.get(f"/v1/stores/{target}/stats", headers=api.admin)
    assert int(stats.json()["drawers"]) == len(FACTS), "a refused import changed the store"


@pytest.mark.parametrize(
    "query", ['"unbalanced', "invoices AND OR", "NEAR(a b", "col:umn*", "(((", "^-*"]
)
async def test_fts5_syntax_in_a_query_is_harmless(api: Api, query: str) -> None:
    store = "gw-fts5-syntax"
    if (await api.client.get(f"/v1/stores/{store}", headers=api.admin)).status_code == 404:
        await _seed(api, store)
    answer = await api.client.post(
        f"/v1/stores/{store}/search", json={"query": query}, headers=api.admin
    )
    assert answer.status_code == 200, answer.text
    raw = await api.client.post(
        f"/v1/stores/{store}/raw/search", json={"query": query, "hybrid": True}, headers=api.admin
    )
    assert raw.status_code == 200, raw.text
