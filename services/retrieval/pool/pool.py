"""One store's drawer pool: a hybrid collection (Qdrant with the full drawer payload — the
source of truth — plus the FTS5 sidecar over content / signature / topic / source (the
excerpts of the chunks a composed drawer was made from), written in step by
`services.runtime.hybrid`) and the metadata mirror that scoring, filters and facets read.

Every method is synchronous and thread-safe; the servicer calls them through
`asyncio.to_thread`.
"""

from __future__ import annotations

import math
import shutil
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from engram.v1 import common_pb2
from google.protobuf import json_format

from services.retrieval.core.usage import DEFAULT_USE_WINDOW
from services.retrieval.pool.handovers import Handovers
from services.retrieval.pool.links import LinkStore
from services.retrieval.pool.mirror import DrawerMeta, MetaFilter, MetaIndex, StandingTable
from services.retrieval.pool.records import drawer_from_payload, drawer_payload
from services.retrieval.pool.tombstones import Tombstones
from services.runtime.drift import Drift, dangling_links, found, rebuilt_if_drifted
from services.runtime.embedding import EmbeddingIdentity, reembedding
from services.runtime.errors import NotFound
from services.runtime.fts import FtsIndex, KeywordHits
from services.runtime.hybrid import HybridCollection, ReconcileReport
from services.runtime.snapshot import StoreParts
from services.runtime.vectorstore import (
    FieldEquals,
    FieldIn,
    FieldNotEquals,
    Filter,
    QdrantTopology,
    VectorHit,
    VectorPoint,
    open_vector_store,
)
from services.runtime.vectorstore.edge import EdgeVectorStore
from services.runtime.vectorstore.indexing import IndexBuilder

COLLECTION = "drawers"
# Keyword hits fetched per wanted hit when only exclusions filter (see keyword_prefetch).
EXCLUSION_OVERFETCH = 2
# A selecting filter that admits at least this share of the drawers is applied after an
# unrestricted, deeper keyword query (at most MAX_FILTER_OVERFETCH hits per wanted one).
BROAD_FILTER_SHARE = 0.1
MAX_FILTER_OVERFETCH = 20
# Payload keys search filters on (see _vector_filter).
FILTER_FIELDS = ("wing", "room", "memory_type", "pin_status", "sessions")
# "source": the excerpts of the raw chunks a drawer was composed from (its derived_from arcs),
# keyword evidence beside its own words (docs/decisions/0027-source-words.md). Appended last:
# an older sidecar gains the column on open.
KEYWORD_COLUMNS = ("content", "signature", "topic", "source")

# What `DrawerPool.check` compares (`engram doctor`), as its findings name them.
PART_KEYWORDS = "drawers: vectors ↔ keyword rows"
PART_PAYLOADS = "drawers: stored payloads"
PART_TOMBSTONES = "drawers: tombstones ↔ vectors"
PART_MIRROR = "drawers: metadata mirror ↔ vectors"
PART_LINKS = "links ↔ drawers"
CHECKED_PARTS = (PART_KEYWORDS, PART_PAYLOADS, PART_TOMBSTONES, PART_MIRROR, PART_LINKS)


@dataclass(frozen=True)
class KeywordPrefetch:
    """A keyword query run before its pin exclusions were known (`keyword_prefetch`)."""

    text: str
    limit: int  # hits wanted
    depth: int  # hits fetched
    found: KeywordHits


@dataclass(frozen=True)
class PoolLocation:
    """Where a pool keeps its state and which vector backend serves it."""

    root: Path  # <data_root>/<store>
    backend: str = "edge"
    qdrant_url: str = ""
    qdrant_api_key: str = ""
    index_min_points: int = 20_000  # unindexed points that trigger a background HNSW build
    qdrant_topology: QdrantTopology = field(default_factory=QdrantTopology)  # on a cluster


