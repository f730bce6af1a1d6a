"""Running a tier process: serve until SIGTERM/SIGINT, then stop gracefully."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable, Coroutine
from typing import Any

from threadpoolctl import threadpool_limits

from services.runtime.grpc_server import TierServer

logger = logging.getLogger(__name__)


def single_threaded_blas() -> None:
    """Run numpy's BLAS on one thread in this process, from now on.

    A tier's linear algebra is small (a hundred candidates' vectors, a query's features)
    and runs on many request threads at once. OpenBLAS's own thread pool then costs far more
    than it gives: topical neighbourhoods of 100 candidates took 20 ms p50 with its default
    threads on a busy 2-core machine and 0.8 ms with one. Torch (the embedder) keeps its own
    OpenMP threads; this limits BLAS libraries only.
    """
    threadpool_limits(limits=1, user_api="blas")


async def serve_until_signalled(
    tier: TierServer,
    *,
    grace_s: float,
    on_started: Callable[[], Coroutine[Any, Any, None]] | None = None,
    on_stopping: Callable[[], Coroutine[Any, Any, None]] | None = None,
) -> None:
    """Start `tier`, run `on_started` (e.g. load the model, then report SERVING), and block
    until SIGTERM or SIGINT; then report NOT_SERVING, drain in-flight RPCs within `grace_s`
    and run `on_stopping`.
    """
    single_threaded_blas()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    await tier.start()
    logger.info("listening", extra={"port": tier.port, "services": list(tier.service_names)})
    startup: asyncio.Task[None] | None = None
    if on_started is not None:
        startup = asyncio.create_task(on_started())
        startup.add_done_callback(lambda task: _stop_on_failure(task, stop))
    await stop.wait()
    logger.info("stopping", extra={"grace_s": grace_s})
    if startup is not None and not startup.done():
        startup.cancel()
    await tier.stop(grace_s)
    if on_stopping is not None:
        await on_stopping()
    logger.info("stopped")
    if startup is not None and startup.done() and not startup.cancelled():
        failure = startup.exception()
        if failure is not None:
            raise SystemExit(f"start-up failed: {failure}")


def _stop_on_failure(task: asyncio.Task[None], stop: asyncio.Event) -> None:
    if task.cancelled():
        return
    error = task.exception()
    if error is not None:
        logger.error("start-up failed: %s", error, exc_info=error)
        stop.set()
