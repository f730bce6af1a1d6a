"""Whole-store backups: `GET /v1/stores/{store}:backup` while searches go on, restored with
`POST /v1/stores/{name}:restore` into a fresh stack (other tiers, other data) and into the same
one under a new name; every drawer, link, raw session, file and search result comes back the
same, and doctor finds no drift. Refusals (a taken name, a broken archive, a non-admin) change
nothing."""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import tarfile
from pathlib import Path
from typing import Any

from services.cli.backup import run_backup, run_restore
from tests.gateway.conftest import (
    ADMIN_TOKEN,
    Api,
    Tiers,
    gateway_settings,
    running_gateway,
    served_gateway,
    stack_tiers,
)
from tests.gateway.test_drawers_search import _seed

QUERIES = (
    "which database keeps invoices?",
    "when do deploys to production happen?",
    "what replaced the XML importer?",
)
RUNBOOK = (
    b"# Billing runbook\n\n## Invoices\n\nInvoices are kept in Postgres and exported nightly.\n\n"
    b"## Refunds\n\nRefunds over 500 euros need a second approver.\n"
)
TAR = {"content-type": "application/x-tar"}


async def _fill(api: Api, store: str) -> None:
    """Drawers, a link, a raw session, an ingested file."""
    first, second, *_ = await _seed(api, store)
    write = await api.as_tier("write", store)
    link = await api.client.post(
        f"/v1/stores/{store}/links",
        json={"from_id": second["id"], "to_id": first["id"], "type": "LINK_TYPE_RELATES_TO"},
        headers=write,
    )
    assert link.status_code == 201, link.text
    session = await api.client.post(
        f"/v1/stores/{store}/raw/sessions",
        json={
            "session_id": "s-backup",
            "origin_kind": "dialog",
            "turns": [
                {"role": "user", "content": "Who approves large refunds?"},
                {"role": "assistant", "content": "A second approver signs refunds over 500."},
            ],
        },
        headers=write,
    )
    assert session.status_code == 200, session.text
    uploaded = await api.client.post(
        f"/v1/stores/{store}/files",
        files={"file": ("billing.md", RUNBOOK, "text/markdown")},
        headers=write,
    )
    assert uploaded.status_code == 200, uploaded.text
    job = await api.client.post(
        f"/v1/stores/{store}/ingest", json={"file_ids": [uploaded.json()["id"]]}, headers=write
    )
    assert (await api.wait_job(job.json()["id"]))["state"] == "JOB_STATE_DONE"


async def _picture(api: Api, store: str) -> dict[str, Any]:
    """What a user sees of the store: every drawer, its links, raw sessions and their chunks,
    files, search results (ids and scores)."""
    admin = api.admin
    exported = await api.client.get(f"/v1/stores/{store}/drawers:export", headers=admin)
    drawers = sorted(exported.text.splitlines())
    ids = [json.loads(line)["id"] for line in drawers]
    links = []
    for drawer_id in ids:
        listed = await api.client.get(
            f"/v1/stores/{store}/drawers/{drawer_id}/links", headers=admin
        )
        links += [(x["id"], x["from_id"], x["to_id"], x["type"]) for x in listed.json()["links"]]
    sessions = await api.client.get(f"/v1/stores/{store}/raw/sessions", headers=admin)
    chunks = {}
    for session in sessions.json()["sessions"]:
        session_id = session["descriptor"]["session_id"]
        answer = await api.client.get(
            f"/v1/stores/{store}/raw/sessions/{session_id}/chunks", headers=admin
        )
        chunks[session_id] = [(c["id"], c["content"]) for c in answer.json()["chunks"]]
    files = await api.client.get(f"/v1/stores/{store}/files", headers=admin)
    searches = []
    for query in QUERIES:
        found = await api.client.post(
            f"/v1/stores/{store}/search", json={"query": query, "min_score": -1}, headers=admin
        )
        searches.append(
            [(r["drawer"]["id"], round(r["score"], 4)) for r in found.json()["results"]]
        )
    spec = (await api.client.get(f"/v1/stores/{store}", headers=admin)).json()["spec"]
    return {
        "drawers": drawers,
        "links": sorted(set(links)),
        "chunks": chunks,
        "files": sorted(
            (f["id"], f["name"], f["state"], f["chunk_count"]) for f in files.json()["files"]
        ),
        "searches": searches,
        "defaults": spec.get("defaults"),
        "mode": spec["deployment_mode"],
    }


