"""Source chunks: a separate, similarity-only collection (code and reference documents). It
never enters the drawer pool and is never scored.

`sync` reconciles a source set by content hash: a chunk's id is derived from the source name,
the file path, the chunk's content hash and its occurrence, so an unchanged chunk keeps its id
and is neither re-embedded nor rewritten; only new chunks are embedded, and chunks that are
no longer produced are deleted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from services.runtime.vectorstore import FieldEquals, Filter, VectorPoint, VectorStore

COLLECTION = "source"
Embed = Callable[[list[str]], Awaitable[npt.NDArray[np.float32]]]


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


class SourceStore:
    """The source-chunk collection of one store."""

    def __init__(self, vectors: VectorStore, dimension: int, collection: str = COLLECTION) -> None:
        self._vectors = vectors
        self._collection = collection
        vectors.ensure_collection(collection, dimension)

    def _ids_of(self, source: str) -> set[str]:
        ids: set[str] = set()
        offset: str | None = None
        flt = Filter(must=[FieldEquals("source", source)])
        while True:
            points, offset = self._vectors.scroll(
                self._collection, flt=flt, limit=1024, offset=offset
            )
            ids.update(p.id for p in points)
            if offset is None:
                return ids

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
        existing = self._ids_of(source)
        new_ids = [i for i in wanted if i not in existing]
        stale = sorted(existing - wanted.keys())
        if new_ids:
            vectors = await embed([wanted[i].content for i in new_ids])
            self._vectors.upsert(
                self._collection,
                [VectorPoint(i, vectors[n], _payload(wanted[i])) for n, i in enumerate(new_ids)],
            )
        if stale:
            self._vectors.delete(self._collection, stale)
        return SyncReport(
            added=len(new_ids),
            unchanged=len(wanted) - len(new_ids),
            removed=len(stale),
            files_seen=files_seen,
        )

    def search(
        self, vector: npt.NDArray[np.float32], *, limit: int, source: str = ""
    ) -> list[tuple[SourceChunk, float]]:
        flt = Filter(must=[FieldEquals("source", source)]) if source else None
        hits = self._vectors.search(self._collection, vector, limit=limit, flt=flt, exact=True)
        return [(_chunk(h.payload), h.score) for h in hits]

    def drop(self) -> None:
        self._vectors.drop_collection(self._collection)


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
