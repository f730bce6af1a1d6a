"""Crash safety, proven by fault injection: a real stack of processes (tests/faults/stack.py),
one process killed with SIGKILL in the middle of real work, restarted on the same data, then:
the job completes exactly once, the store holds exactly the expected drawers / raw chunks /
files (none lost, none doubled), and `engram doctor` (CheckStore) finds no drift between the
vectors, the keyword rows, the mirror, the links and the catalog.

Every interaction goes through the gateway's REST API, as a user's would. A caller whose
request fails while a tier is down retries it, as a real client does; what is asserted is
what the stores hold afterwards."""

from __future__ import annotations

import io
import json
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from services.corpus.core import ChunkOptions, chunk_file, detect_type
from services.corpus.settings import CorpusSettings
from tests.faults.stack import FaultStack, wait_for

pytestmark = pytest.mark.slow

TERMINAL = ("JOB_STATE_DONE", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED")
# How long a caller keeps retrying a request while a tier restarts.
RETRY_FOR_S = 120.0


# ---------------------------------------------------------------------- helpers


def _create_store(client: httpx.Client, name: str) -> None:
    answer = client.post("/v1/stores", json={"spec": {"name": name}})
    assert answer.status_code == 201, answer.text


def _retrying(send: Callable[[], httpx.Response], what: str) -> httpx.Response:
    """Send until the stack answers with something other than 5xx or a dropped connection."""
    deadline = time.monotonic() + RETRY_FOR_S
    while True:
        try:
            answer = send()
            if answer.status_code < 500:
                return answer
            why = f"{answer.status_code} {answer.text[:200]}"
        except httpx.TransportError as error:
            why = repr(error)
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} kept failing for {RETRY_FOR_S:.0f} s: {why}")
        time.sleep(0.25)


def _job(client: httpx.Client, job_id: str) -> dict[str, Any]:
    answer = _retrying(lambda: client.get(f"/v1/jobs/{job_id}"), f"reading job {job_id}")
    assert answer.status_code == 200, answer.text
    job: dict[str, Any] = answer.json()
    return job


def _finished(client: httpx.Client, job_id: str, timeout_s: float = 240) -> dict[str, Any]:
    def ended() -> dict[str, Any] | None:
        job = _job(client, job_id)
        return job if job["state"] in TERMINAL else None

    job: dict[str, Any] = wait_for(ended, timeout_s, f"job {job_id} ending", every_s=0.25)
    return job


def _once_running(client: httpx.Client, job_id: str, items_done: int = 1) -> None:
    """Wait until the job is inside its work: running, past `items_done` items."""

    def inside() -> bool:
        job = _job(client, job_id)
        assert job["state"] not in TERMINAL, f"the job ended before the fault: {job}"
        return job["state"] == "JOB_STATE_RUNNING" and job["progress"]["items_done"] >= items_done

    wait_for(inside, 120, f"job {job_id} under way", every_s=0.05)


def _drawers(client: httpx.Client, store: str) -> list[dict[str, Any]]:
    answer = _retrying(lambda: client.get(f"/v1/stores/{store}/drawers:export"), "export")
    assert answer.status_code == 200, answer.text
    return [json.loads(line) for line in answer.text.splitlines() if line.strip()]


def _no_drift(client: httpx.Client, store: str) -> None:
    answer = _retrying(lambda: client.post(f"/v1/stores/{store}:check", json={}), "doctor")
    assert answer.status_code == 200, answer.text
    report = answer.json()
    found = [
        f"{c['tier']}: {d['part']}: {d['count']} {d['problem']} {d['examples']}"
        for c in report["checks"]
        for d in c["drift"]
    ]
    assert int(report["drift"]) == 0, f"doctor found drift in {store}: {found}"


def _document(n: int) -> bytes:
    paragraphs = [
        f"Paragraph {i} of runbook {n}: the on-call engineer checks replica {i % 7}, the "
        f"backup window {i % 5} and snapshot {i} before paging the owner of service {n}. " * 2
        for i in range(40)
    ]
    return "\n\n".join(paragraphs).encode()


