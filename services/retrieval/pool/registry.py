"""Open pools by store name: each store's pool is opened once, on first use, and kept."""

from __future__ import annotations

import threading
from pathlib import Path

from services.retrieval.pool.pool import DrawerPool, PoolLocation
from services.runtime.errors import Unavailable
from services.runtime.stores import store_dir


class PoolRegistry:
    """The pools this retrieval process serves, keyed by store name."""

    def __init__(
        self,
        data_root: Path,
        *,
        dimension: int | None = None,
        backend: str = "edge",
        qdrant_url: str = "",
        qdrant_api_key: str = "",
    ) -> None:
        self._root = data_root
        self._dimension = dimension
        self._backend = backend
        self._url = qdrant_url
        self._api_key = qdrant_api_key
        self._pools: dict[str, DrawerPool] = {}
        self._lock = threading.Lock()

    def set_dimension(self, dimension: int) -> None:
        """The embedding dimension, known once the embedder has answered."""
        self._dimension = dimension

    def get(self, store: str) -> DrawerPool:
        """The store's pool, opened (and reconciled) on first use."""
        with self._lock:
            pool = self._pools.get(store)
            if pool is None:
                if self._dimension is None:
                    raise Unavailable("the retrieval tier is waiting for the embedder; retry")
                location = PoolLocation(
                    store_dir(self._root, store), self._backend, self._url, self._api_key
                )
                pool = self._pools[store] = DrawerPool(location, self._dimension)
            return pool

    def drop(self, store: str) -> bool:
        """Delete a store's pool from disk. True when there was one."""
        pool = self.get(store)
        with self._lock:
            self._pools.pop(store, None)
        existed = pool.count() > 0 or pool.location.root.exists()
        pool.drop()
        return existed

    def close(self) -> None:
        with self._lock:
            pools, self._pools = list(self._pools.values()), {}
        for pool in pools:
            pool.close()
