"""Raw memories of one store: a hybrid collection (Qdrant with the RawChunk proto as payload,
FTS5 over the content) and a mirror of chunk metadata for sessions, neighbours and walkback.

Chunk ids of file chunks are derived from the file, the chunker version and the position, so
re-ingesting a file yields the same ids: the ingest replaces a file's chunks (delete the
file's old chunks, upsert the new ones), never duplicating and never orphaning.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from engram.v1 import common_pb2
from google.protobuf import json_format

from services.runtime.drift import Drift, rebuilt_if_drifted
from services.runtime.fts import FtsIndex
from services.runtime.fusion import FusedHit
from services.runtime.hybrid import HybridCollection
from services.runtime.vectorstore import FieldEquals, Filter, VectorPoint, VectorStore

COLLECTION = "raw"


def chunk_id(scope: str, version: str, ordinal: int) -> str:
    """A stable id for the `ordinal`-th chunk of `scope` (a file hash or a session)."""
    digest = hashlib.sha256(f"{scope}\x00{version}\x00{ordinal}".encode()).hexdigest()
    return f"r_{digest[:24]}"


# What `RawStore.check` compares, as its findings name them.
PART_KEYWORDS = "raw chunks: vectors ↔ keyword rows"
PART_INDEX = "raw chunks: in-memory index ↔ vectors"


@dataclass(frozen=True)
class ChunkMeta:
    id: str
    session_id: str
    file_id: str
    ordinal: int
    origin_kind: str
    occurred_at: float | None
    created_at: float

    @classmethod
    def of(cls, chunk: common_pb2.RawChunk) -> ChunkMeta:
        occurred = chunk.occurred_at.seconds if chunk.HasField("occurred_at") else None
        return cls(
            id=chunk.id,
            session_id=chunk.session_id,
            file_id=chunk.file_id,
            ordinal=chunk.ordinal,
            origin_kind=chunk.origin_kind,
            occurred_at=float(occurred) if occurred is not None else None,
            created_at=float(chunk.created_at.seconds),
        )


@dataclass(frozen=True)
class SessionSummary:
    session_id: str
    origin_kind: str
    chunk_count: int
    file_id: str
    span_start: float | None
    span_end: float | None


def _payload(chunk: common_pb2.RawChunk) -> dict[str, Any]:
    return {
        "chunk": json_format.MessageToDict(chunk, preserving_proto_field_name=True),
        "session_id": chunk.session_id,
        "file_id": chunk.file_id,
        "origin_kind": chunk.origin_kind,
    }


def _chunk(payload: Mapping[str, Any]) -> common_pb2.RawChunk:
    chunk = common_pb2.RawChunk()
    json_format.ParseDict(payload["chunk"], chunk, ignore_unknown_fields=True)
    return chunk


def _keyword_row(chunk_id_: str, payload: Mapping[str, Any]) -> dict[str, str]:
    return {"id": chunk_id_, "content": payload["chunk"].get("content", "")}


class RawStore:
    """Raw chunks of one store."""

    def __init__(
        self, vectors: VectorStore, keywords: FtsIndex, dimension: int, collection: str = COLLECTION
    ) -> None:
        self.collection = HybridCollection(
            vectors, collection, dimension, keywords=keywords, keyword_row=_keyword_row
        )
        self._meta: dict[str, ChunkMeta] = {}
        payloads, _ = self.collection.reconcile()
        self._meta = {i: ChunkMeta.of(_chunk(p)) for i, p in payloads.items()}

    # ------------------------------------------------------------------ writes

    def put(self, chunks: Sequence[common_pb2.RawChunk], vectors: npt.NDArray[np.float32]) -> None:
        points = [VectorPoint(c.id, vectors[i], _payload(c)) for i, c in enumerate(chunks)]
        with self.collection.lock:
            self.collection.upsert(points)
            for chunk in chunks:
                self._meta[chunk.id] = ChunkMeta.of(chunk)

    def replace_file(
        self,
        file_id: str,
        chunks: Sequence[common_pb2.RawChunk],
        vectors: npt.NDArray[np.float32],
    ) -> int:
        """The file's chunks become exactly `chunks`. Returns how many old ones went away."""
        with self.collection.lock:
            keep = {c.id for c in chunks}
            stale = [m.id for m in self._meta.values() if m.file_id == file_id and m.id not in keep]
            self.collection.delete(stale)
            for chunk_id_ in stale:
                self._meta.pop(chunk_id_, None)
            self.put(chunks, vectors)
            return len(stale)

    def delete_where(self, *, file_id: str = "", session_id: str = "") -> list[str]:
        """Delete every chunk of a file or a session; returns the deleted ids."""
        with self.collection.lock:
            doomed = [
                m.id
                for m in self._meta.values()
                if (file_id and m.file_id == file_id) or (session_id and m.session_id == session_id)
            ]
            self.collection.delete(doomed)
            for chunk_id_ in doomed:
                self._meta.pop(chunk_id_, None)
            return doomed

    def check(self, *, repair: bool) -> tuple[dict[str, ChunkMeta], list[Drift]]:
        """The chunks as stored, and how the keyword rows and the in-memory index of chunks
        (by file and session) differ from them (`engram doctor`); `repair` mends both."""
        with self.collection.lock:
            payloads, drifts = self.collection.check(PART_KEYWORDS, repair=repair)
            stored = {i: ChunkMeta.of(_chunk(p)) for i, p in payloads.items()}

            def rebuild() -> None:
                self._meta = dict(stored)

            drifts += rebuilt_if_drifted(
                PART_INDEX,
                "raw chunks the in-memory index (sessions, files, neighbours) does not know, "
                "knows but are gone, or knows otherwise",
                stored,
                self._meta,
                "rebuild the index from the stored chunks",
                repair=repair,
                rebuild=rebuild,
            )
            return stored, drifts

    # ------------------------------------------------------------------ reads

    def get(self, ids: Sequence[str]) -> list[common_pb2.RawChunk]:
        return [_chunk(p) for _, p in self.collection.retrieve(ids)]

    def count(self) -> int:
        return len(self._meta)

    def of_file(self, file_id: str) -> list[ChunkMeta]:
        return sorted((m for m in self._meta.values() if m.file_id == file_id), key=_order)

    def of_session(self, session_id: str) -> list[ChunkMeta]:
        return sorted((m for m in self._meta.values() if m.session_id == session_id), key=_order)

    def neighbours(self, chunk_id_: str, before: int, after: int) -> tuple[list[str], list[str]]:
        """Ids of the chunks just before and after one, in its session (of its file)."""
        meta = self._meta.get(chunk_id_)
        if meta is None:
            return [], []
        if meta.file_id:  # a file's chunks, of one session (an export holds many)
            siblings = [m for m in self.of_file(meta.file_id) if m.session_id == meta.session_id]
        else:
            siblings = self.of_session(meta.session_id)
        ids = [m.id for m in siblings]
        at = ids.index(chunk_id_)
        return ids[max(0, at - before) : at], ids[at + 1 : at + 1 + after]

    def sessions(self, *, origin_kind: str = "", file_id: str = "") -> list[SessionSummary]:
        grouped: dict[str, list[ChunkMeta]] = defaultdict(list)
        for meta in self._meta.values():
            if origin_kind and meta.origin_kind != origin_kind:
                continue
            if file_id and meta.file_id != file_id:
                continue
            grouped[meta.session_id].append(meta)
        summaries = []
        for session_id, metas in grouped.items():
            times = [m.occurred_at for m in metas if m.occurred_at is not None]
            summaries.append(
                SessionSummary(
                    session_id=session_id,
                    origin_kind=metas[0].origin_kind,
                    chunk_count=len(metas),
                    file_id=metas[0].file_id,
                    span_start=min(times) if times else None,
                    span_end=max(times) if times else None,
                )
            )
        return sorted(summaries, key=lambda s: (s.span_start or 0.0, s.session_id))

    def search(
        self,
        vector: npt.NDArray[np.float32],
        *,
        limit: int,
        session_id: str = "",
        origin_kind: str = "",
        file_id: str = "",
    ) -> list[tuple[str, float]]:
        """Similarity only: (chunk id, cosine), best first."""
        flt = _scope_filter(session_id=session_id, origin_kind=origin_kind, file_id=file_id)
        hits = self.collection.search(vector, limit=limit, flt=flt, exact=True)
        return [(h.id, h.score) for h in hits]

    def search_fused(
        self,
        vector: npt.NDArray[np.float32],
        text: str,
        *,
        limit: int,
        depth: int,
        session_id: str = "",
        origin_kind: str = "",
        file_id: str = "",
    ) -> list[FusedHit]:
        """Both retrievers, `depth` candidates each, ranked by fused relevance."""
        return self.collection.search_fused(
            vector,
            text,
            limit=limit,
            depth=depth,
            flt=_scope_filter(session_id=session_id, origin_kind=origin_kind, file_id=file_id),
            allowed_ids=self._allowed_ids(
                session_id=session_id, origin_kind=origin_kind, file_id=file_id
            ),
        )

    def keyword_only(
        self,
        text: str,
        *,
        limit: int,
        session_id: str = "",
        origin_kind: str = "",
        file_id: str = "",
    ) -> list[FusedHit]:
        """The keyword index alone (while the vectors are rebuilt for another model)."""
        return self.collection.keyword_only(
            text,
            limit=limit,
            allowed_ids=self._allowed_ids(
                session_id=session_id, origin_kind=origin_kind, file_id=file_id
            ),
        )

    def ids(self) -> list[str]:
        return list(self._meta)

    def _allowed_ids(
        self, *, session_id: str = "", origin_kind: str = "", file_id: str = ""
    ) -> list[str] | None:
        if not (session_id or origin_kind or file_id):
            return None
        return [
            m.id
            for m in self._meta.values()
            if (not session_id or m.session_id == session_id)
            and (not origin_kind or m.origin_kind == origin_kind)
            and (not file_id or m.file_id == file_id)
        ]

    def close(self) -> None:
        self.collection.close()


def _scope_filter(*, session_id: str, origin_kind: str, file_id: str) -> Filter | None:
    conditions = [
        FieldEquals(key, value)
        for key, value in (
            ("session_id", session_id),
            ("origin_kind", origin_kind),
            ("file_id", file_id),
        )
        if value
    ]
    return Filter(must=conditions) if conditions else None


def _order(meta: ChunkMeta) -> tuple[int, str]:
    # Ordinals are assigned in reading order (file position, or arrival within a session).
    return (meta.ordinal, meta.id)
