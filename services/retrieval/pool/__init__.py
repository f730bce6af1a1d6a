"""The drawer pool: per store, a Qdrant collection (vectors + full drawer payload) and an FTS5
sidecar (content, signature, topic), kept in step; plus an in-memory mirror of the metadata
that scoring, filters, facets and statistics read."""

from services.retrieval.pool.mirror import DrawerMeta
from services.retrieval.pool.pool import DrawerPool
from services.retrieval.pool.registry import PoolRegistry, pool_registry

__all__ = ["DrawerMeta", "DrawerPool", "PoolRegistry", "pool_registry"]
