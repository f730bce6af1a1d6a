"""The job layer against a real Redis: lifecycle, retries, cancellation, events, crashes."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Collection
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from engram.v1 import common_pb2
from engram.v1.common_pb2 import (
    JOB_STATE_CANCELLED,
    JOB_STATE_DONE,
    JOB_STATE_FAILED,
    JOB_STATE_QUEUED,
    JOB_STATE_RUNNING,
)

from services.runtime.errors import Conflict, InvalidInput, NotFound, Unavailable
from services.runtime.job_record import FORMAT, decode
from services.runtime.jobs import Handler, JobContext, JobQueue, JobWorker
from services.runtime.redis import connect_redis

REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
async def queue_name(redis_url: str) -> AsyncIterator[str]:
    name = f"engram-test-{uuid.uuid4().hex[:12]}"
    yield name
    client: aioredis.Redis = aioredis.Redis.from_url(redis_url)
    keys = [key async for key in client.scan_iter(match=f"*{name}*", count=1000)]
    if keys:
        await client.delete(*keys)
    await client.aclose()


@pytest.fixture
async def queue(redis_url: str, queue_name: str) -> AsyncIterator[JobQueue]:
    async with JobQueue(redis_url, queue_name=queue_name) as q:
        yield q


@asynccontextmanager
async def running_worker(
    redis_url: str, queue_name: str, handlers: dict[str, Handler], **options: Any
) -> AsyncIterator[JobWorker]:
    settings: dict[str, Any] = {
        "poll_delay_s": 0.02,
        "report_interval_s": 0.0,
        "retry_delay_s": 0.0,
        "lease_s": 2.0,
        **options,
    }
    worker = JobWorker(redis_url, queue_name, handlers, **settings)
    task = asyncio.create_task(worker.run())
    try:
        yield worker
    finally:
        await worker.close()
        await asyncio.wait_for(task, 5)


async def wait_for_state(
    queue: JobQueue,
    job_id: str,
    states: Collection[common_pb2.JobState.ValueType],
    timeout_s: float = 10.0,
) -> common_pb2.Job:
    deadline = time.monotonic() + timeout_s
    while True:
        record = await queue.get(job_id)
        if record.state in states:
            return record
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} wanted {set(states)} within {timeout_s}s: {record}")
        await asyncio.sleep(0.02)


async def test_a_job_runs_to_done_recording_progress_and_item_errors(
    redis_url: str, queue_name: str, queue: JobQueue
) -> None:
    async def count(ctx: JobContext, payload: dict[str, Any]) -> common_pb2.IngestResult:
        for i in range(1, payload["n"] + 1):
            await ctx.report(items_done=i, items_total=payload["n"], units_done=10 * i, unit="B")
        await ctx.item_error("item-2", "too_large", "item 2 is over the limit")
        return common_pb2.IngestResult(files=payload["n"])

    queued = await queue.enqueue("count", "store-a", {"n": 3})
    assert queued.state == JOB_STATE_QUEUED
    async with running_worker(redis_url, queue_name, {"count": count}):
        done = await wait_for_state(queue, queued.id, {JOB_STATE_DONE, JOB_STATE_FAILED})
    assert done.state == JOB_STATE_DONE, done.error
    assert done.WhichOneof("result") == "ingest" and done.ingest.files == 3
    assert (done.progress.items_done, done.progress.items_total) == (3, 3)
    assert (done.progress.units_done, done.progress.unit) == (30, "B")
    assert [e.item_id for e in done.errors] == ["item-2"] and done.errors_total == 1
    assert done.attempts == 1
    assert done.HasField("started_at") and done.HasField("finished_at")
    assert [r.id for r in await queue.list("store-a")] == [queued.id]
    assert await queue.list("store-b") == []
    assert queued.id in [r.id for r in await queue.list()]


async def test_a_failing_handler_is_retried_then_failed_with_its_message(
    redis_url: str, queue_name: str, queue: JobQueue
) -> None:
    calls: list[int] = []

    async def broken(ctx: JobContext, payload: dict[str, Any]) -> common_pb2.IngestResult:
        calls.append(ctx.attempt)
        raise RuntimeError("disk on fire")

    job = await queue.enqueue("broken", "s", {})
    async with running_worker(redis_url, queue_name, {"broken": broken}, max_tries=2):
        failed = await wait_for_state(queue, job.id, {JOB_STATE_FAILED, JOB_STATE_DONE})
    assert failed.state == JOB_STATE_FAILED
    assert "disk on fire" in failed.error
    assert calls == [1, 2] and failed.attempts == 2


async def test_invalid_input_from_a_handler_is_not_retried(
    redis_url: str, queue_name: str, queue: JobQueue
) -> None:
    calls: list[int] = []

    async def strict(ctx: JobContext, payload: dict[str, Any]) -> common_pb2.IngestResult:
        calls.append(ctx.attempt)
        raise InvalidInput("field x is missing")

    job = await queue.enqueue("strict", "s", {})
    async with running_worker(redis_url, queue_name, {"strict": strict}, max_tries=3):
        failed = await wait_for_state(queue, job.id, {JOB_STATE_FAILED, JOB_STATE_DONE})
    assert failed.error == "field x is missing" and calls == [1]


async def test_cancel_stops_a_running_job_at_its_next_report(
    redis_url: str, queue_name: str, queue: JobQueue
) -> None:
    async def endless(ctx: JobContext, payload: dict[str, Any]) -> common_pb2.ReembedResult:
        for i in range(1000):
            await ctx.report(items_done=i)
            await asyncio.sleep(0.01)
        return common_pb2.ReembedResult(model="finished")

    job = await queue.enqueue("endless", "s", {})
    async with running_worker(redis_url, queue_name, {"endless": endless}):
        await wait_for_state(queue, job.id, {JOB_STATE_RUNNING})
        requested = await queue.cancel(job.id)
        assert requested.cancel_requested
        cancelled = await wait_for_state(queue, job.id, {JOB_STATE_CANCELLED, JOB_STATE_DONE})
    assert cancelled.state == JOB_STATE_CANCELLED
    assert cancelled.WhichOneof("result") is None and cancelled.HasField("finished_at")
    assert (await queue.cancel(job.id)).state == JOB_STATE_CANCELLED


async def test_cancellation_is_not_swallowed_by_a_handlers_except_exception(
    redis_url: str, queue_name: str, queue: JobQueue
) -> None:
    async def per_item(ctx: JobContext, payload: dict[str, Any]) -> common_pb2.IngestResult:
        for i in range(1000):
            try:
                await ctx.report(items_done=i)
            except Exception as e:  # the usual per-item guard
                await ctx.item_error(str(i), "error", str(e))
            await asyncio.sleep(0.01)
        return common_pb2.IngestResult()

    job = await queue.enqueue("per_item", "s", {})
    async with running_worker(redis_url, queue_name, {"per_item": per_item}):
        await wait_for_state(queue, job.id, {JOB_STATE_RUNNING})
        await queue.cancel(job.id)
        cancelled = await wait_for_state(queue, job.id, {JOB_STATE_CANCELLED, JOB_STATE_DONE})
    assert cancelled.state == JOB_STATE_CANCELLED and cancelled.errors_total == 0


async def test_timeouts_and_results_that_are_not_job_results_fail_without_retry(
    redis_url: str, queue_name: str, queue: JobQueue
) -> None:
    calls: list[str] = []

    async def sleepy(ctx: JobContext, payload: dict[str, Any]) -> common_pb2.IngestResult:
        calls.append("sleepy")
        await asyncio.sleep(30)
        return common_pb2.IngestResult()

    async def odd(ctx: JobContext, payload: dict[str, Any]) -> Any:
        calls.append("odd")
        return {"when": object()}  # not one of the job results

    handlers: dict[str, Handler] = {"sleepy": sleepy, "odd": odd}
    slow = await queue.enqueue("sleepy", "s", {})
    bad = await queue.enqueue("odd", "s", {})
    unknown = await queue.enqueue("nobody-handles-this", "s", {})
    async with running_worker(redis_url, queue_name, handlers, job_timeout_s=0.3):
        ends = [await wait_for_state(queue, j.id, {JOB_STATE_FAILED}) for j in (slow, bad, unknown)]
    assert "0.3 s job timeout" in ends[0].error
    assert "not a job result" in ends[1].error
    assert "no handler for job kind 'nobody-handles-this'" in ends[2].error
    assert sorted(calls) == ["odd", "sleepy"]


async def test_a_job_out_of_tries_after_crashes_is_marked_failed(
    redis_url: str, queue_name: str, queue: JobQueue
) -> None:
    ran: list[int] = []

    async def never(ctx: JobContext, payload: dict[str, Any]) -> common_pb2.IngestResult:
        ran.append(ctx.attempt)
        return common_pb2.IngestResult()

    job = await queue.enqueue("never", "s", {})
    # As if two workers had died inside it: arq counts tries in this key.
    client: aioredis.Redis = aioredis.Redis.from_url(redis_url)
    await client.set(f"arq:retry:{queue.keys.arq_id(job.id)}", 2)
    await client.aclose()
    async with running_worker(redis_url, queue_name, {"never": never}, max_tries=2):
        failed = await wait_for_state(queue, job.id, {JOB_STATE_FAILED, JOB_STATE_DONE})
    assert failed.state == JOB_STATE_FAILED and "gave up after 2 attempts" in failed.error
    assert ran == []


async def test_cancel_takes_a_queued_job_out_of_the_queue(
    redis_url: str, queue_name: str, queue: JobQueue
) -> None:
    ran: list[str] = []

    async def record(ctx: JobContext, payload: dict[str, Any]) -> common_pb2.IngestResult:
        ran.append(ctx.job_id)
        return common_pb2.IngestResult()

    first = await queue.enqueue("record", "s", {})
    cancelled = await queue.cancel(first.id)
    assert cancelled.state == JOB_STATE_CANCELLED
    second = await queue.enqueue("record", "s", {})
    async with running_worker(redis_url, queue_name, {"record": record}, max_jobs=1):
        await wait_for_state(queue, second.id, {JOB_STATE_DONE})
    assert ran == [second.id]
    assert (await queue.get(first.id)).state == JOB_STATE_CANCELLED


async def test_events_yield_progress_then_the_terminal_record(
    redis_url: str, queue_name: str, queue: JobQueue
) -> None:
    gate = asyncio.Event()

    async def gated(ctx: JobContext, payload: dict[str, Any]) -> common_pb2.ReembedResult:
        await ctx.report(items_done=1, items_total=2)
        await asyncio.wait_for(gate.wait(), 5)
        await ctx.report(items_done=2)
        return common_pb2.ReembedResult(model="ok")

    job = await queue.enqueue("gated", "s", {})
    seen: list[common_pb2.Job] = []
    async with running_worker(redis_url, queue_name, {"gated": gated}):

        async def watch() -> None:
            async for record in queue.events(job.id, poll_s=0.5):
                seen.append(record)
                if record.progress.items_done == 1:
                    gate.set()

        await asyncio.wait_for(watch(), 10)
    assert seen[0].state == JOB_STATE_QUEUED
    assert seen[-1].state == JOB_STATE_DONE and seen[-1].reembed.model == "ok"
    assert any(r.state == JOB_STATE_RUNNING and r.progress.items_done == 1 for r in seen)
    # In write order, never twice: each write moves the state or the count on.
    steps = [(r.state, r.progress.items_done) for r in seen]
    assert steps == sorted(set(steps))


async def test_a_stopped_worker_gives_its_job_back_without_using_a_try(
    redis_url: str, queue_name: str, queue: JobQueue
) -> None:
    started = asyncio.Event()
    attempts: list[int] = []

    async def slow(ctx: JobContext, payload: dict[str, Any]) -> common_pb2.ReembedResult:
        attempts.append(ctx.attempt)
        if not started.is_set():
            started.set()
            await asyncio.sleep(30)
        return common_pb2.ReembedResult(model=f"attempt {ctx.attempt}")

    job = await queue.enqueue("slow", "s", {})
    async with running_worker(redis_url, queue_name, {"slow": slow}):
        await asyncio.wait_for(started.wait(), 5)
    stopped = await queue.get(job.id)
    assert stopped.state == JOB_STATE_QUEUED and "will run again" in stopped.error
    async with running_worker(redis_url, queue_name, {"slow": slow}):
        done = await wait_for_state(queue, job.id, {JOB_STATE_DONE})
    assert attempts == [1, 1] and done.attempts == 1


async def test_a_job_whose_worker_is_killed_is_retried_and_done_once(
    redis_url: str, queue_name: str, queue: JobQueue
) -> None:
    marker = f"{queue_name}:marker"
    client: aioredis.Redis = aioredis.Redis.from_url(redis_url)
    command = [sys.executable, "-m", "tests.unit.runtime._job_worker_proc"]
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}

    def spawn() -> subprocess.Popen[bytes]:
        return subprocess.Popen([*command, redis_url, queue_name, marker], cwd=REPO_ROOT, env=env)

    first = spawn()
    second: subprocess.Popen[bytes] | None = None
    try:
        job = await queue.enqueue("crashable", "s", {"value": "written-once"})
        deadline = time.monotonic() + 15
        while not await client.exists(f"{marker}:inside"):
            assert first.poll() is None, "the first worker exited on its own"
            assert time.monotonic() < deadline, "the first worker never started the job"
            await asyncio.sleep(0.05)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=5)
        assert (await queue.get(job.id)).state == JOB_STATE_RUNNING
        second = spawn()
        done = await wait_for_state(queue, job.id, {JOB_STATE_DONE, JOB_STATE_FAILED}, 20)
        assert done.state == JOB_STATE_DONE, done.error
        assert done.attempts == 2 and done.reembed.model == "attempt 2"
        assert await client.get(f"{marker}:attempts") == b"2"
        assert await client.get(f"{marker}:completions") == b"1"
        assert await client.get(f"{marker}:result") == b"written-once"
    finally:
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    proc.kill()
        await client.aclose()


# A queued job's record as the queue wrote it before it kept `engram.v1.Job` (pydantic JSON).
OLD_QUEUED_RECORD = (
    '{"id":"JOB_ID","kind":"count","store":"s","state":"queued","progress":{"items_done":0,'
    '"items_total":0,"units_done":0,"unit":"","message":""},"errors":[],"errors_total":0,'
    '"error":"","created_at":"2026-01-02T03:04:05Z","started_at":null,"finished_at":null,'
    '"attempts":0,"result":{},"cancel_requested":false,"version":7}'
)


async def test_records_written_before_the_proto_format_are_read_run_and_cancelled(
    redis_url: str, queue_name: str, queue: JobQueue
) -> None:
    """An upgrade finds jobs the old code recorded in Redis: they are listed and read, run to
    the end by a new worker or cancelled, and written back in the new format, their write
    version going on from the old one."""

    async def count(ctx: JobContext, payload: dict[str, Any]) -> common_pb2.IngestResult:
        await ctx.report(items_done=1, items_total=1)
        return common_pb2.IngestResult(files=payload["n"])

    client: aioredis.Redis = aioredis.Redis.from_url(redis_url)
    try:
        to_run = await queue.enqueue("count", "s", {"n": 2})
        to_cancel = await queue.enqueue("count", "s", {"n": 1})
        for job in (to_run, to_cancel):  # as if the old code had queued them
            old = OLD_QUEUED_RECORD.replace("JOB_ID", job.id)
            await client.set(f"{queue_name}:job:{job.id}", old)

        read = await queue.get(to_run.id)
        assert (read.id, read.kind, read.store) == (to_run.id, "count", "s")
        assert read.state == JOB_STATE_QUEUED
        assert read.created_at.ToJsonString() == "2026-01-02T03:04:05Z"
        assert read.HasField("progress") and not read.HasField("started_at")
        assert {r.id for r in await queue.list("s")} == {to_run.id, to_cancel.id}

        cancelled = await queue.cancel(to_cancel.id)
        assert cancelled.state == JOB_STATE_CANCELLED and cancelled.cancel_requested
        raw = await client.get(f"{queue_name}:job:{to_cancel.id}")
        assert raw[0] == FORMAT and decode(raw).version == 8

        async with running_worker(redis_url, queue_name, {"count": count}):
            done = await wait_for_state(queue, to_run.id, {JOB_STATE_DONE, JOB_STATE_FAILED})
        assert done.state == JOB_STATE_DONE, done.error
        assert done.ingest.files == 2 and done.attempts == 1 and done.progress.items_done == 1
        assert done.created_at.ToJsonString() == "2026-01-02T03:04:05Z"
        raw = await client.get(f"{queue_name}:job:{to_run.id}")
        assert raw[0] == FORMAT and decode(raw).version > 8
        assert (await queue.get(to_cancel.id)).state == JOB_STATE_CANCELLED, "it never ran"
    finally:
        await client.aclose()


async def test_unknown_ids_bad_payloads_and_duplicates_are_refused(queue: JobQueue) -> None:
    with pytest.raises(NotFound):
        await queue.get("no-such-job")
    with pytest.raises(NotFound):
        await queue.cancel("no-such-job")
    with pytest.raises(InvalidInput):
        await queue.enqueue("k", "s", {"when": object()})
    with pytest.raises(InvalidInput):
        await queue.enqueue("k", "s", {}, job_id="has spaces")
    await queue.enqueue("k", "s", {}, job_id="fixed-id")
    with pytest.raises(Conflict):
        await queue.enqueue("k", "s", {}, job_id="fixed-id")


async def test_an_unreachable_redis_is_reported_as_unavailable() -> None:
    url = "redis://user:hunter2@127.0.0.1:1/0"
    with pytest.raises(Unavailable) as raised:
        await connect_redis(url, timeout_s=0.5)
    assert "is not answering" in raised.value.message
    assert "hunter2" not in raised.value.message
    with pytest.raises(Unavailable):
        await JobQueue(url, queue_name="engram-test-unreachable", timeout_s=0.5).connect()


def test_retry_delays_double_up_to_a_minute() -> None:
    from services.runtime.jobs import MAX_RETRY_DELAY_S, retry_delay

    assert [retry_delay(2.0, attempt) for attempt in range(1, 6)] == [2, 4, 8, 16, 32]
    assert retry_delay(2.0, 9) == MAX_RETRY_DELAY_S


async def test_a_full_queue_refuses_a_new_job_with_a_wait(redis_url: str, queue_name: str) -> None:
    from services.runtime.errors import Overloaded

    async with JobQueue(redis_url, queue_name=queue_name, max_queued=2) as bounded:
        first = await bounded.enqueue("noop", "s", {})
        await bounded.enqueue("noop", "s", {})
        with pytest.raises(Overloaded) as refused:
            await bounded.enqueue("noop", "s", {})
        assert refused.value.retry_after_s > 0 and "2 jobs are already waiting" in str(
            refused.value.message
        )
        assert len(await bounded.list("s", 10)) == 2, "the refused job left no record"
        await bounded.cancel(first.id)  # taken out of the queue: room for one more
        await bounded.enqueue("noop", "s", {})


def _redis_server(port: int, directory: Path) -> subprocess.Popen[bytes]:
    from services.launcher.redis_supervisor import redis_server_args

    return subprocess.Popen(
        ["redis-server", *redis_server_args("127.0.0.1", port, directory)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


async def _answering(url: str) -> None:
    client = aioredis.Redis.from_url(url)
    try:
        for _ in range(100):
            try:
                if await client.ping():
                    return
            except (OSError, aioredis.RedisError):
                await asyncio.sleep(0.1)
        raise AssertionError(f"redis at {url} did not answer")
    finally:
        await client.aclose()


async def test_a_worker_that_loses_redis_reconnects_and_runs_what_comes_after(
    tmp_path: Path,
) -> None:
    """Found by the fault tests: a worker whose poll met a dead Redis ended for good, and
    every later job stayed queued. It now waits Redis out and goes on."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"redis://127.0.0.1:{port}/0"
    server = _redis_server(port, tmp_path)
    ran: list[str] = []

    async def note(ctx: JobContext, payload: dict[str, Any]) -> common_pb2.IngestResult:
        ran.append(payload["n"])
        return common_pb2.IngestResult()

    try:
        await _answering(url)
        async with (
            JobQueue(url, queue_name="reconnect") as jobs,
            running_worker(url, "reconnect", {"note": note}, poll_delay_s=0.05),
        ):
            first = await jobs.enqueue("note", "s", {"n": "before"})
            await wait_for_state(jobs, first.id, {JOB_STATE_DONE})
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(10)
            await asyncio.sleep(1.0)  # the worker's polls meet no Redis
            server = _redis_server(port, tmp_path)
            await _answering(url)
            after = await _retrying_enqueue(jobs)
            done = await wait_for_state(jobs, after.id, {JOB_STATE_DONE}, timeout_s=30)
            assert done.state == JOB_STATE_DONE and ran == ["before", "after"]
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(10)


