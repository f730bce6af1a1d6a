"""Raw memories and sessions, streamed multipart uploads, ingest and compose jobs polled and
followed as Server-Sent Events, and cancelling."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.gateway.conftest import Api, Tiers, gateway_settings, running_gateway

NOTES = (
    b"# Release process\n\n"
    b"Every release is cut from main after the integration suite passes.\n\n"
    b"## Rollback\n\nA failed deploy is rolled back by redeploying the previous tag.\n"
)


def _sse_jobs(text: str) -> list[dict[str, Any]]:
    """The `job` events of an SSE body, in order."""
    jobs, event = [], ""
    for line in text.splitlines():
        if line.startswith("event:"):
            event = line.removeprefix("event:").strip()
        elif line.startswith("data:") and event == "job":
            jobs.append(json.loads(line.removeprefix("data:").strip()))
    return jobs


async def test_raw_memories_sessions_and_search(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    write = await api.as_tier("write", store_name)
    memory = await api.client.post(
        f"/v1/stores/{store_name}/raw/memories",
        json={"content": "The on-call rotation changes every Monday at nine.", "speaker": "ops"},
        headers=write,
    )
    assert memory.status_code == 200, memory.text
    assert memory.json()["origin_kind"] == "direct"

    session = await api.client.post(
        f"/v1/stores/{store_name}/raw/sessions",
        json={
            "session_id": "s-1",
            "origin_kind": "dialog",
            "turns": [
                {"role": "user", "content": "Which database does billing use?"},
                {"role": "assistant", "content": "Billing keeps its invoices in Postgres."},
            ],
        },
        headers=write,
    )
    assert session.status_code == 200, session.text
    assert session.json()["session_id"] == "s-1"
    assert len(session.json()["chunks"]) == 2

    read = await api.as_tier("read", store_name)
    found = await api.client.post(
        f"/v1/stores/{store_name}/raw/search",
        json={"query": "invoices database", "n_results": 3, "hybrid": True},
        headers=read,
    )
    assert found.status_code == 200, found.text
    assert "Postgres" in found.json()["results"][0]["chunk"]["content"]

    sessions = await api.client.get(f"/v1/stores/{store_name}/raw/sessions", headers=read)
    assert sessions.status_code == 200, sessions.text
    ids = {s["descriptor"]["session_id"] for s in sessions.json()["sessions"]}
    assert "s-1" in ids
    chunks = await api.client.get(f"/v1/stores/{store_name}/raw/sessions/s-1/chunks", headers=read)
    assert len(chunks.json()["chunks"]) == 2


async def test_upload_ingest_job_and_sse_progress(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    write = await api.as_tier("write", store_name)
    uploaded = await api.client.post(
        f"/v1/stores/{store_name}/files",
        data={"folder": "handbook"},
        files={"file": ("release.md", NOTES, "text/markdown")},
        headers=write,
    )
    assert uploaded.status_code == 200, uploaded.text
    file = uploaded.json()
    assert file["name"] == "release.md"
    assert file["folder"] == "handbook"
    assert int(file["size_bytes"]) == len(NOTES)
    assert file["state"] == "FILE_STATE_UPLOADED"

    listed = await api.client.get(
        f"/v1/stores/{store_name}/files", params={"folder": "handbook"}, headers=write
    )
    assert [f["id"] for f in listed.json()["files"]] == [file["id"]]

    job = await api.client.post(
        f"/v1/stores/{store_name}/ingest", json={"file_ids": [file["id"]]}, headers=write
    )
    assert job.status_code == 202, job.text
    job_id = job.json()["id"]
    assert job.json()["state"] in ("JOB_STATE_QUEUED", "JOB_STATE_RUNNING")

    events = await api.client.get(f"/v1/jobs/{job_id}/events", headers=write)
    assert events.status_code == 200, events.text
    assert events.headers["content-type"].startswith("text/event-stream")
    states = [j["state"] for j in _sse_jobs(events.text)]
    assert states[-1] == "JOB_STATE_DONE", states
    assert all(j["id"] == job_id for j in _sse_jobs(events.text))

    done = await api.wait_job(job_id)
    assert done["state"] == "JOB_STATE_DONE"
    assert done["progress"]["items_done"] == 1
    jobs = await api.client.get("/v1/jobs", params={"store": store_name}, headers=write)
    assert job_id in [j["id"] for j in jobs.json()["jobs"]]

    ingested = await api.client.get(f"/v1/stores/{store_name}/files/{file['id']}", headers=write)
    assert ingested.json()["state"] == "FILE_STATE_INGESTED"
    found = await api.client.post(
        f"/v1/stores/{store_name}/raw/search",
        json={"query": "how is a failed deploy rolled back", "file_id": file["id"]},
        headers=write,
    )
    assert "rolled back" in found.json()["results"][0]["chunk"]["content"]

    # The ingested file's raw session is composed into drawers by the authoring tier.
    composed = await api.client.post(
        f"/v1/stores/{store_name}/authoring/compose",
        json={"file_ids": [file["id"]], "allow_new_wing": True},
        headers=write,
    )
    assert composed.status_code == 202, composed.text
    finished = await api.wait_job(composed.json()["id"])
    assert finished["state"] == "JOB_STATE_DONE", finished
    assert finished["kind"] == composed.json()["kind"]

    cancelled = await api.client.post(f"/v1/jobs/{job_id}:cancel", headers=write)
    assert cancelled.status_code == 200  # a finished job is returned unchanged
    assert cancelled.json()["state"] == "JOB_STATE_DONE"


async def test_upload_form_rules(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    write = await api.as_tier("write", store_name)
    no_file = await api.client.post(
        f"/v1/stores/{store_name}/files", data={"folder": "x"}, files={}, headers=write
    )
    assert no_file.status_code == 400, no_file.text
    boundary = "gw-test-boundary"
    late_folder = (
        f"--{boundary}\r\n"
        'Content-Disposition: form-data; name="file"; filename="late.md"\r\n\r\n'
        "# Late\n\nA folder field after the file is refused.\r\n"
        f"--{boundary}\r\n"
        'Content-Disposition: form-data; name="folder"\r\n\r\nlate\r\n'
        f"--{boundary}--\r\n"
    ).encode()
    refused = await api.client.post(
        f"/v1/stores/{store_name}/files",
        content=late_folder,
        headers={**write, "content-type": f"multipart/form-data; boundary={boundary}"},
    )
    assert refused.status_code == 400, refused.text
    assert "before" in refused.json()["error"]["message"]
    listed = await api.client.get(f"/v1/stores/{store_name}/files", headers=write)
    assert listed.json()["files"] == []  # nothing half-stored


async def test_upload_over_the_limit_is_refused_and_nothing_stored(
    tiers: Tiers, tmp_path: Path
) -> None:
    settings = gateway_settings(tiers, tmp_path / "data", max_upload_bytes=10_000)
    async with running_gateway(settings) as small:
        await small.create_store("gw-small-uploads")
        answer = await small.client.post(
            "/v1/stores/gw-small-uploads/files",
            files={"file": ("big.md", b"# Big\n\n" + b"word " * 5000, "text/markdown")},
            headers=small.admin,
        )
        assert answer.status_code == 413, answer.text
        assert "limit is 0.01 MB" in answer.json()["error"]["message"]
        listed = await small.client.get("/v1/stores/gw-small-uploads/files", headers=small.admin)
        assert listed.json()["files"] == []
