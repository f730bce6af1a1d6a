"""Vector storage for every tier: one small interface, two Qdrant adapters.

    store = open_vector_store("edge", path=data_root / store_name / "vectors")
    store.ensure_collection("drawers", 384)
    store.upsert("drawers", [VectorPoint("d_3f2a", embedding, {"wing": "eng"})])
    hits = store.search("drawers", query, limit=20, flt=Filter([FieldEquals("wing", "eng")]))

"edge" is Qdrant Edge in-process (one machine, tests); "qdrant" is qdrant-client against a
server (production), or its local mode with url ":memory:" (tests only).
"""

from __future__ import annotations

from pathlib import Path

from services.runtime.errors import InvalidInput
from services.runtime.vectorstore.base import (
    Condition,
    FieldEquals,
    FieldIn,
    FieldNotEquals,
    FieldRange,
    Filter,
    StoredPoint,
    VectorHit,
    VectorLike,
    VectorPoint,
    VectorStore,
)
from services.runtime.vectorstore.topology import QdrantTopology

BACKENDS = ("edge", "qdrant")

__all__ = [
    "BACKENDS",
    "Condition",
    "FieldEquals",
    "FieldIn",
    "FieldNotEquals",
    "FieldRange",
    "Filter",
    "QdrantTopology",
    "StoredPoint",
    "VectorHit",
    "VectorLike",
    "VectorPoint",
    "VectorStore",
    "open_vector_store",
]


def open_vector_store(
    backend: str,
    *,
    path: Path | None,
    url: str = "",
    api_key: str = "",
    topology: QdrantTopology | None = None,
) -> VectorStore:
    """Open the vector store of `backend`.

    edge: collections are shards under `path` (required). qdrant: `url` names the server
    (`http://qdrant:6333`), or ":memory:" for qdrant-client's in-memory local mode; with no
    url, `path` holds a local-mode store on disk.
    """
    # Imported here so a tier that uses one backend never loads the other's engine.
    if backend == "edge":
        if path is None:
            raise InvalidInput("the edge vector store needs a path to keep its shards in")
        from services.runtime.vectorstore.edge import EdgeVectorStore

        return EdgeVectorStore(path)
    if backend == "qdrant":
        from services.runtime.vectorstore.remote import QdrantVectorStore

        return QdrantVectorStore(url=url, api_key=api_key, path=path, topology=topology)
    raise InvalidInput(
        f"unknown vector store backend {backend!r}: use one of {', '.join(BACKENDS)}",
        field="backend",
    )
