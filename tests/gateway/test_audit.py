"""The audit log: every write and admin action, on every face, is one event — who, what, which
store, how it ended — and no event carries drawer text; reads leave none; an admin reads it
through the API, a store-scoped admin only for its stores."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from tests.gateway.conftest import Api

SECRET_TEXT = "The vault combination is written on the blue card."


async def _events(api: Api, headers: dict[str, str], **params: str) -> list[dict[str, object]]:
    answer = await api.client.get("/v1/audit", params=params, headers=headers)
    assert answer.status_code == 200, answer.text
    events: list[dict[str, object]] = answer.json().get("events", [])
    return events


async def test_writes_and_refusals_are_audited_without_their_text(
    api: Api, store_name: str
) -> None:
    await api.create_store(store_name)
    writer = await api.as_tier("write", store_name)
    reader = await api.as_tier("read", store_name)
    draft = {"content": SECRET_TEXT, "memory_type": "decision", "wing": "projects",
             "room": "projects/vault"}  # fmt: skip
    written = await api.client.post(
        f"/v1/stores/{store_name}/drawers",
        json={"drawer": draft, "allow_new_wing": True, "reason": "a secret reason"},
        headers=writer,
    )
    assert written.status_code == 200, written.text
    drawer_id = written.json()["drawer"]["id"]
    searched = await api.client.post(
        f"/v1/stores/{store_name}/search", json={"query": "vault"}, headers=reader
    )
    assert searched.status_code == 200
    refused = await api.client.delete(
        f"/v1/stores/{store_name}/drawers/{drawer_id}", params={"reason": "x"}, headers=reader
    )
    assert refused.status_code == 403

    events = await _events(api, api.admin, store=store_name)
    operations = [(e["operation"], e["outcome"]) for e in events]
    assert ("add_drawer", "ok") in operations, operations
    assert ("create_store", "ok") in operations, operations
    assert not any(e["operation"] == "search" for e in events), "reads are not audited"
    added = next(e for e in events if e["operation"] == "add_drawer")
    assert drawer_id in added["targets"] and added["tier"] == "CALLER_TIER_WRITE", added
    assert datetime.fromisoformat(str(added["at"]).replace("Z", "+00:00")) <= datetime.now(UTC)
    dumped = json.dumps(events)
    assert "vault combination" not in dumped and "secret reason" not in dumped
    denied = next(e for e in events if e["operation"] == "delete_drawer")
    assert denied["outcome"] == "permission_denied" and denied["tier"] == "CALLER_TIER_READ"

    files = sorted((api.settings.state_dir / "audit").glob("*.jsonl"))
    assert files and "vault combination" not in "".join(f.read_text() for f in files)


async def test_the_audit_log_is_for_admins_and_a_scoped_admin_sees_its_stores_only(
    api: Api, store_name: str
) -> None:
    other = f"{store_name}-other"
    await api.create_store(store_name)
    await api.create_store(other)
    writer = await api.client.get("/v1/audit", headers=await api.as_tier("write", store_name))
    assert writer.status_code == 403, writer.text
    scoped = await api.as_tier("admin", store_name)
    seen = {e["store"] for e in await _events(api, scoped)}
    assert other not in seen and "" not in seen, seen
    outside = await api.client.get("/v1/audit", params={"store": other}, headers=scoped)
    assert outside.status_code == 403, outside.text
    bad = await api.client.get("/v1/audit", params={"since": "last week"}, headers=api.admin)
    assert bad.status_code in (400, 422) and "YYYY-MM-DD" in bad.text, bad.text
