"""Background jobs on Redis, through arq: durable, retried, cancellable, with progress.

Two halves share one Redis: `JobQueue` (the gateway's side: enqueue, get, list, cancel, watch)
and `JobWorker` (a tier's side: runs handlers by job kind). Every name lives under the
queue name, so tests and deployments isolate themselves by choosing one:

    <q>:job:<id>          the job as `engram.v1.Job`, behind its write version (job_record):
                          what every face answers; survives restarts
    <q>:jobs, <q>:jobs:store:<store>   sorted sets of ids by creation time, for `list`
    <q>:events:<id>       pub/sub channel; every record write publishes the new record
    <q>:queue             arq's queue; arq's own keys are arq:{job,retry,in-progress}:<q>:<id>

arq owns delivery (queue, claim, retry count); the record owns what it means. The record is
the public `engram.v1.Job` message itself, so what `JobQueue` returns goes out as it is; its
writes are optimistic transactions (WATCH) carrying a version that grows by one on each write
(kept beside the message, not in it: see `job_record`, which also reads the records written
before, as pydantic JSON). Handlers return one of `Job`'s typed results; it goes straight into
the record's `result` oneof.

Crash recovery: arq claims a job by setting arq:in-progress:<q>:<id> with a TTL; the job
stays in the queue until it finishes. A running job's worker refreshes that TTL every
`lease_s / 3`, so a killed worker's claim lapses within `lease_s` and any worker's next poll
starts the job again with `attempt + 1`. A stopped worker (close(), SIGTERM) gives its jobs
back at once, without using up a try. Hence **handlers must be idempotent**: an attempt may
have done part or all of its work before its worker died. Handler exceptions are retried
(`retry_delay_s` later, doubling each time up to a minute) up to `max_tries`; `EngramError`s
other than Unavailable/Overloaded are not, since the same input fails the same way. A job whose
`max_tries` attempts all died with their workers is marked failed by the next worker.

Cancellation is cooperative: `cancel()` marks the record; the handler's next `report()`
that reaches Redis raises `JobCancelled` (a BaseException, so per-item `except Exception`
guards do not swallow it). A queued job is taken out of arq's queue at once.
arq's own abort (`allow_abort_jobs`) is not used: it cancels the handler's task at any
await, which could cut a write to a sidecar in half.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import json
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any, Final

from arq.connections import ArqRedis
from arq.constants import in_progress_key_prefix, job_key_prefix, retry_key_prefix
from arq.jobs import Job
from arq.worker import Retry, Worker, func
from engram.v1 import common_pb2
from engram.v1.common_pb2 import (
    JOB_STATE_CANCELLED,
    JOB_STATE_DONE,
    JOB_STATE_FAILED,
    JOB_STATE_QUEUED,
    JOB_STATE_RUNNING,
)
from redis.asyncio.client import Pipeline
from redis.exceptions import RedisError, WatchError

from services.runtime.errors import (
    Conflict,
    EngramError,
    InvalidInput,
    NotFound,
    Overloaded,
    Unavailable,
)
from services.runtime.job_record import (
    JobResult,
    StoredJob,
    decode,
    encode,
    result_field,
    set_result,
)
from services.runtime.redis import describe, ensure_answering, unavailable

logger = logging.getLogger(__name__)

_FUNCTION = "engram_job"
_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}\Z")
_MAX_RECORDED_ERRORS = 100
# arq's own timeout only catches a wrapper that hangs after our handler deadline fired.
_TIMEOUT_BACKSTOP_S = 60.0
_WATCH_RETRIES = 50


TERMINAL_STATES: Final = frozenset({JOB_STATE_DONE, JOB_STATE_FAILED, JOB_STATE_CANCELLED})


def is_terminal(job: common_pb2.Job) -> bool:
    """Whether the job has ended (done, failed or cancelled): its record changes no more."""
    return job.state in TERMINAL_STATES


# Both derive from BaseException, like asyncio.CancelledError: a handler's per-item
# `except Exception` must not swallow them and carry on.
class JobCancelled(BaseException):
    """Raised by `JobContext.report` once cancellation was requested; let it propagate."""


class _Superseded(BaseException):
    """This attempt no longer owns the record (its lease lapsed and another attempt began)."""


def _now() -> datetime:
    return datetime.now(UTC)


def _dumps(data: dict[str, Any]) -> bytes:
    return json.dumps(data, default=repr).encode()


def _loads(raw: bytes) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(raw)
    return data


class _Keys:
    def __init__(self, queue_name: str) -> None:
        if not queue_name or any(c in queue_name for c in "*?[] \n"):
            raise ValueError(f"queue name {queue_name!r} must be non-empty, without glob chars")
        self.prefix = queue_name
        self.all = f"{queue_name}:jobs"
        self.queue = f"{queue_name}:queue"

    def record(self, job_id: str) -> str:
        return f"{self.prefix}:job:{job_id}"

    def store(self, store: str) -> str:
        return f"{self.prefix}:jobs:store:{store}"

    def channel(self, job_id: str) -> str:
        return f"{self.prefix}:events:{job_id}"

    def arq_id(self, job_id: str) -> str:
        return f"{self.prefix}:{job_id}"


@contextlib.contextmanager
def _outage_as_unavailable(url: str) -> Iterator[None]:
    try:
        yield
    except (RedisError, OSError) as e:
        raise unavailable(url, describe(e)) from e


async def _open(url: str, queue: str, timeout_s: float) -> ArqRedis:
    try:
        pool: ArqRedis = ArqRedis.from_url(url, socket_connect_timeout=timeout_s)
    except ValueError as e:
        raise InvalidInput(f"Redis URL is not valid ({e})", field="redis_url") from e
    # JSON rather than arq's default pickle: a job read from Redis can never run code.
    pool.job_serializer = _dumps
    pool.job_deserializer = _loads
    pool.default_queue_name = queue
    await ensure_answering(pool, url, timeout_s)
    return pool


# Edits the job it is given in place and says whether to write it.
ChangeFn = Callable[[common_pb2.Job], bool]
ExtraFn = Callable[[Pipeline, common_pb2.Job], None]


class _Records:
    """Reads and optimistic writes of job records (shared by queue and worker)."""

    def __init__(self, pool: ArqRedis, keys: _Keys, url: str, retention_s: float) -> None:
        self.pool, self.keys, self.url, self.retention_s = pool, keys, url, retention_s

    async def load(self, job_id: str) -> StoredJob | None:
        raw = await self.pool.get(self.keys.record(job_id))
        return None if raw is None else decode(raw)

    async def mutate(
        self, job_id: str, change: ChangeFn, extra: ExtraFn | None = None
    ) -> common_pb2.Job | None:
        """Apply `change` atomically and return the job as it now is; None when there is no
        record. `change` gets a copy to edit; returning False leaves the record as it is (its
        edits are dropped); an exception from it aborts the write."""
        key = self.keys.record(job_id)
        for _ in range(_WATCH_RETRIES):
            async with self.pool.pipeline(transaction=True) as pipe:
                try:
                    await pipe.watch(key)
                    raw = await pipe.get(key)
                    if raw is None:
                        return None
                    current = decode(raw)
                    new = common_pb2.Job()
                    new.CopyFrom(current.job)
                    if not change(new):
                        return current.job
                    data = encode(new, current.version + 1)
                    pipe.multi()  # type: ignore[no-untyped-call]
                    # Finished records go after `retention_s`; live ones stay until they end.
                    pipe.set(key, data, ex=int(self.retention_s) if is_terminal(new) else None)
                    pipe.publish(self.keys.channel(job_id), data)
                    if extra is not None:
                        extra(pipe, new)
                    await pipe.execute()
                    return new
                except WatchError:
                    continue
        raise Unavailable(f"job {job_id} is being changed too often to update; try again")


class JobQueue:
    """Submit, inspect, list, cancel and watch jobs. Use `async with` or call `close()`."""

    def __init__(
        self,
        url: str,
        *,
        queue_name: str = "engram:jobs",
        retention_s: float = 7 * 86400,
        timeout_s: float = 2.0,
        max_queued: int = 0,
    ) -> None:
        self.url = url
        self.keys = _Keys(queue_name)
        self.retention_s = retention_s
        self.timeout_s = timeout_s
        # Jobs waiting in the queue beyond which a new one is refused (Overloaded, with a
        # Retry-After); 0 = no bound.
        self.max_queued = max_queued
        self._records: _Records | None = None
        self._lock = asyncio.Lock()

    async def __aenter__(self) -> JobQueue:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def connect(self) -> None:
        """Connect and ping; raises Unavailable when Redis does not answer."""
        async with self._lock:
            if self._records is None:
                pool = await _open(self.url, self.keys.queue, self.timeout_s)
                self._records = _Records(pool, self.keys, self.url, self.retention_s)

    async def close(self) -> None:
        """Close the connection pool."""
        if self._records is not None:
            await self._records.pool.aclose()
            self._records = None

    async def _recs(self) -> _Records:
        if self._records is None:
            await self.connect()
        assert self._records is not None
        return self._records

    async def enqueue(
        self, kind: str, store: str, payload: dict[str, Any], *, job_id: str | None = None
    ) -> common_pb2.Job:
        """Queue a job for the worker that handles `kind`. Conflict if `job_id` is taken."""
        for name, value in (("kind", kind), ("store", store)):
            if not value or len(value) > 200:
                raise InvalidInput(f"job {name} must be 1-200 characters", field=name)
        if job_id is not None and not _ID.match(job_id):
            raise InvalidInput("job id must be 1-128 of A-Z a-z 0-9 _ . -", field="job_id")
        try:
            json.dumps(payload, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise InvalidInput(f"job payload must be plain JSON: {e}", field="payload") from e
        job_id = job_id or uuid.uuid4().hex
        created = _now()
        record = common_pb2.Job(
            id=job_id,
            kind=kind,
            store=store,
            state=JOB_STATE_QUEUED,
            progress=common_pb2.JobProgress(),  # present from the start, as every face shows it
        )
        record.created_at.FromDatetime(created)
        recs = await self._recs()
        if self.max_queued:
            with _outage_as_unavailable(self.url):
                waiting = int(await recs.pool.zcard(self.keys.queue))
            if waiting >= self.max_queued:
                raise Overloaded(
                    f"{waiting} jobs are already waiting in this queue (the limit is "
                    f"{self.max_queued}); retry once some have run",
                    retry_after_s=QUEUE_FULL_RETRY_S,
                )
        score = created.timestamp()
        indexes = (self.keys.all, self.keys.store(store))
        with _outage_as_unavailable(self.url):
            # The record first: a worker never meets a job without one.
            async with recs.pool.pipeline(transaction=True) as pipe:
                pipe.set(self.keys.record(job_id), encode(record, 0), nx=True)
                for index in indexes:
                    pipe.zadd(index, {job_id: score}, nx=True)
                written = (await pipe.execute())[0]
            if not written:
                raise Conflict(f"a job with id {job_id!r} already exists")
            job: Job | None = None
            try:
                job = await recs.pool.enqueue_job(
                    _FUNCTION, job_id, kind, store, payload, _job_id=self.keys.arq_id(job_id)
                )
            finally:
                if job is None:
                    # No worker will ever run it: do not leave a record saying "queued".
                    with contextlib.suppress(RedisError, OSError):
                        await recs.pool.delete(self.keys.record(job_id))
                        for index in indexes:
                            await recs.pool.zrem(index, job_id)
        if job is None:
            raise Conflict(f"job {job_id!r} is still in arq's queue from an earlier submission")
        return record

    async def get(self, job_id: str) -> common_pb2.Job:
        """The job's current record; NotFound for unknown (or long-finished) ids."""
        return (await self._load(job_id)).job

    async def _load(self, job_id: str) -> StoredJob:
        recs = await self._recs()
        with _outage_as_unavailable(self.url):
            stored = await recs.load(job_id)
        if stored is None:
            raise NotFound(
                f"no job {job_id!r}: check the id (finished jobs are kept "
                f"{self.retention_s / 86400:g} days)"
            )
        return stored

    async def cancel(self, job_id: str) -> common_pb2.Job:
        """Cancel a job: a queued one at once, a running one at its next progress report.
        A finished job is returned unchanged."""
        recs = await self._recs()
        arq_id = self.keys.arq_id(job_id)

        def change(record: common_pb2.Job) -> bool:
            if is_terminal(record):
                return False
            record.cancel_requested = True
            if record.state == JOB_STATE_QUEUED:
                record.state = JOB_STATE_CANCELLED
                record.finished_at.FromDatetime(_now())
            return True

        def dequeue(pipe: Pipeline, record: common_pb2.Job) -> None:
            if record.state == JOB_STATE_CANCELLED:
                pipe.zrem(self.keys.queue, arq_id)
                pipe.delete(job_key_prefix + arq_id, retry_key_prefix + arq_id)

        with _outage_as_unavailable(self.url):
            updated = await recs.mutate(job_id, change, dequeue)
        if updated is None:
            raise NotFound(f"no job {job_id!r} to cancel")
        return updated

    async def events(self, job_id: str, *, poll_s: float = 1.0) -> AsyncIterator[common_pb2.Job]:
        """Yield the record now and after every change, ending after a terminal state.

        Changes arrive by pub/sub; when none arrives for `poll_s` the record is re-read,
        so a lost message or a dropped subscription delays an update by at most `poll_s`.
        Records are yielded in version order, never twice.
        """
        recs = await self._recs()
        pubsub = recs.pool.pubsub()
        try:
            with _outage_as_unavailable(self.url):
                # Subscribe before the first read, so no change falls between the two.
                await pubsub.subscribe(self.keys.channel(job_id))
                stored = await self._load(job_id)
                yield stored.job
                last = stored.version
                while not is_terminal(stored.job):
                    message = await pubsub.get_message(
                        ignore_subscribe_messages=True, timeout=poll_s
                    )
                    if message is None:
                        stored = await self._load(job_id)
                    elif message["type"] == "message":
                        stored = decode(message["data"])
                    if stored.version > last:
                        last = stored.version
                        yield stored.job
        finally:
            await pubsub.aclose()  # type: ignore[no-untyped-call]

    async def list(
        self, store: str | None = None, limit: int = 50
    ) -> builtins.list[common_pb2.Job]:
        """The newest jobs first, of one store or of all."""
        if not 1 <= limit <= 1000:
            raise InvalidInput(f"limit must be 1-1000, got {limit}", field="limit")
        recs = await self._recs()
        index = self.keys.store(store) if store else self.keys.all
        found: builtins.list[common_pb2.Job] = []
        start = 0
        with _outage_as_unavailable(self.url):
            while len(found) < limit:
                ids = await recs.pool.zrevrange(index, start, start + limit - 1)
                if not ids:
                    break
                raws = await recs.pool.mget([self.keys.record(i.decode()) for i in ids])
                expired = [i for i, raw in zip(ids, raws, strict=True) if raw is None]
                found += [decode(raw).job for raw in raws if raw is not None]
                if expired:
                    # Finished records expire on their own; their index entries go here.
                    await recs.pool.zrem(index, *expired)
                start += len(ids) - len(expired)
        return found[:limit]


