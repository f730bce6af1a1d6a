"""One store's drawer pool: Qdrant (vectors + full payload, the source of truth), the FTS5
sidecar over content / signature / topic, and the metadata mirror.

Keeping the two stores in step: every write opens an FTS5 transaction, writes the vectors,
and commits the FTS5 rows only after the vector write succeeded; a vector failure rolls the
keyword rows back, so nothing is half-written. The one window left — a crash after the vector
write and before the FTS5 commit — is repaired on open by `reconcile()`, which rebuilds the
keyword rows from the Qdrant payloads (the source of truth) and drops keyword rows whose
drawer is gone.

Every method is synchronous and thread-safe; the servicer calls them through
`asyncio.to_thread`.
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt
from engram.v1 import common_pb2

from services.retrieval.pool.mirror import DrawerMeta, MetaFilter
from services.retrieval.pool.records import drawer_from_payload, drawer_payload
from services.runtime.errors import NotFound
from services.runtime.fts import FtsIndex
from services.runtime.vectorstore import (
    FieldEquals,
    FieldIn,
    FieldNotEquals,
    Filter,
    VectorPoint,
    VectorStore,
    open_vector_store,
)

logger = logging.getLogger(__name__)

COLLECTION = "drawers"
KEYWORD_COLUMNS = ("content", "signature", "topic")


@dataclass(frozen=True)
class PoolLocation:
    """Where a pool keeps its state and which vector backend serves it."""

    root: Path  # <data_root>/<store>
    backend: str = "edge"
    qdrant_url: str = ""
    qdrant_api_key: str = ""


@dataclass(frozen=True)
class ReconcileReport:
    keyword_rows_restored: int
    keyword_rows_dropped: int


class DrawerPool:
    """The drawers of one store."""

    def __init__(self, location: PoolLocation, dimension: int) -> None:
        self.location = location
        self.dimension = dimension
        location.root.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._vectors: VectorStore = open_vector_store(
            location.backend,
            path=location.root / "vectors",
            url=location.qdrant_url,
            api_key=location.qdrant_api_key,
        )
        self._collection = COLLECTION if location.backend == "edge" else _remote_name(location)
        self._vectors.ensure_collection(self._collection, dimension)
        self._keywords = FtsIndex(location.root / "keywords.sqlite", columns=KEYWORD_COLUMNS)
        self._meta: dict[str, DrawerMeta] = {}
        self.reconcile()

    # ------------------------------------------------------------------ consistency

    def reconcile(self) -> ReconcileReport:
        """Rebuild the mirror from Qdrant and bring the keyword rows in step with it."""
        with self._lock:
            payloads: dict[str, common_pb2.Drawer] = {}
            offset: str | None = None
            while True:
                points, offset = self._vectors.scroll(self._collection, limit=512, offset=offset)
                for point in points:
                    payloads[point.id] = drawer_from_payload(point.payload)
                if offset is None:
                    break
            self._meta = {i: DrawerMeta.of(d) for i, d in payloads.items()}
            keyword_ids = set(self._keywords.ids())
            missing = [payloads[i] for i in payloads.keys() - keyword_ids]
            orphans = keyword_ids - payloads.keys()
            if missing or orphans:
                with self._keywords.transaction():
                    self._keywords.upsert([_keyword_row(d) for d in missing])
                    self._keywords.delete(orphans)
                logger.warning(
                    "repaired the keyword sidecar",
                    extra={"restored": len(missing), "dropped": len(orphans)},
                )
            return ReconcileReport(len(missing), len(orphans))

    # ------------------------------------------------------------------ writes

    def upsert(
        self, drawers: Sequence[common_pb2.Drawer], vectors: npt.NDArray[np.float32]
    ) -> None:
        """Insert or replace drawers (by id) with their vectors, in both stores or in neither."""
        points = [VectorPoint(d.id, vectors[i], drawer_payload(d)) for i, d in enumerate(drawers)]
        with self._lock, self._keywords.transaction():
            self._keywords.upsert([_keyword_row(d) for d in drawers])
            self._vectors.upsert(self._collection, points)
            for drawer in drawers:
                self._meta[drawer.id] = DrawerMeta.of(drawer)

    def replace_payloads(self, drawers: Sequence[common_pb2.Drawer]) -> None:
        """Rewrite stored drawers whose text is unchanged (metadata, salience)."""
        with self._lock:
            for drawer in drawers:
                self._vectors.set_payload(self._collection, [drawer.id], drawer_payload(drawer))
                self._meta[drawer.id] = DrawerMeta.of(drawer)
            with self._keywords.transaction():
                self._keywords.upsert([_keyword_row(d) for d in drawers])

    def delete(self, ids: Iterable[str]) -> int:
        """Delete drawers by id from both stores; unknown ids are ignored."""
        with self._lock:
            present = [i for i in ids if i in self._meta]
            if not present:
                return 0
            with self._keywords.transaction():
                self._keywords.delete(present)
                self._vectors.delete(self._collection, present)
            for drawer_id in present:
                self._meta.pop(drawer_id, None)
            return len(present)

    def drop(self) -> None:
        """Delete the whole pool from disk (store deletion)."""
        with self._lock:
            self._vectors.drop_collection(self._collection)
            self.close()
            shutil.rmtree(self.location.root, ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            self._keywords.close()
            self._vectors.close()

    # ------------------------------------------------------------------ reads

    def meta(self, drawer_id: str) -> DrawerMeta | None:
        return self._meta.get(drawer_id)

    def metas(self, flt: MetaFilter | None = None) -> list[DrawerMeta]:
        """Metadata of every drawer matching `flt` (a snapshot)."""
        values = list(self._meta.values())
        return values if flt is None or flt.empty else [m for m in values if flt.matches(m)]

    def count(self) -> int:
        return len(self._meta)

    def get(self, drawer_id: str) -> common_pb2.Drawer:
        found = self.get_many([drawer_id])
        if not found:
            raise NotFound(f"drawer {drawer_id!r} does not exist in this store", field="id")
        return found[0]

    def get_many(self, ids: Sequence[str]) -> list[common_pb2.Drawer]:
        """Drawers by id, in the order asked; unknown ids are left out."""
        points = self._vectors.retrieve(self._collection, list(ids))
        return [drawer_from_payload(p.payload) for p in points]

    def vectors_of(self, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored (unit-norm) vectors by id."""
        points = self._vectors.retrieve(self._collection, list(ids), with_vectors=True)
        return {
            p.id: np.asarray(p.vector, dtype=np.float32) for p in points if p.vector is not None
        }

    def vector_search(
        self, vector: npt.NDArray[np.float32], flt: MetaFilter, limit: int, *, exact: bool
    ) -> list[tuple[str, float]]:
        """(id, cosine) of the nearest drawers matching `flt`."""
        hits = self._vectors.search(
            self._collection, vector, limit=limit, flt=_vector_filter(flt), exact=exact
        )
        return [(hit.id, hit.score) for hit in hits]

    def keyword_search(self, text: str, flt: MetaFilter, limit: int) -> list[str]:
        """Ids of the best BM25 matches among drawers matching `flt`."""
        allowed = None if flt.empty else [m.id for m in self.metas(flt)]
        return [hit.id for hit in self._keywords.search(text, limit=limit, filter_ids=allowed)]

    @property
    def vector_backend(self) -> str:
        return self.location.backend


def _keyword_row(drawer: common_pb2.Drawer) -> dict[str, str]:
    return {
        "id": drawer.id,
        "content": drawer.content,
        "signature": drawer.signature if drawer.HasField("signature") else "",
        "topic": drawer.topic,
    }


def _vector_filter(flt: MetaFilter) -> Filter | None:
    conditions: list[FieldEquals | FieldIn | FieldNotEquals] = []
    if flt.wing:
        conditions.append(FieldEquals("wing", flt.wing))
    if flt.room:
        conditions.append(FieldEquals("room", flt.room))
    if flt.memory_types:
        conditions.append(FieldIn("memory_type", sorted(flt.memory_types)))
    if flt.pin_statuses:
        conditions.append(FieldIn("pin_status", sorted(flt.pin_statuses)))
    for pin in sorted(flt.exclude_pin_statuses):
        conditions.append(FieldNotEquals("pin_status", pin))
    if flt.session:
        conditions.append(FieldEquals("sessions", flt.session))
    return Filter(must=conditions) if conditions else None


def _remote_name(location: PoolLocation) -> str:
    # One Qdrant server holds every store: the collection name carries the store.
    return f"engram_{location.root.name.replace('.', '_')}_drawers"
