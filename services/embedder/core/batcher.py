"""Dynamic batching: concurrent embed requests are coalesced into one model call.

Requests queue up; one loop takes as many as fit in `max_batch` texts, waiting at most
`max_wait_s` after the first arrives for company, and runs a single model call for them in a
dedicated thread (so the event loop stays free to accept more). While a call runs, the next
batch gathers, so under load batches fill without any waiting at all.

Backpressure: with `max_queued_texts`, a request that would queue more texts than that is
refused at once (`Overloaded`, with when the queue should have drained at the rate measured so
far) rather than left to wait past its caller's deadline. A request arriving at an empty queue
is always taken, however large.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from services.runtime.errors import Overloaded

logger = logging.getLogger(__name__)

EncodeFn = Callable[[list[str]], npt.NDArray[np.float32]]

# How the measured model rate is smoothed, and what it is taken to be before a call is timed.
RATE_SMOOTHING = 0.2
FIRST_RATE_GUESS = 100.0
# The shortest wait a refused caller is told.
MIN_RETRY_S = 0.5


@dataclass
class _Pending:
    texts: list[str]
    future: asyncio.Future[npt.NDArray[np.float32]]


@dataclass
class BatcherStats:
    """Counters the tests and benchmarks read (never timings in tests)."""

    requests: int = 0
    texts: int = 0
    model_calls: int = 0
    largest_batch: int = 0
    refused: int = 0  # requests turned away by max_queued_texts
    batch_sizes: list[int] = field(default_factory=list)

    def record(self, size: int) -> None:
        self.model_calls += 1
        self.largest_batch = max(self.largest_batch, size)
        if len(self.batch_sizes) < 10_000:
            self.batch_sizes.append(size)


class DynamicBatcher:
    """Coalesces concurrent `embed` calls into batched calls of `encode`."""

    def __init__(
        self,
        encode: EncodeFn,
        *,
        max_batch: int,
        max_wait_s: float,
        enabled: bool = True,
        max_queued_texts: int = 0,
    ) -> None:
        self._encode = encode
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self.enabled = enabled
        self.max_queued_texts = max_queued_texts
        # Texts a second the model has managed, smoothed (a first guess until measured).
        self.texts_per_s = FIRST_RATE_GUESS
        self.stats = BatcherStats()
        self._queue: deque[_Pending] = deque()
        self._wakeup = asyncio.Event()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed")
        self._loop_task: asyncio.Task[None] | None = None
        self._closed = False

    def start(self) -> None:
        """Start the batching loop on the running event loop."""
        if self._loop_task is None:
            self._loop_task = asyncio.get_running_loop().create_task(self._run())

    async def close(self) -> None:
        """Stop the loop; pending requests fail with a clear error."""
        self._closed = True
        if self._loop_task is not None:
            self._loop_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._loop_task
        while self._queue:
            pending = self._queue.popleft()
            if not pending.future.done():
                pending.future.set_exception(RuntimeError("embedder is shutting down"))
        self._executor.shutdown(wait=False, cancel_futures=True)

    async def embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Vectors for `texts`, computed in whatever batch they happen to join."""
        if self._closed:
            raise RuntimeError("embedder is shutting down")
        self.stats.requests += 1
        self.stats.texts += len(texts)
        if not self.enabled:
            return await self._call_model(texts)
        self._refuse_when_full(len(texts))
        self.start()
        future: asyncio.Future[npt.NDArray[np.float32]] = asyncio.get_running_loop().create_future()
        self._queue.append(_Pending(texts, future))
        self._wakeup.set()
        return await future

    def _refuse_when_full(self, arriving: int) -> None:
        queued = self._queued_texts()
        if not self.max_queued_texts or not queued or queued + arriving <= self.max_queued_texts:
            return
        self.stats.refused += 1
        wait = max(MIN_RETRY_S, queued / max(self.texts_per_s, 1.0))
        raise Overloaded(
            f"the embedder has {queued} texts waiting (the limit is {self.max_queued_texts}, "
            f"ENGRAM_EMBEDDER_MAX_QUEUED_TEXTS); retry in about {wait:.0f} s",
            retry_after_s=wait,
        )

    async def _call_model(self, texts: list[str]) -> npt.NDArray[np.float32]:
        self.stats.record(len(texts))
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        vectors = await loop.run_in_executor(self._executor, self._encode, texts)
        elapsed = time.monotonic() - started
        if elapsed > 0:
            rate = len(texts) / elapsed
            self.texts_per_s = RATE_SMOOTHING * rate + (1 - RATE_SMOOTHING) * self.texts_per_s
        return vectors

    async def _run(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            while self._queue:
                await self._gather()
                batch = self._take_batch()
                await self._dispatch(batch)

    async def _gather(self) -> None:
        """Wait (bounded) for the queue to reach a full batch."""
        deadline = time.monotonic() + self.max_wait_s
        while self._queued_texts() < self.max_batch:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            self._wakeup.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wakeup.wait(), remaining)

    def _queued_texts(self) -> int:
        return sum(len(p.texts) for p in self._queue)

    def _take_batch(self) -> list[_Pending]:
        """Whole requests, in arrival order, up to max_batch texts (a larger request alone)."""
        batch: list[_Pending] = []
        size = 0
        while self._queue:
            nxt = self._queue[0]
            if batch and size + len(nxt.texts) > self.max_batch:
                break
            self._queue.popleft()
            if nxt.future.cancelled():
                continue
            batch.append(nxt)
            size += len(nxt.texts)
        return batch

    async def _dispatch(self, batch: list[_Pending]) -> None:
        if not batch:
            return
        texts = [text for pending in batch for text in pending.texts]
        try:
            vectors = await self._call_model(texts)
        except Exception as error:  # one failed model call fails exactly the requests in it
            logger.exception("model call failed for a batch of %d texts", len(texts))
            for pending in batch:
                if not pending.future.done():
                    pending.future.set_exception(error)
            return
        offset = 0
        for pending in batch:
            rows = vectors[offset : offset + len(pending.texts)]
            offset += len(pending.texts)
            if not pending.future.done():
                pending.future.set_result(rows)