class JobContext:
    """What a handler gets: its job's identity, `attempt` (1-based), and progress calls."""

    def __init__(self, records: _Records, record: common_pb2.Job, report_interval_s: float) -> None:
        self.job_id, self.kind, self.store = record.id, record.kind, record.store
        self.attempt = record.attempts
        self.progress = common_pb2.JobProgress()
        self.errors: builtins.list[common_pb2.JobItemError] = []
        self.errors_total = 0
        self._records = records
        self._interval = report_interval_s
        self._last_write = float("-inf")

    async def report(
        self,
        *,
        items_done: int | None = None,
        items_total: int | None = None,
        units_done: int | None = None,
        unit: str | None = None,
        message: str | None = None,
    ) -> None:
        """Record progress (None leaves a field as it is). Written to Redis at most once per
        `report_interval_s`; each write raises JobCancelled if cancellation was asked."""
        progress = self.progress
        if items_done is not None:
            progress.items_done = items_done
        if items_total is not None:
            progress.items_total = items_total
        if units_done is not None:
            progress.units_done = units_done
        if unit is not None:
            progress.unit = unit
        if message is not None:
            progress.message = message
        if time.monotonic() - self._last_write >= self._interval:
            await self._write()

    async def item_error(self, item_id: str, code: str, message: str) -> None:
        """Note that one item failed while the job goes on; saved with the next report."""
        self.errors_total += 1
        if len(self.errors) < _MAX_RECORDED_ERRORS:
            self.errors.append(common_pb2.JobItemError(item_id=item_id, code=code, message=message))

    def _save(self, record: common_pb2.Job) -> None:
        """Put this attempt's progress and item errors into `record`."""
        record.progress.CopyFrom(self.progress)
        del record.errors[:]
        record.errors.extend(self.errors)
        record.errors_total = self.errors_total

    async def _write(self) -> None:
        def change(record: common_pb2.Job) -> bool:
            if record.state != JOB_STATE_RUNNING or record.attempts != self.attempt:
                raise _Superseded(f"job {self.job_id} attempt {self.attempt} lost its lease")
            if record.cancel_requested:
                raise JobCancelled(f"job {self.job_id} was cancelled")
            self._save(record)
            return True

        self._last_write = time.monotonic()
        await self._records.mutate(self.job_id, change)


