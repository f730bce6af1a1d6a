"""Source chunks: a separate collection (code and reference documents), searched by similarity
or by the same fusion of cosine and keyword evidence as raw memories. It never enters the
drawer pool and is never scored like drawers.

`sync` reconciles a source set by content hash: a chunk's id is derived from the source name,
the file path, the chunk's content hash and its occurrence, so an unchanged chunk keeps its id
and is neither re-embedded nor rewritten; only new chunks are embedded, and chunks that are
no longer produced are deleted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from services.runtime.drift import Drift, rebuilt_if_drifted
from services.runtime.fts import FtsIndex
from services.runtime.fusion import FusedHit
from services.runtime.hybrid import HybridCollection
from services.runtime.vectorstore import FieldEquals, Filter, VectorPoint, VectorStore

COLLECTION = "source"
Embed = Callable[[list[str]], Awaitable[npt.NDArray[np.float32]]]

# What `SourceStore.check` compares, as its findings name them.
PART_KEYWORDS = "source chunks: vectors ↔ keyword rows"
PART_INDEX = "source chunks: source-set index ↔ vectors"


@dataclass(frozen=True)
class SourceChunk:
    source: str
    path: str
    content: str
    line_start: int
    line_end: int

    @property
    def content_hash(self) -> str:
        return hashlib.sha256(self.content.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class SyncReport:
    added: int
    unchanged: int
    removed: int
    files_seen: int


def chunk_source(
    source: str, path: str, text: str, *, lines_per_chunk: int = 40, overlap: int = 5
) -> list[SourceChunk]:
    """Windows of `lines_per_chunk` lines (overlapping by `overlap`), blank windows skipped.
    Line windows keep code readable and give exact line anchors for citations."""
    lines = text.splitlines()
    step = max(1, lines_per_chunk - overlap)
    chunks = []
    for start in range(0, max(len(lines), 1), step):
        window = lines[start : start + lines_per_chunk]
        if any(line.strip() for line in window):
            chunks.append(
                SourceChunk(source, path, "\n".join(window), start + 1, start + len(window))
            )
        if start + lines_per_chunk >= len(lines):
            break
    return chunks


def source_chunk_id(chunk: SourceChunk, occurrence: int) -> str:
    key = f"{chunk.source}\x00{chunk.path}\x00{chunk.content_hash}\x00{occurrence}"
    return f"s_{hashlib.sha256(key.encode()).hexdigest()[:24]}"


def _keyword_row(chunk_id: str, payload: Mapping[str, Any]) -> dict[str, str]:
    return {"id": chunk_id, "path": payload.get("path", ""), "content": payload.get("content", "")}


class SourceStore:
    """The source-chunk collection of one store: vectors in Qdrant, keywords (path and content)
    in an FTS5 sidecar written in step (`HybridCollection`). A sidecar that is missing or
    behind (a store written before it existed) is rebuilt from the payloads on open."""

    def __init__(
        self,
        vectors: VectorStore,
        keywords: FtsIndex,
        dimension: int,
        collection: str = COLLECTION,
    ) -> None:
        self.collection = HybridCollection(
            vectors, collection, dimension, keywords=keywords, keyword_row=_keyword_row
        )
        payloads, _ = self.collection.reconcile()
        # chunk id -> its source set: scopes keyword search and finds a set's chunks on sync.
        self._source_of = {i: str(p.get("source", "")) for i, p in payloads.items()}

    def _ids_of(self, source: str) -> list[str]:
        return [i for i, s in self._source_of.items() if s == source]

    async def sync(
        self, source: str, chunks: Sequence[SourceChunk], files_seen: int, embed: Embed
    ) -> SyncReport:
        """Make the source set's chunks exactly `chunks`, embedding only what changed."""
        wanted: dict[str, SourceChunk] = {}
        seen: dict[tuple[str, str], int] = {}
        for chunk in chunks:
            key = (chunk.path, chunk.content_hash)
            occurrence = seen.get(key, 0)
            seen[key] = occurrence + 1
            wanted[source_chunk_id(chunk, occurrence)] = chunk
        existing = set(self._ids_of(source))
        new_ids = [i for i in wanted if i not in existing]
        stale = sorted(existing - wanted.keys())
        vectors = await embed([wanted[i].content for i in new_ids]) if new_ids else None
        with self.collection.lock:
            if vectors is not None:
                self.collection.upsert(
                    [VectorPoint(i, vectors[n], _payload(wanted[i])) for n, i in enumerate(new_ids)]
                )
                self._source_of.update(dict.fromkeys(new_ids, source))
            self.collection.delete(stale)
            for chunk_id in stale:
                self._source_of.pop(chunk_id, None)
        return SyncReport(
            added=len(new_ids),
            unchanged=len(wanted) - len(new_ids),
            removed=len(stale),
            files_seen=files_seen,
        )

    def search(
        self, vector: npt.NDArray[np.float32], *, limit: int, source: str = ""
    ) -> list[FusedHit]:
        """Similarity only, best first."""
        hits = self.collection.search(vector, limit=limit, flt=_scope(source), exact=True)
        return [FusedHit(h.id, h.score, h.score, False) for h in hits]

    def search_fused(
        self,
        vector: npt.NDArray[np.float32],
        text: str,
        *,
        limit: int,
        depth: int,
        source: str = "",
    ) -> list[FusedHit]:
        """Both retrievers, `depth` candidates each, ranked by fused relevance: an identifier
        or a file name the query names counts, not only what the text is about."""
        return self.collection.search_fused(
            vector,
            text,
            limit=limit,
            depth=depth,
            flt=_scope(source),
            allowed_ids=self._ids_of(source) if source else None,
        )

    def keyword_only(self, text: str, *, limit: int, source: str = "") -> list[FusedHit]:
        """The keyword index alone (while the vectors are rebuilt for another model)."""
        return self.collection.keyword_only(
            text, limit=limit, allowed_ids=self._ids_of(source) if source else None
        )

    def check(self, *, repair: bool) -> tuple[int, list[Drift]]:
        """How the keyword rows and the chunk → source-set index differ from the stored
        chunks (`engram doctor`); `repair` mends both. Returns the chunks compared."""
        with self.collection.lock:
            payloads, drifts = self.collection.check(PART_KEYWORDS, repair=repair)
            stored = {i: str(p.get("source", "")) for i, p in payloads.items()}

            def rebuild() -> None:
                self._source_of = stored

            drifts += rebuilt_if_drifted(
                PART_INDEX,
                "source chunks the source-set index does not know, knows but are gone, or "
                "files under another set",
                stored,
                self._source_of,
                "rebuild the index from the stored chunks",
                repair=repair,
                rebuild=rebuild,
            )
            return len(payloads), drifts

    def ids(self) -> list[str]:
        return list(self._source_of)

    def get(self, ids: Sequence[str]) -> dict[str, SourceChunk]:
        return {i: _chunk(p) for i, p in self.collection.retrieve(ids)}

    def drop(self, *, keep_shared: bool = False) -> None:
        self.collection.drop(keep_shared=keep_shared)

    def close(self) -> None:
        self.collection.close()


def _scope(source: str) -> Filter | None:
    return Filter(must=[FieldEquals("source", source)]) if source else None


def _payload(chunk: SourceChunk) -> dict[str, Any]:
    return {
        "source": chunk.source,
        "path": chunk.path,
        "content": chunk.content,
        "line_start": chunk.line_start,
        "line_end": chunk.line_end,
        "content_hash": chunk.content_hash,
    }


def _chunk(payload: dict[str, Any]) -> SourceChunk:
    return SourceChunk(
        source=payload["source"],
        path=payload["path"],
        content=payload["content"],
        line_start=int(payload["line_start"]),
        line_end=int(payload["line_end"]),
    )
