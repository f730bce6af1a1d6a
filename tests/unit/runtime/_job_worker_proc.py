"""A job worker as a real process, for the crash test: `python -m <this> URL QUEUE MARKER`.

Its one handler, `crashable`, counts attempts under MARKER; on the first attempt it stays
inside the job (reporting progress) until the test kills the process; later attempts write
an idempotent result and count completions. SIGTERM stops the worker gracefully.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any

import redis.asyncio as aioredis
from engram.v1 import common_pb2

from services.runtime.jobs import JobContext, JobWorker

# Long enough for any test to kill us; bounded so a forgotten process ends on its own.
_FIRST_ATTEMPT_MAX_S = 30.0


async def main(url: str, queue_name: str, marker: str) -> None:
    client: aioredis.Redis = aioredis.Redis.from_url(url)

    async def crashable(ctx: JobContext, payload: dict[str, Any]) -> common_pb2.ReembedResult:
        await client.incr(f"{marker}:attempts")
        if ctx.attempt == 1:
            await client.set(f"{marker}:inside", "1")
            loop = asyncio.get_running_loop()
            deadline = loop.time() + _FIRST_ATTEMPT_MAX_S
            while loop.time() < deadline:
                await ctx.report(message="working")
                await asyncio.sleep(0.05)
        await client.set(f"{marker}:result", payload["value"])
        await client.incr(f"{marker}:completions")
        return common_pb2.ReembedResult(model=f"attempt {ctx.attempt}")

    worker = JobWorker(
        url,
        queue_name,
        {"crashable": crashable},
        lease_s=1.0,
        poll_delay_s=0.05,
        report_interval_s=0.05,
    )
    stopping: list[asyncio.Task[None]] = []
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(
        signal.SIGTERM, lambda: stopping.append(asyncio.create_task(worker.close()))
    )
    try:
        await worker.run()
    finally:
        await client.aclose()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