# A handler gets the queued payload and returns its job's typed result.
Handler = Callable[[JobContext, dict[str, Any]], Awaitable[JobResult]]


# How long a worker that lost Redis waits before reconnecting: doubling from the first to the
# most, so a restarting Redis is found within seconds and a long outage costs no busy loop.
RECONNECT_FIRST_S = 0.5
RECONNECT_MAX_S = 10.0
# What a caller refused by a full queue is told to wait.
QUEUE_FULL_RETRY_S = 30.0
# The longest wait between two attempts of a job.
MAX_RETRY_DELAY_S = 60.0


def retry_delay(first_s: float, attempt: int) -> float:
    """The wait after failed attempt `attempt` (1-based): `first_s`, doubled per attempt,
    capped at MAX_RETRY_DELAY_S, so a few tries ride out a tier that restarts."""
    return float(min(first_s * 2 ** (attempt - 1), MAX_RETRY_DELAY_S))


class JobWorker:
    """Runs the jobs of one queue, by kind, until `close()`.

    Handlers must be idempotent (see the module docstring): a job whose worker died runs
    again from the start, at most `lease_s` after the death.
    """

    def __init__(
        self,
        url: str,
        queue_name: str,
        handlers: Mapping[str, Handler],
        *,
        max_jobs: int = 4,
        job_timeout_s: float = 3600.0,
        max_tries: int = 3,
        lease_s: float = 30.0,
        poll_delay_s: float = 0.5,
        retry_delay_s: float = 2.0,
        report_interval_s: float = 0.5,
        retention_s: float = 7 * 86400,
        timeout_s: float = 2.0,
    ) -> None:
        if not handlers or max_tries < 1 or lease_s <= 0 or job_timeout_s <= 0:
            raise ValueError("need handlers, max_tries >= 1, lease_s > 0 and job_timeout_s > 0")
        self.url, self.keys, self.handlers = url, _Keys(queue_name), dict(handlers)
        self.max_jobs, self.job_timeout_s, self.max_tries = max_jobs, job_timeout_s, max_tries
        self.lease_s, self.poll_delay_s, self.retry_delay_s = lease_s, poll_delay_s, retry_delay_s
        self.report_interval_s, self.retention_s = report_interval_s, retention_s
        self.timeout_s = timeout_s
        self._records: _Records | None = None
        self._arq: Worker | None = None
        self._closing = False

    async def run(self) -> None:
        """Connect and run jobs until `close()`. Unavailable if Redis does not answer at the
        start; once running, a lost connection (Redis restarting) is waited out: the worker
        reconnects with a growing pause and goes on, instead of ending and leaving jobs
        queued for ever. Jobs that were running then run again (their handlers are
        idempotent)."""
        pause = RECONNECT_FIRST_S
        while not self._closing:
            try:
                await self._serve()
                return
            except (RedisError, OSError, Unavailable) as error:
                # Before a first connection the caller hears of it; after one, it is waited out.
                if self._records is None or self._closing:
                    raise
                logger.warning(
                    "job worker lost Redis at %s (%s); reconnecting in %.1f s",
                    self.url,
                    error.message if isinstance(error, Unavailable) else describe(error),
                    pause,
                )
                await self._stop_arq()
                await asyncio.sleep(pause)
                pause = min(pause * 2, RECONNECT_MAX_S)

    async def _serve(self) -> None:
        """One connection's worth of running jobs; returns when closed, raises when the
        connection is lost."""
        reconnecting = self._records is not None
        pool = await _open(self.url, self.keys.queue, self.timeout_s)
        self._records = _Records(pool, self.keys, self.url, self.retention_s)
        self._arq = Worker(
            # One try more than ours, so the attempt after a final crash reaches `_execute`
            # and is recorded as failed instead of ending silently inside arq.
            functions=[func(self._execute, name=_FUNCTION, max_tries=self.max_tries + 1)],
            queue_name=self.keys.queue,
            redis_pool=pool,
            handle_signals=False,
            max_jobs=self.max_jobs,
            job_timeout=self.job_timeout_s + _TIMEOUT_BACKSTOP_S,
            keep_result=0,
            poll_delay=self.poll_delay_s,
            job_serializer=_dumps,
            job_deserializer=_loads,
            log_results=False,
        )
        # arq derives its claim TTL from the job timeout (an hour here); a short lease that
        # `_heartbeat` renews lets a dead worker's job start again within seconds.
        self._arq.in_progress_timeout_s = self.lease_s
        if self._closing:
            await pool.aclose()
            return
        if reconnecting:
            logger.warning("job worker reconnected to Redis at %s", self.url)
        try:
            await self._arq.async_run()
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if not self._closing or (task is not None and task.cancelling()):
                raise
        if not self._closing:
            # arq's loop ended without being asked to: treated as a lost connection.
            raise Unavailable("the job worker's poll loop ended; reconnecting")

    async def close(self) -> None:
        """Stop: running jobs go back to the queue and run again on a worker."""
        self._closing = True
        await self._stop_arq()

    async def _stop_arq(self) -> None:
        arq_worker, self._arq = self._arq, None
        if arq_worker is None or self._records is None:
            return
        # Not arq's Worker.close(): it cancels jobs even while they record their end, and
        # then raises CancelledError. Here the poll loop stops first, so no job starts after
        # this; then handlers are cancelled and each job's bookkeeping is let finish.
        if arq_worker.main_task is not None:
            arq_worker.main_task.cancel()
            await asyncio.wait([arq_worker.main_task])
        for handler_task in arq_worker.job_tasks.values():
            handler_task.cancel()
        if arq_worker.tasks:
            await asyncio.wait(builtins.list(arq_worker.tasks.values()))
        pool = self._records.pool
        try:
            await pool.delete(arq_worker.health_check_key)
        except (RedisError, OSError) as e:
            logger.warning("could not clear the worker's health key: %s", describe(e))
        await pool.aclose()

    async def _heartbeat(self, pool: ArqRedis, arq_id: str) -> None:
        key = in_progress_key_prefix + arq_id
        while True:
            await asyncio.sleep(self.lease_s / 3)
            try:
                await pool.pexpire(key, int(self.lease_s * 1000))
            except (RedisError, OSError) as e:
                logger.warning("could not renew the lease of job %s: %s", arq_id, describe(e))

    async def _execute(
        self, ctx: dict[str, Any], job_id: str, kind: str, store: str, payload: dict[str, Any]
    ) -> None:
        records = self._records
        assert records is not None
        arq_id = str(ctx["job_id"])
        attempt = int(ctx["job_try"])
        heartbeat = asyncio.create_task(self._heartbeat(records.pool, arq_id))
        try:
            await self._attempt(records, job_id, kind, payload, attempt)
        except asyncio.CancelledError:
            # A stopping worker is not a failed try: hand the try back, or a few rolling
            # restarts during a long job would use up `max_tries`.
            await records.pool.decr(retry_key_prefix + arq_id)
            raise
        except (RedisError, OSError) as error:
            # Redis went away while the attempt recorded its start or its end. Handing that
            # to arq would fail too (it records every ending in Redis) and crash its task,
            # leaving the job to the lease's expiry: wait for Redis instead, then put the job
            # back in the queue for another try.
            logger.warning(
                "job %s attempt %d lost Redis (%s); waiting for it to hand the job back",
                job_id, attempt, describe(error),
            )  # fmt: skip
            await self._await_redis(records)
            note = f"attempt {attempt} lost Redis ({describe(error)}); retrying"
            attempted = common_pb2.Job(id=job_id, attempts=attempt)
            await self._end(records, attempted, JOB_STATE_QUEUED, error=note)
            raise Retry(defer=retry_delay(self.retry_delay_s, attempt)) from error
        finally:
            heartbeat.cancel()

    async def _await_redis(self, records: _Records) -> None:
        """Return once Redis answers again (a growing pause between tries)."""
        pause = RECONNECT_FIRST_S
        while True:
            try:
                await records.pool.ping()
                return
            except (RedisError, OSError):
                await asyncio.sleep(pause)
                pause = min(pause * 2, RECONNECT_MAX_S)

    def _start(self, attempt: int) -> ChangeFn:
        gave_up = (
            f"gave up after {self.max_tries} attempts: each one's worker died before "
            f"finishing (killed, or out of touch with Redis for over {self.lease_s:g} s)"
        )

        def change(record: common_pb2.Job) -> bool:
            if is_terminal(record):
                return False
            record.attempts = attempt
            if record.cancel_requested:
                record.state = JOB_STATE_CANCELLED
            elif attempt > self.max_tries:
                record.state, record.error = JOB_STATE_FAILED, gave_up
            else:
                record.state = JOB_STATE_RUNNING
                if not record.HasField("started_at"):
                    record.started_at.FromDatetime(_now())
                record.progress.CopyFrom(common_pb2.JobProgress())
                del record.errors[:]
                record.errors_total = 0
                return True
            record.finished_at.FromDatetime(_now())
            return True

        return change

    async def _attempt(
        self, records: _Records, job_id: str, kind: str, payload: dict[str, Any], attempt: int
    ) -> None:
        record = await records.mutate(job_id, self._start(attempt))
        if record is None:
            logger.warning("job %s has no record (expired or deleted); dropping it", job_id)
            return
        if record.state != JOB_STATE_RUNNING or record.attempts != attempt:
            return
        handler = self.handlers.get(kind)
        if handler is None:
            known = ", ".join(sorted(self.handlers))
            error = f"no handler for job kind {kind!r} on this worker (it runs: {known})"
            await self._end(records, record, JOB_STATE_FAILED, error=error)
            return
        context = JobContext(records, record, self.report_interval_s)
        try:
            async with asyncio.timeout(self.job_timeout_s) as deadline:
                result = await handler(context, payload)
        except JobCancelled:
            await self._end(records, record, JOB_STATE_CANCELLED, context=context)
        except _Superseded:
            logger.warning("job %s attempt %d lost its lease to another; stopped", job_id, attempt)
        except asyncio.CancelledError:
            note = f"attempt {attempt} stopped with its worker; it will run again"
            await self._end(records, record, JOB_STATE_QUEUED, error=note)
            raise
        except Exception as e:  # the job boundary: every handler failure lands in the record
            await self._failed(records, record, context, e, deadline.expired())
        else:
            await self._done(records, record, context, result)

    async def _done(
        self, records: _Records, record: common_pb2.Job, context: JobContext, result: JobResult
    ) -> None:
        try:
            result_field(result)  # typed as one, but a handler is free to return anything
        except TypeError as e:
            # A bug in the handler, not a passing failure: retrying would redo the work.
            error = f"handler for {record.kind!r} returned a result that is not a job result: {e}"
            await self._end(records, record, JOB_STATE_FAILED, context=context, error=error)
            return
        await self._end(records, record, JOB_STATE_DONE, context=context, result=result)

    async def _failed(
        self,
        records: _Records,
        record: common_pb2.Job,
        context: JobContext,
        error: Exception,
        timed_out: bool,
    ) -> None:
        attempt = record.attempts
        message = f"{type(error).__name__}: {error}"
        retry = True
        if timed_out:
            message, retry = f"took longer than the {self.job_timeout_s:g} s job timeout", False
        elif isinstance(error, EngramError):
            # Its message is written for people; only "try later" kinds are worth a retry.
            message, retry = error.message, isinstance(error, (Unavailable, Overloaded))
        if retry and attempt < self.max_tries:
            logger.warning("job %s attempt %d failed, will retry: %s", record.id, attempt, message)
            note = f"attempt {attempt} failed ({message}); retrying"
            await self._end(records, record, JOB_STATE_QUEUED, error=note)
            raise Retry(defer=retry_delay(self.retry_delay_s, attempt)) from error
        logger.exception("job %s (%s) failed on attempt %d", record.id, record.kind, attempt)
        await self._end(records, record, JOB_STATE_FAILED, context=context, error=message)

    async def _end(
        self,
        records: _Records,
        record: common_pb2.Job,
        state: common_pb2.JobState.ValueType,
        *,
        context: JobContext | None = None,
        error: str | None = None,
        result: JobResult | None = None,
    ) -> None:
        """End this attempt in `state`, with its progress (`context`), `error` and `result`
        where given; a record another attempt has taken over is left alone."""

        def change(current: common_pb2.Job) -> bool:
            if current.state != JOB_STATE_RUNNING or current.attempts != record.attempts:
                return False
            if context is not None:
                context._save(current)
            if error is not None:
                current.error = error
            if result is not None:
                set_result(current, result)
            if state in TERMINAL_STATES:
                current.finished_at.FromDatetime(_now())
            current.state = state
            return True

        await records.mutate(record.id, change)
