"""The drawer pools of one retrieval process, opened by store name on first use."""

from __future__ import annotations

from pathlib import Path

from services.retrieval.pool.pool import DrawerPool, PoolLocation
from services.runtime.stores import OpenStores
from services.runtime.vectorstore import QdrantTopology


def pool_registry(
    data_root: Path,
    *,
    backend: str = "edge",
    qdrant_url: str = "",
    qdrant_api_key: str = "",
    index_min_points: int = 20_000,
    qdrant_topology: QdrantTopology | None = None,
) -> OpenStores[DrawerPool]:
    """Pools under `data_root`, one folder a store, on the configured vector backend."""

    def open_pool(root: Path, dimension: int) -> DrawerPool:
        location = PoolLocation(
            root,
            backend,
            qdrant_url,
            qdrant_api_key,
            index_min_points,
            qdrant_topology or QdrantTopology(),
        )
        return DrawerPool(location, dimension)

    return OpenStores(data_root, open_pool)


PoolRegistry = OpenStores[DrawerPool]
