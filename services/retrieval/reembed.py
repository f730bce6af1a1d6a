"""Re-embedding a store when the embedding model changed (decision 0018): its drawers' vectors
are rebuilt in place with the model the embedder serves now, while reads go on.

A store made with another model is refused on open (services.runtime.embedding). An admin's
`ReembedStore` records the model in force as the store's re-embedding target, which opens it
again; from then until every drawer has a new vector, searches answer from the keyword index
alone (the response says so), and writes embed with the new model as usual. The run goes
through the drawers in batches, writing a new vector only for a drawer whose text did not
change meanwhile (a rewrite already embedded it with the new model). When the run ends the
new model becomes the store's and searches use vectors again. A run cut short by a restart
leaves the store in the same state; asking again starts it over (it is idempotent).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Final

from engram.v1 import retrieval_pb2

from services.embedder.client import EmbedderClient
from services.retrieval.pool import DrawerPool, PoolRegistry
from services.runtime.embedding import EmbeddingIdentity, begin_reembed, finish_reembed
from services.runtime.errors import FailedPrecondition

logger = logging.getLogger(__name__)

BATCH: Final = 256


@dataclass
class ReembedRun:
    store: str
    to: EmbeddingIdentity
    started_at: datetime
    total: int = 0
    done: int = 0
    state: str = "running"  # running | done | failed
    error: str = ""
    finished_at: datetime | None = None
    task: asyncio.Task[None] | None = field(default=None, repr=False)

    def proto(self) -> retrieval_pb2.ReembedStatus:
        status = retrieval_pb2.ReembedStatus(
            state=self.state,
            model=self.to.model,
            drawers_total=self.total,
            drawers_done=self.done,
            error=self.error,
        )
        status.started_at.FromDatetime(self.started_at)
        if self.finished_at is not None:
            status.finished_at.FromDatetime(self.finished_at)
        return status


class Reembeds:
    """The re-embedding runs of one retrieval process, one per store at a time."""

    def __init__(self) -> None:
        self._runs: dict[str, ReembedRun] = {}

    def status(self, store: str, pool: DrawerPool) -> retrieval_pb2.ReembedStatus | None:
        run = self._runs.get(store)
        if run is not None:
            return run.proto()
        if pool.reembedding_to is not None:  # begun by a process that stopped since
            return retrieval_pb2.ReembedStatus(state="interrupted", model=pool.reembedding_to.model)
        return None

    async def start(
        self,
        store: str,
        *,
        pools: PoolRegistry,
        embedder: EmbedderClient,
        on_done: Callable[[DrawerPool], None],
    ) -> retrieval_pb2.ReembedStatus:
        """Begin (or report) the store's run; `on_done` follows a finished one (an index
        build)."""
        identity = pools.embedding
        if identity is None:
            raise FailedPrecondition(
                "this tier does not know which model its embedder serves (the embedder gave no "
                "fingerprint), so its stores record no model and there is nothing to re-embed for"
            )
        running = self._runs.get(store)
        if running is not None and running.state == "running":
            return running.proto()
        moving = await asyncio.to_thread(begin_reembed, pools.folder(store), identity)
        pool = await asyncio.to_thread(pools.get, store)
        now = datetime.now(UTC)
        if not moving and pool.reembedding_to is None:
            done = ReembedRun(store, identity, now, state="done", finished_at=now)
            done.total = done.done = pool.count()
            return done.proto()
        pool.reembedding_to = identity
        run = self._runs[store] = ReembedRun(store, identity, now)
        run.task = asyncio.create_task(self._run(pools, embedder, on_done, pool, run))
        return run.proto()

    async def _run(
        self,
        pools: PoolRegistry,
        embedder: EmbedderClient,
        on_done: Callable[[DrawerPool], None],
        pool: DrawerPool,
        run: ReembedRun,
    ) -> None:
        try:
            ids = [meta.id for meta in pool.metas()]
            run.total = len(ids)
            for start in range(0, len(ids), BATCH):
                drawers = await asyncio.to_thread(pool.get_many, ids[start : start + BATCH])
                if drawers:
                    vectors = await embedder.embed([d.content for d in drawers])
                    await asyncio.to_thread(
                        pool.replace_vectors,
                        {d.id: (d.content, vectors[i]) for i, d in enumerate(drawers)},
                    )
                run.done = min(run.total, start + BATCH)
            await asyncio.to_thread(finish_reembed, pools.folder(run.store), run.to)
            pool.reembedding_to = None
            on_done(pool)
            run.state = "done"
        except Exception as error:  # the store stays keyword-only; asking again retries
            logger.exception("re-embedding store %s failed", run.store)
            run.state, run.error = "failed", str(error) or type(error).__name__
        finally:
            run.finished_at = datetime.now(UTC)

    async def close(self) -> None:
        tasks = [run.task for run in self._runs.values() if run.task and not run.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
