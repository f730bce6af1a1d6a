"""A collection kept in two engines at once: Qdrant (vectors + payload, the source of truth)
and an optional FTS5 keyword sidecar. Used by the retrieval tier's drawer pool and the corpus
tier's raw memories, so the consistency protocol is written (and tested) once.

Write protocol: every write opens an FTS5 transaction, writes the vectors, and commits the
keyword rows only after the vector write succeeded; a vector failure rolls the keyword rows
back, so nothing is half-written. The one window left — a crash after the vector write and
before the FTS5 commit — is repaired by `reconcile()` (run on open), which rebuilds keyword
rows from the Qdrant payloads and drops keyword rows whose point is gone.

Methods are synchronous and thread-safe (callers use `asyncio.to_thread`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from services.runtime.drift import Drift, compare_rows, found
from services.runtime.fts import FtsIndex, KeywordHits
from services.runtime.fusion import FusedHit, fuse_hits
from services.runtime.vectorstore import Filter, VectorHit, VectorPoint, VectorStore

logger = logging.getLogger(__name__)

Payload = dict[str, Any]
KeywordRow = Callable[[str, Payload], Mapping[str, str]]


@dataclass(frozen=True)
class ReconcileReport:
    points: int
    keyword_rows_restored: int
    keyword_rows_dropped: int


class HybridCollection:
    """One Qdrant collection plus (optionally) its FTS5 sidecar, written in step."""

    def __init__(
        self,
        vectors: VectorStore,
        collection: str,
        dimension: int,
        *,
        keywords: FtsIndex | None = None,
        keyword_row: KeywordRow | None = None,
    ) -> None:
        if (keywords is None) != (keyword_row is None):
            raise ValueError("keywords and keyword_row go together")
        self.vectors = vectors
        self.collection = collection
        self.dimension = dimension
        self.keywords = keywords
        self._keyword_row = keyword_row
        self.lock = threading.RLock()
        vectors.ensure_collection(collection, dimension)

    def _keyword_transaction(self) -> AbstractContextManager[object]:
        return self.keywords.transaction() if self.keywords is not None else nullcontext()

    def _rows(self, points: Sequence[VectorPoint]) -> list[Mapping[str, str]]:
        assert self._keyword_row is not None
        return [self._keyword_row(p.id, p.payload) for p in points]

    def upsert(self, points: Sequence[VectorPoint]) -> None:
        """Insert or replace points (by id) in both engines, or in neither."""
        if not points:
            return
        with self.lock, self._keyword_transaction():
            if self.keywords is not None:
                self.keywords.upsert(self._rows(points))
            self.vectors.upsert(self.collection, points)

    def set_payloads(self, updates: Mapping[str, Payload]) -> None:
        """Replace whole payloads of existing points (vectors unchanged), keywords in step."""
        if not updates:
            return
        with self.lock, self._keyword_transaction():
            if self.keywords is not None and self._keyword_row is not None:
                self.keywords.upsert([self._keyword_row(i, p) for i, p in updates.items()])
            for point_id, payload in updates.items():
                self.vectors.set_payload(self.collection, [point_id], payload)

    def delete(self, ids: Sequence[str]) -> None:
        """Delete points by id from both engines; unknown ids are ignored."""
        if not ids:
            return
        with self.lock, self._keyword_transaction():
            if self.keywords is not None:
                self.keywords.delete(ids)
            self.vectors.delete(self.collection, ids)

    def scroll_all(self, flt: Filter | None = None) -> Iterator[tuple[str, Payload]]:
        """Every (id, payload), page by page."""
        offset: str | None = None
        while True:
            points, offset = self.vectors.scroll(self.collection, flt=flt, limit=512, offset=offset)
            for point in points:
                yield point.id, point.payload
            if offset is None:
                return

    def reconcile(self) -> tuple[dict[str, Payload], ReconcileReport]:
        """All payloads (for the caller's mirror) and the keyword sidecar brought in step."""
        with self.lock:
            payloads = dict(self.scroll_all())
            restored = dropped = 0
            if self.keywords is not None and self._keyword_row is not None:
                keyword_ids = set(self.keywords.ids())
                missing = [i for i in payloads if i not in keyword_ids]
                orphans = [i for i in keyword_ids if i not in payloads]
                if missing or orphans:
                    with self.keywords.transaction():
                        self.keywords.upsert([self._keyword_row(i, payloads[i]) for i in missing])
                        self.keywords.delete(orphans)
                    logger.warning(
                        "repaired a keyword sidecar",
                        extra={
                            "collection": self.collection,
                            "restored": len(missing),
                            "dropped": len(orphans),
                        },
                    )
                restored, dropped = len(missing), len(orphans)
            return payloads, ReconcileReport(len(payloads), restored, dropped)

    def check(self, part: str, *, repair: bool) -> tuple[dict[str, Payload], list[Drift]]:
        """All payloads, and how the keyword sidecar differs from them (`engram doctor`):
        rows missing, rows of points that are gone, rows whose text is not the payload's, and
        a full-text index out of step with its rows. With `repair`, each is mended."""
        with self.lock:
            payloads = dict(self.scroll_all())
            if self.keywords is None or self._keyword_row is None:
                return payloads, []
            columns = self.keywords.columns
            expected = {
                i: tuple(str(row.get(c, "")) for c in columns)
                for i, row in ((i, self._keyword_row(i, p)) for i, p in payloads.items())
            }
            rows = compare_rows(expected, self.keywords.rows())
            if repair and rows:
                with self.keywords.transaction():
                    rewrite = rows.missing + rows.stale
                    self.keywords.upsert([self._keyword_row(i, payloads[i]) for i in rewrite])
                    self.keywords.delete(rows.orphans)
            drifts = [
                *found(
                    part,
                    "points without a keyword row: keyword search cannot find them",
                    rows.missing,
                    "write their keyword rows from the stored payloads",
                    repaired=repair,
                ),
                *found(
                    part,
                    "keyword rows of points that are gone: keyword search offers ids that "
                    "no longer exist",
                    rows.orphans,
                    "delete those keyword rows",
                    repaired=repair,
                ),
                *found(
                    part,
                    "keyword rows whose text is not the stored payload's",
                    rows.stale,
                    "rewrite them from the stored payloads",
                    repaired=repair,
                ),
            ]
            problem = self.keywords.integrity_problem()
            if problem is not None:
                if repair:
                    self.keywords.rebuild()
                drifts.append(
                    Drift(
                        part,
                        f"the full-text index disagrees with its rows ({problem})",
                        (),
                        "rebuild the full-text index from its rows",
                        repaired=repair,
                        count=1,
                    )
                )
            return payloads, drifts

    def retrieve(self, ids: Sequence[str]) -> list[tuple[str, Payload]]:
        """(id, payload) in the order asked; unknown ids are left out."""
        return [(p.id, p.payload) for p in self.vectors.retrieve(self.collection, list(ids))]

    def vectors_of(self, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        points = self.vectors.retrieve(
            self.collection, list(ids), with_vectors=True, with_payload=False
        )
        return {p.id: p.vector for p in points if p.vector is not None}

    def search(
        self,
        vector: npt.NDArray[np.float32],
        *,
        limit: int,
        flt: Filter | None,
        exact: bool,
        with_vectors: bool = False,
        with_payload: bool = True,
    ) -> list[VectorHit]:
        return self.vectors.search(
            self.collection,
            vector,
            limit=limit,
            flt=flt,
            exact=exact,
            with_vectors=with_vectors,
            with_payload=with_payload,
        )

    def search_fused(
        self,
        vector: npt.NDArray[np.float32],
        text: str,
        *,
        limit: int,
        depth: int,
        flt: Filter | None = None,
        allowed_ids: Sequence[str] | None = None,
    ) -> list[FusedHit]:
        """The `depth` best of each engine, ranked together by fused relevance
        (`fusion.fuse_hits`). A keyword-only hit's cosine is read from its stored vector.
        `flt` and `allowed_ids` must select the same points (one per engine). Reads take no
        lock, like every read here: a point written meanwhile may be seen by one engine only."""
        dense = {
            h.id: h.score
            for h in self.search(vector, limit=depth, flt=flt, exact=True, with_payload=False)
        }
        keyword = self.keyword_search(text, limit=depth, allowed_ids=allowed_ids)
        missing = [hit.id for hit in keyword.hits if hit.id not in dense]
        for point_id, stored in self.vectors_of(missing).items():
            dense[point_id] = float(np.dot(stored, vector))
        bm25 = {hit.id: hit.score for hit in keyword.hits if hit.id in dense}
        return fuse_hits(dense, bm25, keyword.reference, limit)

    def keyword_only(
        self, text: str, *, limit: int, allowed_ids: Sequence[str] | None = None
    ) -> list[FusedHit]:
        """The keyword engine alone, as fused hits (score: BM25 over the query's reference,
        no cosine): what a collection whose vectors are being rebuilt can answer."""
        keyword = self.keyword_search(text, limit=limit, allowed_ids=allowed_ids)
        reference = keyword.reference or 1.0
        return [FusedHit(hit.id, hit.score / reference, 0.0, True) for hit in keyword.hits]

    def replace_vectors(
        self,
        vectors: Mapping[str, tuple[str, npt.NDArray[np.float32]]],
        text_of: Callable[[Payload], str],
    ) -> int:
        """New vectors for points whose text is still what was embedded (id → (text,
        vector)); a point rewritten or deleted meanwhile is left as it is (its own write gave
        it a vector). Returns how many were replaced."""
        with self.lock:
            current = dict(self.retrieve(list(vectors)))
            points = [
                VectorPoint(i, vectors[i][1], payload)
                for i, payload in current.items()
                if text_of(payload) == vectors[i][0]
            ]
            if points:
                self.vectors.upsert(self.collection, points)
            return len(points)

    def keyword_search(
        self, text: str, *, limit: int, allowed_ids: Sequence[str] | None = None
    ) -> KeywordHits:
        """BM25 matches, best first, with the query's reference score (see FtsIndex)."""
        if self.keywords is None:
            return KeywordHits()
        return self.keywords.search_scored(text, limit=limit, filter_ids=allowed_ids)

    def drop(self, *, keep_shared: bool = False) -> None:
        """Delete the collection, unless `keep_shared` and it lives on a server every replica
        shares (the keyword sidecar is a file in the store's folder, deleted with it)."""
        if keep_shared and self.vectors.shared:
            return
        with self.lock:
            self.vectors.drop_collection(self.collection)

    def close(self) -> None:
        with self.lock:
            if self.keywords is not None:
                self.keywords.close()
