"""The jobs the gateway can see: ingest jobs (corpus queue) and compose jobs (authoring queue).

Job ids are random (uuid4 hex), so one id names one job across both queues; a lookup asks
each queue in turn.
"""

from __future__ import annotations

import builtins
from collections.abc import AsyncIterator, Sequence

from engram.v1 import common_pb2

from services.runtime.errors import NotFound
from services.runtime.jobs import JobQueue


class JobBoard:
    """get / list / cancel / watch over several job queues."""

    def __init__(self, queues: Sequence[JobQueue]) -> None:
        self.queues = tuple(queues)

    async def close(self) -> None:
        for queue in self.queues:
            await queue.close()

    async def _find(self, job_id: str) -> tuple[JobQueue, common_pb2.Job]:
        for queue in self.queues:
            try:
                return queue, await queue.get(job_id)
            except NotFound:
                continue
        raise NotFound(
            f"no job {job_id!r}: check the id (finished jobs are kept "
            f"{self.queues[0].retention_s / 86400:g} days)"
        )

    async def get(self, job_id: str) -> common_pb2.Job:
        return (await self._find(job_id))[1]

    async def cancel(self, job_id: str) -> common_pb2.Job:
        queue, _ = await self._find(job_id)
        return await queue.cancel(job_id)

    async def events(self, job_id: str, *, poll_s: float) -> AsyncIterator[common_pb2.Job]:
        queue, _ = await self._find(job_id)
        async for record in queue.events(job_id, poll_s=poll_s):
            yield record

    async def list(self, stores: Sequence[str] | None, limit: int) -> builtins.list[common_pb2.Job]:
        """The newest jobs first: of `stores`, or of every store when None."""
        found: builtins.list[common_pb2.Job] = []
        for queue in self.queues:
            if stores is None:
                found += await queue.list(None, limit)
            else:
                for store in stores:
                    found += await queue.list(store, limit)
        found.sort(key=lambda r: r.created_at.ToNanoseconds(), reverse=True)
        return found[:limit]
