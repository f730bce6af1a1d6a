"""What the retrieval servicer needs, wired once by `__main__` (or a test)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from services.embedder.client import EmbedderClient
from services.retrieval.pool import PoolRegistry
from services.retrieval.retrieval_log import RetrievalLog
from services.retrieval.search import SearchEngine
from services.retrieval.settings import RetrievalSettings
from services.retrieval.tokens import TokenCounter
from services.runtime.stores import store_dir


@dataclass
class RetrievalDeps:
    settings: RetrievalSettings
    pools: PoolRegistry
    embedder: EmbedderClient
    engine: SearchEngine
    tokens: TokenCounter
    _logs: dict[str, RetrievalLog] = field(default_factory=dict)
    _logs_lock: threading.Lock = field(default_factory=threading.Lock)

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