async def _backup_while_searching(api: Api, store: str) -> bytes:
    async def search_on() -> int:
        done = 0
        for _ in range(10):
            answer = await api.client.post(
                f"/v1/stores/{store}/search", json={"query": QUERIES[0]}, headers=api.admin
            )
            assert answer.status_code == 200, "reads go on during a backup"
            done += 1
        return done

    backup, searched = await asyncio.gather(
        api.client.get(f"/v1/stores/{store}:backup", headers=api.admin), search_on()
    )
    assert backup.status_code == 200, backup.text
    assert backup.headers["content-type"] == "application/x-tar"
    assert ".engram.tar" in backup.headers["content-disposition"]
    assert searched == 10
    return backup.content


async def test_a_backup_restores_into_a_fresh_stack_as_it_was(
    api: Api, store_name: str, tmp_path: Path, embedder_addr: str, redis_url: str
) -> None:
    await _fill(api, store_name)
    before = await _picture(api, store_name)
    assert before["links"] and before["chunks"] and before["files"] and before["drawers"]
    archive = await _backup_while_searching(api, store_name)
    with tarfile.open(fileobj=io.BytesIO(archive)) as outer:
        assert outer.getnames() == [
            "engram-backup.json",
            "retrieval.tar",
            "authoring.tar",
            "corpus.tar",
        ]

    async with (
        stack_tiers(tmp_path / "fresh", embedder_addr, redis_url) as fresh_tiers,
        running_gateway(gateway_settings(fresh_tiers, tmp_path / "fresh-gateway")) as fresh,
    ):
        restored = await fresh.client.post(
            f"/v1/stores/{store_name}:restore", content=archive, headers={**fresh.admin, **TAR}
        )
        assert restored.status_code == 201, restored.text
        assert restored.json()["spec"]["name"] == store_name
        after = await _picture(fresh, store_name)
        assert after == before, "every drawer, link, chunk, file and result as it was"
        check = await fresh.client.post(
            f"/v1/stores/{store_name}:check", json={}, headers=fresh.admin
        )
        assert int(check.json()["drift"]) == 0, check.text


async def test_restores_are_refused_whole(api: Api, store_name: str) -> None:
    await _seed(api, store_name)
    archive = (await api.client.get(f"/v1/stores/{store_name}:backup", headers=api.admin)).content
    copy = f"{store_name}-copy"

    taken = await api.client.post(
        f"/v1/stores/{store_name}:restore", content=archive, headers={**api.admin, **TAR}
    )
    assert taken.status_code == 409, taken.text

    write = await api.as_tier("write", copy)
    refused = await api.client.post(
        f"/v1/stores/{copy}:restore", content=archive, headers={**write, **TAR}
    )
    assert refused.status_code == 403, refused.text
    backup_refused = await api.client.get(f"/v1/stores/{store_name}:backup", headers=write)
    assert backup_refused.status_code == 403, backup_refused.text

    for broken in (b"", b"not a tar archive", archive[: len(archive) // 2]):
        answer = await api.client.post(
            f"/v1/stores/{copy}:restore", content=broken, headers={**api.admin, **TAR}
        )
        assert answer.status_code == 422, (len(broken), answer.text)
        assert (await api.client.get(f"/v1/stores/{copy}", headers=api.admin)).status_code == 404

    restored = await api.client.post(
        f"/v1/stores/{copy}:restore", content=archive, headers={**api.admin, **TAR}
    )
    assert restored.status_code == 201, "a refused restore left nothing behind on any tier"
    original = await _picture(api, store_name)
    duplicate = await _picture(api, copy)
    assert duplicate["drawers"] == original["drawers"]
    assert duplicate["searches"] == original["searches"]


async def test_the_cli_backs_up_to_a_file_and_restores_it(
    tiers: Tiers, tmp_path: Path, store_name: str
) -> None:
    async with served_gateway(gateway_settings(tiers, tmp_path / "gateway")) as served:
        await _seed(served.api, store_name)
        args = argparse.Namespace(store=store_name, dir=tmp_path / "backups", url=served.url)
        assert await asyncio.to_thread(run_backup, args, ADMIN_TOKEN) == 0
        [written] = list((tmp_path / "backups").iterdir())
        assert written.name.startswith(f"{store_name}-") and written.name.endswith(".engram.tar")

        again = argparse.Namespace(file=written, as_name=None, url=served.url)
        assert await asyncio.to_thread(run_restore, again, ADMIN_TOKEN) == 1, "the name is taken"
        copy = argparse.Namespace(file=written, as_name=f"{store_name}-cli", url=served.url)
        assert await asyncio.to_thread(run_restore, copy, ADMIN_TOKEN) == 0
        original = await _picture(served.api, store_name)
        assert (await _picture(served.api, f"{store_name}-cli"))["drawers"] == original["drawers"]
