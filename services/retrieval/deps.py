"""What the retrieval servicer needs, wired once by `__main__` (or a test)."""

from __future__ import annotations

import asyncio
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path

from services.embedder.client import EmbedderClient
from services.retrieval.pool import DrawerPool, PoolRegistry
from services.retrieval.reembed import Reembeds
from services.retrieval.retrieval_log import RetrievalLog
from services.retrieval.search import SearchEngine
from services.retrieval.settings import RetrievalSettings
from services.retrieval.tokens import TokenCounter
from services.runtime.errors import EngramError
from services.runtime.stores import store_dir

logger = logging.getLogger(__name__)


@dataclass
class RetrievalDeps:
    settings: RetrievalSettings
    pools: PoolRegistry
    embedder: EmbedderClient
    engine: SearchEngine
    tokens: TokenCounter
    _logs: dict[str, RetrievalLog] = field(default_factory=dict)
    _logs_lock: threading.Lock = field(default_factory=threading.Lock)
    _builds: set[asyncio.Task[None]] = field(default_factory=set)
    # Stores whose vectors are being rebuilt for a new embedding model.
    reembeds: Reembeds = field(default_factory=Reembeds)

    @property
    def data_root(self) -> Path:
        return self.settings.data_dir

    def log_for(self, store: str) -> RetrievalLog:
        """The store's retrieval log (one writer per store per process)."""
        with self._logs_lock:
            log = self._logs.get(store)
            if log is None:
                log = self._logs[store] = RetrievalLog(store_dir(self.data_root, store))
            return log

    def schedule_index_build(self, pool: DrawerPool) -> None:
        """After a write: build the pool's ANN index in the background when enough points
        lie outside it (a child process does the work; searches and writes go on)."""
        if pool.index.building or not pool.index.needs_build():
            return

        async def build() -> None:
            try:
                report = await pool.index.build_if_needed()
            except EngramError as error:
                logger.warning("background index build failed: %s", error.message)
                return
            if report is not None:
                logger.info("background index build finished", extra={"report": str(report)})

        task = asyncio.get_running_loop().create_task(build())
        self._builds.add(task)
        task.add_done_callback(self._builds.discard)

    async def wait_for_builds(self) -> None:
        """Let running index builds end (shutdown, tests)."""
        if self._builds:
            await asyncio.gather(*self._builds, return_exceptions=True)
