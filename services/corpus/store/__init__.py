"""A store's corpus state: the file catalog, content-addressed bodies, raw memories and source
chunks. One vector store (an Edge shard folder, or a Qdrant server) holds both collections."""

from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

from services.corpus.store.blobs import BlobStore
from services.corpus.store.catalog import Catalog, FileRecord
from services.corpus.store.raw import RawStore
from services.corpus.store.source import SourceStore
from services.runtime.embedding import EmbeddingIdentity, reembedding
from services.runtime.fts import FtsIndex
from services.runtime.stores import OpenStores
from services.runtime.vectorstore import VectorStore, open_vector_store

__all__ = ["Catalog", "CorpusStore", "FileRecord", "corpus_registry"]


@dataclass
class CorpusStore:
    root: Path
    catalog: Catalog
    blobs: BlobStore
    raw: RawStore
    source: SourceStore
    vectors: VectorStore
    # Serialises whole-file operations (ingest, delete, move) per store.
    lock: threading.RLock
    # The model the vectors are being rebuilt for (services.corpus.reembed); until it is
    # done, raw and source searches leave the vectors alone.
    reembedding_to: EmbeddingIdentity | None = None

    @classmethod
    def open(
        cls,
        root: Path,
        dimension: int,
        *,
        backend: str = "edge",
        qdrant_url: str = "",
        qdrant_api_key: str = "",
    ) -> CorpusStore:
        root.mkdir(parents=True, exist_ok=True)
        vectors = open_vector_store(
            backend, path=root / "vectors", url=qdrant_url, api_key=qdrant_api_key
        )
        raw_keywords = FtsIndex(root / "raw_keywords.sqlite", columns=("content",))
        source_keywords = FtsIndex(root / "source_keywords.sqlite", columns=("path", "content"))
        # One Qdrant server holds every store: there the collection names carry the store.
        prefix = "" if backend == "edge" else f"engram_{root.name.replace('.', '_')}_"
        return cls(
            root=root,
            catalog=Catalog(root / "catalog.sqlite"),
            blobs=BlobStore(root / "_corpus"),
            raw=RawStore(vectors, raw_keywords, dimension, f"{prefix}raw"),
            source=SourceStore(vectors, source_keywords, dimension, f"{prefix}source"),
            vectors=vectors,
            lock=threading.RLock(),
            reembedding_to=reembedding(root),
        )

    def close(self) -> None:
        self.raw.close()
        self.source.close()
        self.catalog.close()
        self.vectors.close()

    def drop(self) -> None:
        """Delete everything of this store (collections first: on a server they outlive us)."""
        self.raw.collection.drop()
        self.source.drop()
        self.close()
        shutil.rmtree(self.root, ignore_errors=True)


def corpus_registry(
    data_root: Path, *, backend: str = "edge", qdrant_url: str = "", qdrant_api_key: str = ""
) -> OpenStores[CorpusStore]:
    def open_store(root: Path, dimension: int) -> CorpusStore:
        return CorpusStore.open(
            root, dimension, backend=backend, qdrant_url=qdrant_url, qdrant_api_key=qdrant_api_key
        )

    return OpenStores(data_root, open_store)