def _expected_chunks(name: str, data: bytes) -> int:
    defaults = CorpusSettings()
    options = ChunkOptions(
        window_chars=defaults.text_window_chars,
        overlap_chars=defaults.text_overlap_chars,
        max_chunk_chars=defaults.max_chunk_chars,
    )
    detected = detect_type(name, data[:8192])
    return len(list(chunk_file(detected, io.BytesIO(data), options=options).chunks))


def _upload_all(client: httpx.Client, store: str, documents: dict[str, bytes]) -> list[str]:
    ids = []
    for name, data in documents.items():
        answer = client.post(
            f"/v1/stores/{store}/files", files={"file": (name, data, "text/plain")}
        )
        assert answer.status_code == 200, answer.text
        ids.append(answer.json()["id"])
    return ids


def _ingested_as_expected(
    client: httpx.Client, store: str, documents: dict[str, bytes], ids: list[str]
) -> None:
    listed = client.get(f"/v1/stores/{store}/files", params={"page_size": 500})
    assert listed.status_code == 200, listed.text
    files = {f["id"]: f for f in listed.json()["files"]}
    assert set(ids) <= set(files), "every file is listed"
    assert len(files) == len({(f["folder"], f["name"]) for f in files.values()}), "none twice"
    for file_id, (name, data) in zip(ids, documents.items(), strict=True):
        entry = files[file_id]
        assert entry["state"] == "FILE_STATE_INGESTED", entry
        assert int(entry["chunk_count"]) == _expected_chunks(name, data), (
            f"{name}: {entry['chunk_count']} chunks, a single clean run makes "
            f"{_expected_chunks(name, data)}"
        )


def _ingest_with_a_kill(stack: FaultStack, store: str, victim: str) -> dict[str, Any]:
    """Upload eight runbooks, ingest them, kill `victim` once the job is past its first
    file, restart it; the finished job."""
    documents = {f"runbook-{n}.txt": _document(n) for n in range(8)}
    with stack.client() as client:
        _create_store(client, store)
        ids = _upload_all(client, store, documents)
        job = client.post(f"/v1/stores/{store}/ingest", json={"file_ids": ids})
        assert job.status_code == 202, job.text
        _once_running(client, job.json()["id"])
        stack.restart_after_kill(victim)
        stack.wait_ready()
        finished = _finished(client, job.json()["id"])
        assert finished["state"] == "JOB_STATE_DONE", finished
        assert int(finished["progress"]["items_done"]) == len(ids)
        _ingested_as_expected(client, store, documents, ids)
        _no_drift(client, store)
        return finished


# ---------------------------------------------------------------------- ingest


def test_corpus_killed_in_an_ingest_resumes_and_ends_as_one_run(stack: FaultStack) -> None:
    finished = _ingest_with_a_kill(stack, "fault-ingest-corpus", "corpus")
    assert int(finished["attempts"]) == 2, "the killed attempt, then one that finished"


def test_embedder_killed_in_an_ingest_is_waited_out(stack: FaultStack) -> None:
    finished = _ingest_with_a_kill(stack, "fault-ingest-embedder", "embedder")
    assert int(finished["attempts"]) >= 2, "the attempt that met no embedder was retried"
    assert not finished.get("errors"), "no file was failed for a passing outage"


# ---------------------------------------------------------------------- drawer writes


FACT_SUBJECTS = (
    "the billing service",
    "the search cluster",
    "the nightly exporter",
    "the payments gateway",
    "the audit pipeline",
    "the mobile backend",
)


def _fact(n: int) -> str:
    subject = FACT_SUBJECTS[n % len(FACT_SUBJECTS)]
    return (
        f"Operations note {n}: {subject} moved to rack {100 + n} in hall {n % 9} "
        f"and keeps {n * 3 + 7} days of logs."
    )