async def _retrying_enqueue(jobs: JobQueue) -> common_pb2.Job:
    for _ in range(50):
        try:
            return await jobs.enqueue("note", "s", {"n": "after"})
        except Unavailable:
            await asyncio.sleep(0.1)
    raise AssertionError("the queue never took the job after Redis came back")


async def test_a_job_that_loses_redis_while_it_records_its_end_runs_again(
    tmp_path: Path,
) -> None:
    """Found by the fault tests: Redis died while a failed attempt recorded its retry; the
    error reached arq, whose own bookkeeping failed too and kept the job's slot, so the job
    and every later one stayed queued. The attempt now waits Redis out and hands the job back:
    it runs again, and so does what comes after, on a worker of one slot."""
    from tests.ports import free_port

    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    servers = [_redis_server(port, tmp_path)]
    ran: list[str] = []
    killed = asyncio.Event()

    async def fragile(ctx: JobContext, payload: dict[str, Any]) -> common_pb2.IngestResult:
        ran.append(payload["n"])
        if ran.count("first") == 1 and payload["n"] == "first":
            os.killpg(servers[-1].pid, signal.SIGKILL)  # Redis dies mid-attempt...
            servers[-1].wait(10)
            killed.set()
            raise RuntimeError("the tier dropped the call")  # ...and the attempt fails
        return common_pb2.IngestResult()

    try:
        await _answering(url)
        async with (
            JobQueue(url, queue_name="lost-end") as jobs,
            running_worker(url, "lost-end", {"note": fragile}, max_jobs=1),
        ):
            first = await jobs.enqueue("note", "s", {"n": "first"})
            await asyncio.wait_for(killed.wait(), 10)  # the handler ran and killed Redis
            await asyncio.sleep(1.0)  # the attempt's end meets no Redis
            servers.append(_redis_server(port, tmp_path))
            await _answering(url)
            done = await wait_for_state(jobs, first.id, {JOB_STATE_DONE}, timeout_s=30)
            assert done.attempts == 2, done
            after = await _retrying_enqueue(jobs)
            await wait_for_state(jobs, after.id, {JOB_STATE_DONE}, timeout_s=30)
            assert ran == ["first", "first", "after"]
    finally:
        for server in servers:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(10)
