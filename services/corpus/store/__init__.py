"""A store's corpus state: the file catalog, content-addressed bodies, raw memories and source
chunks. One vector store (an Edge shard folder, or a Qdrant server) holds both collections."""

from __future__ import annotations

import shutil
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from services.corpus.store import raw as raw_parts
from services.corpus.store import source as source_parts
from services.corpus.store.blobs import BlobStore
from services.corpus.store.catalog import Catalog, FileRecord
from services.corpus.store.raw import ChunkMeta, RawStore
from services.corpus.store.source import SourceStore
from services.runtime.drift import Drift, found
from services.runtime.embedding import EmbeddingIdentity, reembedding
from services.runtime.fts import FtsIndex
from services.runtime.snapshot import StoreParts
from services.runtime.stores import OpenStores
from services.runtime.vectorstore import QdrantTopology, VectorStore, open_vector_store

__all__ = ["CHECKED_PARTS", "Catalog", "CorpusStore", "FileRecord", "corpus_registry"]

# What `CorpusStore.check` compares beyond the raw and source collections.
PART_CHUNKS = "corpus: file catalog ↔ raw chunks"
PART_BODIES = "corpus: file catalog ↔ stored bodies"
CHECKED_PARTS = (
    raw_parts.PART_KEYWORDS,
    raw_parts.PART_INDEX,
    source_parts.PART_KEYWORDS,
    source_parts.PART_INDEX,
    PART_CHUNKS,
    PART_BODIES,
)
INGESTED = ("ingested", "authored")  # states whose chunk count the catalog vouches for
BODY_MISSING = "its body is missing from the store: upload the file again"
# A body younger than this may belong to an upload whose catalog entry is not written yet.
SETTLED_S = 600.0


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
        qdrant_topology: QdrantTopology | None = None,
    ) -> CorpusStore:
        root.mkdir(parents=True, exist_ok=True)
        vectors = open_vector_store(
            backend,
            path=root / "vectors",
            url=qdrant_url,
            api_key=qdrant_api_key,
            topology=qdrant_topology,
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

    def check(self, *, repair: bool) -> tuple[int, list[Drift]]:
        """How the store's parts differ (`engram doctor`): raw and source chunks against
        their keyword rows and in-memory indexes, the catalog's chunk counts against the
        chunks stored, and the catalog against the stored bodies. With `repair`, each is
        mended as its finding's remedy says. Returns the items compared and the findings."""
        with self.lock:
            chunks, drifts = self.raw.check(repair=repair)
            sources, source_drifts = self.source.check(repair=repair)
            drifts += source_drifts
            files = self.catalog.files()
            drifts += self._check_chunk_counts(files, chunks, repair)
            drifts += self._check_bodies(files, repair)
            return len(chunks) + sources + len(files), drifts

    def _check_chunk_counts(
        self, files: list[FileRecord], chunks: dict[str, ChunkMeta], repair: bool
    ) -> list[Drift]:
        stored = Counter(m.file_id for m in chunks.values() if m.file_id)
        miscounted = [f for f in files if f.state in INGESTED and stored[f.id] != f.chunk_count]
        if repair:
            for record in miscounted:
                if stored[record.id]:
                    self.catalog.update(record.id, chunk_count=stored[record.id])
                else:
                    self.catalog.update(record.id, state="uploaded", chunk_count=0)
        return found(
            PART_CHUNKS,
            "ingested files whose raw chunks stored are not as many as the catalog says",
            [f.id for f in miscounted],
            "set each count to the chunks stored; a file with none goes back to 'uploaded' "
            "(ingest it again)",
            repaired=repair,
        )

    def _check_bodies(self, files: list[FileRecord], repair: bool) -> list[Drift]:
        lost = [
            f for f in files if f.last_error != BODY_MISSING and not self.blobs.exists(f.sha256)
        ]
        if repair:
            for record in lost:
                self.catalog.update(record.id, state="failed", last_error=BODY_MISSING)
        referenced = {f.sha256 for f in files}
        unreferenced = [s for s in self.blobs.stored(SETTLED_S) if s not in referenced]
        if repair:
            for sha in unreferenced:
                self.blobs.delete(sha)
        return [
            *found(
                PART_BODIES,
                "files whose body is missing from the store",
                [f.id for f in lost],
                f"mark them failed ({BODY_MISSING!r}); the body cannot be recovered here",
                repaired=repair,
            ),
            *found(
                PART_BODIES,
                "stored bodies no file refers to (a crash between storing an upload and "
                "cataloguing it, or a delete cut short)",
                unreferenced,
                "delete those bodies",
                repaired=repair,
            ),
        ]

    def snapshot_parts(self) -> StoreParts:
        """What a backup of this corpus holds (services.runtime.snapshot): the catalog, the
        bodies and the raw and source points; the vector engine's folder and the keyword
        sidecars are rebuilt from the points on restore."""
        return StoreParts(
            folder=self.root,
            collections={"raw": self.raw.collection, "source": self.source.collection},
            derived=frozenset({"vectors", "raw_keywords.sqlite", "source_keywords.sqlite"}),
            locks=(self.lock, self.raw.collection.lock, self.source.collection.lock),
        )

    def close(self) -> None:
        self.raw.close()
        self.source.close()
        self.catalog.close()
        self.vectors.close()

    def drop(self, *, keep_shared: bool = False) -> None:
        """Delete everything of this store (collections first: on a server they outlive us;
        `keep_shared` keeps those, for a store moving to another replica)."""
        self.raw.collection.drop(keep_shared=keep_shared)
        self.source.drop(keep_shared=keep_shared)
        self.close()
        shutil.rmtree(self.root, ignore_errors=True)


def corpus_registry(
    data_root: Path,
    *,
    backend: str = "edge",
    qdrant_url: str = "",
    qdrant_api_key: str = "",
    qdrant_topology: QdrantTopology | None = None,
) -> OpenStores[CorpusStore]:
    def open_store(root: Path, dimension: int) -> CorpusStore:
        return CorpusStore.open(
            root,
            dimension,
            backend=backend,
            qdrant_url=qdrant_url,
            qdrant_api_key=qdrant_api_key,
            qdrant_topology=qdrant_topology,
        )

    return OpenStores(data_root, open_store)