def test_retrieval_killed_in_a_burst_of_writes_loses_and_doubles_nothing(
    stack: FaultStack,
) -> None:
    store = "fault-writes"
    total = 48
    acknowledged: dict[int, str] = {}
    lock = threading.Lock()
    with stack.client() as client:
        _create_store(client, store)

        def write(n: int) -> None:
            body = {
                "drawer": {
                    "content": _fact(n),
                    "memory_type": "observation",
                    "wing": "ops",
                    "room": "ops/hardware",
                    "added_by": "fault-test",
                },
                "allow_new_wing": True,
                "reason": "fault injection",
            }
            answer = _retrying(
                lambda: client.post(f"/v1/stores/{store}/drawers", json=body), f"write {n}"
            )
            assert answer.status_code == 200, answer.text
            with lock:
                acknowledged[n] = answer.json()["drawer"]["id"]

        with ThreadPoolExecutor(max_workers=4) as pool:
            futures = [pool.submit(write, n) for n in range(total)]
            wait_for(lambda: len(acknowledged) >= total // 3, 120, "a third of the writes")
            stack.restart_after_kill("retrieval")
            for future in futures:
                future.result()

        stored = _drawers(client, store)
        ids = [d["id"] for d in stored]
        assert len(ids) == len(set(ids)) == total, (
            f"{len(ids)} drawers stored ({len(set(ids))} distinct) for {total} writes"
        )
        assert sorted(acknowledged.values()) == sorted(ids), "each write's answer names its drawer"
        assert sorted(d["content"] for d in stored) == sorted(_fact(n) for n in range(total))
        _no_drift(client, store)


IMPORTED = 4000


def test_retrieval_killed_in_an_import_then_imported_again_holds_the_file_once(
    stack: FaultStack,
) -> None:
    store = "fault-import"
    lines = [
        json.dumps(
            {
                "id": f"imported-{n:04d}",
                "content": _fact(1000 + n),
                "memory_type": "observation",
                "wing": "ops",
                "room": "ops/imported",
                "added_by": "fault-test",
                "created_at": "2026-11-01T09:00:00Z",
            }
        )
        for n in range(IMPORTED)
    ]
    body = ("\n".join(lines) + "\n").encode()
    headers = {"content-type": "application/x-ndjson"}
    with stack.client(timeout_s=120) as client:
        _create_store(client, store)
        outcome: list[object] = []

        def send() -> None:
            try:
                outcome.append(
                    client.post(f"/v1/stores/{store}/drawers:import", content=body, headers=headers)
                )
            except httpx.HTTPError as error:
                outcome.append(error)

        sender = threading.Thread(target=send)
        sender.start()
        time.sleep(0.5)  # the import is being embedded (seconds for 4,000 lines on CPU)
        stack.restart_after_kill("retrieval")
        sender.join(120)
        [first] = outcome
        assert isinstance(first, httpx.HTTPError) or first.status_code == 503, (
            f"the import was to be cut short by the kill, it answered {first}"
        )

        again = _retrying(
            lambda: client.post(
                f"/v1/stores/{store}/drawers:import", content=body, headers=headers
            ),
            "the import, again",
        )
        assert again.status_code == 200, again.text
        stored = _drawers(client, store)
        assert sorted(d["id"] for d in stored) == [f"imported-{n:04d}" for n in range(IMPORTED)]
        _no_drift(client, store)


# ---------------------------------------------------------------------- compose


def _sessions(prefix: str) -> list[dict[str, Any]]:
    topics = ("the staging database", "the release train", "the on-call rota", "the CDN")
    sessions = []
    for s, topic in enumerate(topics * 2):
        turns = []
        for t in range(3):
            turns.append(
                {
                    "role": "user",
                    "content": f"What did we settle about {topic} in round {t} of session {s}?",
                }
            )
            turns.append(
                {
                    "role": "assistant",
                    "content": f"We decided that {topic} gets review window {s * 10 + t} and "
                    f"owner team number {s + t}; the old window {t} was dropped.",
                }
            )
        sessions.append({"session_id": f"{prefix}-{s}", "origin_kind": "dialog", "turns": turns})
    return sessions


def _compose(client: httpx.Client, store: str, prefix: str) -> str:
    _create_store(client, store)
    sessions = _sessions(prefix)
    for session in sessions:
        answer = client.post(f"/v1/stores/{store}/raw/sessions", json=session)
        assert answer.status_code == 200, answer.text
    job = client.post(
        f"/v1/stores/{store}/authoring/compose",
        json={"session_ids": [s["session_id"] for s in sessions], "allow_new_wing": True},
    )
    assert job.status_code == 202, job.text
    job_id: str = job.json()["id"]
    return job_id


def test_authoring_killed_in_a_compose_job_writes_each_drawer_once(stack: FaultStack) -> None:
    with stack.client() as client:
        reference = _finished(client, _compose(client, "fault-compose-calm", "calm"))
        assert reference["state"] == "JOB_STATE_DONE", reference
        expected = sorted(d["content"] for d in _drawers(client, "fault-compose-calm"))
        assert expected, "the sessions compose into drawers"

        job_id = _compose(client, "fault-compose-killed", "killed")
        _once_running(client, job_id)
        stack.restart_after_kill("authoring")
        stack.wait_ready()
        finished = _finished(client, job_id)
        assert finished["state"] == "JOB_STATE_DONE", finished
        assert int(finished["attempts"]) == 2
        stored = _drawers(client, "fault-compose-killed")
        contents = sorted(d["content"] for d in stored)
        assert contents == expected, "the same drawers as a run without the fault, each once"
        _no_drift(client, "fault-compose-killed")


# ---------------------------------------------------------------------- redis


def test_redis_killed_with_jobs_queued_loses_none(stack: FaultStack) -> None:
    """Jobs acknowledged just before Redis dies are all there after it restarts from its
    append-only file, and each runs to the end once."""
    store = "fault-redis"
    batches = [
        {f"batch-{b}-runbook-{n}.txt": _document(10 * b + n) for n in range(3)} for b in range(5)
    ]
    with stack.client() as client:
        _create_store(client, store)
        uploaded = [_upload_all(client, store, documents) for documents in batches]
        jobs = []
        for ids in uploaded:
            job = client.post(f"/v1/stores/{store}/ingest", json={"file_ids": ids})
            assert job.status_code == 202, job.text
            jobs.append(job.json()["id"])
        waiting = [j for j in jobs if _job(client, j)["state"] == "JOB_STATE_QUEUED"]
        assert waiting, "the fault is meant to meet jobs still in the queue"
        stack.restart_after_kill("redis")
        for job_id in jobs:
            finished = _finished(client, job_id)
            assert finished["state"] == "JOB_STATE_DONE", finished
        for documents, ids in zip(batches, uploaded, strict=True):
            _ingested_as_expected(client, store, documents, ids)
        _no_drift(client, store)


# ---------------------------------------------------------------------- secrets


def test_no_log_or_audit_line_holds_a_token(stack: FaultStack) -> None:
    """After everything above (crashes, restarts, 5xx and refusals included), no process log
    and no audit line holds a bearer token; a refused one with a wrong secret neither."""
    wrong = stack.token[:-6] + "XXXXXX"
    with httpx.Client(base_url=stack.url, headers={"Authorization": f"Bearer {wrong}"}) as bad:
        assert bad.get("/v1/stores").status_code == 401
    with stack.client() as client:
        created = client.post("/v1/tokens", json={"tier": "CALLER_TIER_READ"})
        assert created.status_code == 201, created.text
        issued = created.json()["token"]
        assert client.get("/v1/audit").status_code == 200
    written = [p for p in stack.root.rglob("*") if p.is_file() and p.suffix in (".log", ".jsonl")]
    assert any(p.suffix == ".jsonl" for p in written) and any(p.suffix == ".log" for p in written)
    for path in written:
        text = path.read_text(errors="replace")
        for secret in (stack.token, wrong, issued):
            assert secret not in text, f"{path.relative_to(stack.root)} holds a token"