class DrawerPool:
    """The drawers of one store."""

    def __init__(self, location: PoolLocation, dimension: int) -> None:
        self.location = location
        self.dimension = dimension
        location.root.mkdir(parents=True, exist_ok=True)
        vectors = open_vector_store(
            location.backend,
            path=location.root / "vectors",
            url=location.qdrant_url,
            api_key=location.qdrant_api_key,
            topology=location.qdrant_topology,
        )
        self.collection = HybridCollection(
            vectors,
            COLLECTION if location.backend == "edge" else _remote_name(location),
            dimension,
            # Terms in more than 5 % of drawers are dropped while a rarer one remains: an OR
            # over common terms ranks most of the table (benchmark: 20 ms → 3 ms at 100k).
            keywords=FtsIndex(
                location.root / "keywords.sqlite", columns=KEYWORD_COLUMNS, common_fraction=0.05
            ),
            keyword_row=_keyword_row,
        )
        if isinstance(vectors, EdgeVectorStore):
            # Filters need payload indexes at scale, and they must exist before an HNSW
            # build so the graph gets filter-aware links (docs/decisions/0005).
            for key in FILTER_FIELDS:
                vectors.ensure_payload_index(self.collection.collection, key, "keyword")
        self.index = IndexBuilder(
            vectors, self.collection.collection, min_unindexed_points=location.index_min_points
        )
        self._lock = self.collection.lock
        self._meta = MetaIndex()
        # The pinned and signed drawers among them, which a session start reads first.
        self._standing: dict[str, DrawerMeta] = {}
        self._standing_table: StandingTable | None = None  # built on demand, dropped on change
        # Typed links between this pool's drawers (services.retrieval.links).
        self.links = LinkStore(location.root / "links.sqlite")
        # The ids this pool deleted: a replayed write does not bring them back.
        self.tombstones = Tombstones(location.root / "tombstones.sqlite")
        # What searches handed to whom: a recorded use must follow one (pool/handovers.py).
        self.handovers = Handovers(
            location.root / "handovers.sqlite", DEFAULT_USE_WINDOW.total_seconds()
        )
        # The model the pool's vectors are being rebuilt for (services.retrieval.reembed);
        # until it is done, searches leave the vectors alone.
        self.reembedding_to: EmbeddingIdentity | None = reembedding(location.root)
        self.reconcile()

    def reconcile(self) -> ReconcileReport:
        """Rebuild the mirror from Qdrant and bring the keyword rows in step with it."""
        with self._lock:
            payloads, report = self.collection.reconcile()
            # A delete committed in the tombstones but not carried out (a crash in between)
            # is finished now.
            unfinished = self.tombstones.buried(list(payloads))
            if unfinished:
                self.collection.delete(sorted(unfinished))
                payloads = {i: p for i, p in payloads.items() if i not in unfinished}
            self._meta = MetaIndex()
            self._standing = {}
            self._standing_table = None
            for payload in payloads.values():
                self._remember(DrawerMeta.of(drawer_from_payload(payload)))
            return report

    def check(self, *, repair: bool) -> tuple[int, list[Drift]]:
        """How the pool's parts differ (`engram doctor`): vectors ↔ keyword rows (see
        `HybridCollection.check`), stored drawers that cannot be read, deleted drawers still
        stored, the metadata mirror ↔ the stored drawers, and open links to drawers that are
        gone. With `repair`, each is mended as its finding's remedy says. Returns the number
        of drawers and links compared, and the findings."""
        with self._lock:
            payloads, drifts = self.collection.check(PART_KEYWORDS, repair=repair)
            stored: dict[str, DrawerMeta] = {}
            unreadable = []
            for drawer_id, payload in payloads.items():
                try:
                    stored[drawer_id] = DrawerMeta.of(drawer_from_payload(payload))
                except (KeyError, TypeError, ValueError, json_format.ParseError):
                    unreadable.append(drawer_id)
            drifts += found(
                PART_PAYLOADS,
                "stored drawers whose payload cannot be read as a drawer",
                unreadable,
                "none automatic: export what can be read, delete these ids and write them again",
                repaired=False,
            )
            buried = self.tombstones.buried(list(stored))
            if repair and buried:
                self.collection.delete(sorted(buried))
            drifts += found(
                PART_TOMBSTONES,
                "drawers deleted (tombstoned) but still stored: a crash cut their delete short",
                buried,
                "finish the delete",
                repaired=repair,
            )
            live = {i: m for i, m in stored.items() if i not in buried}
            # A buried drawer is the tombstone finding's; the mirror is judged on the rest.

            def rebuild() -> None:
                self._meta, self._standing, self._standing_table = MetaIndex(), {}, None
                for meta in live.values():
                    self._remember(meta)

            drifts += rebuilt_if_drifted(
                PART_MIRROR,
                "drawers the in-memory mirror (filters, facets, scoring) does not know, "
                "knows but are gone, or knows with other metadata",
                live,
                {i: m for i, m in self._meta.items() if i not in buried},
                "rebuild the mirror from the stored drawers",
                repair=repair,
                rebuild=rebuild,
            )
            open_links = self.links.open_ends()
            dangling = dangling_links(open_links, live)
            if repair and dangling:
                self.links.end_all_for(sorted(dangling), time.time())
            drifts += found(
                PART_LINKS,
                "open links with an end that is not a stored drawer",
                sorted({link for links in dangling.values() for link in links}),
                "end those links now, as deleting a drawer does",
                repaired=repair,
            )
            return len(payloads) + len(open_links), drifts

    def snapshot_parts(self) -> StoreParts:
        """What a backup of this pool holds (services.runtime.snapshot): its folder but the
        vector engine's and the keyword sidecar (rebuilt from the points on restore)."""
        return StoreParts(
            folder=self.location.root,
            collections={COLLECTION: self.collection},
            derived=frozenset({"vectors", "keywords.sqlite"}),
            locks=(self._lock,),
        )

    def _remember(self, meta: DrawerMeta) -> None:
        self._meta.put(meta)
        if meta.standing:
            self._standing[meta.id] = meta
            self._standing_table = None
        elif self._standing.pop(meta.id, None) is not None:
            self._standing_table = None

    # ------------------------------------------------------------------ writes

    def upsert(
        self, drawers: Sequence[common_pb2.Drawer], vectors: npt.NDArray[np.float32]
    ) -> None:
        """Insert or replace drawers (by id) with their vectors, in both stores or in neither."""
        points = [VectorPoint(d.id, vectors[i], drawer_payload(d)) for i, d in enumerate(drawers)]
        with self._lock:
            self.collection.upsert(points)
            for drawer in drawers:
                self._remember(DrawerMeta.of(drawer))

    def replace_payloads(self, drawers: Sequence[common_pb2.Drawer]) -> None:
        """Rewrite stored drawers whose text is unchanged (metadata, salience)."""
        with self._lock:
            self.collection.set_payloads({d.id: drawer_payload(d) for d in drawers})
            for drawer in drawers:
                self._remember(DrawerMeta.of(drawer))

    def modify(
        self, ids: Sequence[str], change: Callable[[list[common_pb2.Drawer]], None]
    ) -> list[common_pb2.Drawer]:
        """Read drawers, let `change` edit them in place (text unchanged), write them back:
        one step under the pool's write lock, so concurrent changes to the same drawer (two
        `record_retrieval`s, a retag beside a bump) never lose each other's updates. `change`
        may raise to refuse; nothing is written then."""
        with self._lock:
            drawers = self.get_many(ids)
            change(drawers)
            self.replace_payloads(drawers)
            return drawers

    def replace_vectors(self, vectors: Mapping[str, tuple[str, npt.NDArray[np.float32]]]) -> int:
        """New vectors for drawers whose text is still the one embedded (id → (content,
        vector)); one rewritten or deleted meanwhile keeps what its own write gave it."""
        return self.collection.replace_vectors(vectors, _content)

    def delete(self, ids: Iterable[str]) -> int:
        """Delete drawers by id from both stores; unknown ids are ignored. The tombstones
        record the deletion first, so it holds across a crash, a reconcile and a replay."""
        with self._lock:
            present = [i for i in ids if i in self._meta]
            now = time.time()
            self.tombstones.bury(present, now)
            self.collection.delete(present)
            for drawer_id in present:
                self._meta.remove(drawer_id)
                if self._standing.pop(drawer_id, None) is not None:
                    self._standing_table = None
            # A deleted drawer's links end now: none is left holding to a drawer that is gone.
            self.links.end_all_for(present, now)
            return len(present)

    def drop(self, *, keep_shared: bool = False) -> None:
        """Delete the whole pool from disk (store deletion; `keep_shared` keeps a server's
        collection, for a store moving to another replica)."""
        with self._lock:
            self.collection.drop(keep_shared=keep_shared)
            self.close()
            shutil.rmtree(self.location.root, ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            self.collection.close()
            self.collection.vectors.close()
            self.links.close()
            self.tombstones.close()
            self.handovers.close()

    # ------------------------------------------------------------------ reads

    def meta(self, drawer_id: str) -> DrawerMeta | None:
        return self._meta.get(drawer_id)

    def metas(self, flt: MetaFilter | None = None) -> list[DrawerMeta]:
        """Metadata of every drawer matching `flt` (a snapshot)."""
        return self._meta.select(flt)

    def standing_table(self) -> StandingTable:
        """The pinned and signed drawers as columns (built once per change of them), so a
        session start ranks tens of thousands of them without a Python loop."""
        with self._lock:
            if self._standing_table is None:
                self._standing_table = StandingTable.of(list(self._standing.values()))
            return self._standing_table

    def count(self) -> int:
        return len(self._meta)

    def get(self, drawer_id: str) -> common_pb2.Drawer:
        found = self.get_many([drawer_id])
        if not found:
            raise NotFound(f"drawer {drawer_id!r} does not exist in this store", field="id")
        return found[0]

    def get_many(self, ids: Sequence[str]) -> list[common_pb2.Drawer]:
        """Drawers by id, in the order asked; unknown ids are left out."""
        return [drawer_from_payload(p) for _, p in self.collection.retrieve(ids)]

    def vectors_of(self, ids: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """Stored (unit-norm) vectors by id."""
        return self.collection.vectors_of(ids)

    def vector_search(
        self, vector: npt.NDArray[np.float32], flt: MetaFilter, limit: int
    ) -> list[tuple[str, float]]:
        """(id, cosine) of the nearest drawers matching `flt`: exact until an HNSW index
        covers the filter (small pools always), approximate after (`IndexBuilder.use_exact`)."""
        return [(hit.id, hit.score) for hit in self._vector_hits(vector, flt, limit, False)]

    def vector_search_with_vectors(
        self, vector: npt.NDArray[np.float32], flt: MetaFilter, limit: int
    ) -> list[tuple[str, float, npt.NDArray[np.float32]]]:
        """`vector_search` plus each hit's stored (unit) vector, read in the same query."""
        return [
            (hit.id, hit.score, hit.vector)
            for hit in self._vector_hits(vector, flt, limit, True)
            if hit.vector is not None
        ]

    def _vector_hits(
        self, vector: npt.NDArray[np.float32], flt: MetaFilter, limit: int, with_vectors: bool
    ) -> list[VectorHit]:
        condition = _vector_filter(flt)
        exact = self.index.use_exact(condition)
        # Ids (and vectors) only: the mirror holds what scoring reads of each drawer.
        return self.collection.search(
            vector,
            limit=limit,
            flt=condition,
            exact=exact,
            with_vectors=with_vectors,
            with_payload=False,
        )

    def keyword_search(self, text: str, flt: MetaFilter, limit: int) -> KeywordHits:
        """The best BM25 matches among drawers matching `flt`, best first."""
        return self.keyword_narrow(self.keyword_prefetch(text, flt, limit), flt)

    def keyword_prefetch(self, text: str, flt: MetaFilter, limit: int) -> KeywordPrefetch:
        """The first half of `keyword_search`: it reads only the selecting part of `flt`
        (wing, room, types, ...), never its pin exclusions, so a search can run it while the
        query is being embedded, before the intent that decides the exclusions is known.

        Exclusions (deprecated drawers, on every search but history's) keep most of the
        pool, so the query runs a little deeper (`EXCLUSION_OVERFETCH`) and `keyword_narrow`
        drops the few excluded hits: handing FTS5 every allowed id cost ~140 ms at 100k
        drawers, the unrestricted query ~20 ms. A selecting filter that admits a large share
        of the pool (memory types, typically) is treated alike, the query running deeper the
        smaller the share: FTS5 restricted to tens of thousands of ids cost ~90 ms at 100k
        drawers. A narrow one (a room) restricts FTS5 to its ids, which are few.
        """
        loose = replace(flt, exclude_pin_statuses=frozenset())
        depth = limit * EXCLUSION_OVERFETCH
        share = self._meta.bound(loose) / max(1, len(self._meta))
        if loose.empty or share >= BROAD_FILTER_SHARE:
            depth = min(limit * MAX_FILTER_OVERFETCH, math.ceil(depth / max(share, 1e-9)))
            found = self.collection.keyword_search(text, limit=depth)
        else:
            allowed = [m.id for m in self.metas(loose)]
            found = self.collection.keyword_search(text, limit=depth, allowed_ids=allowed)
        return KeywordPrefetch(text=text, limit=limit, depth=depth, found=found)

    def keyword_narrow(self, prefetched: KeywordPrefetch, flt: MetaFilter) -> KeywordHits:
        """The second half of `keyword_search`: the prefetched hits that match all of `flt`
        (and still exist), cut to the limit; when exclusions left too few of a full page,
        the query runs again restricted to the allowed ids (rare: only when excluded drawers
        crowd the best matches)."""
        found, limit = prefetched.found, prefetched.limit
        kept = tuple(
            hit
            for hit in found.hits
            if (m := self._meta.get(hit.id)) is not None and flt.matches(m)
        )
        if len(kept) >= limit or len(found.hits) < prefetched.depth:
            return KeywordHits(kept[:limit], found.reference)
        allowed = [m.id for m in self.metas(flt)]
        return self.collection.keyword_search(prefetched.text, limit=limit, allowed_ids=allowed)

    @property
    def vector_backend(self) -> str:
        return self.location.backend


def _content(payload: Mapping[str, Any]) -> str:
    """A drawer's text, read from its stored payload."""
    return str(payload.get("drawer", {}).get("content", ""))


def _keyword_row(drawer_id: str, payload: Mapping[str, Any]) -> dict[str, str]:
    stored = payload["drawer"]
    return {
        "id": drawer_id,
        "content": stored.get("content", ""),
        "signature": stored.get("signature", ""),
        "topic": stored.get("topic", ""),
        "source": "\n".join(arc.get("excerpt", "") for arc in stored.get("derived_from", [])),
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
