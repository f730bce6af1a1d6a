"""The Qdrant Edge adapter: the Qdrant engine in-process, one on-disk shard per collection.

Layout under the store's path (one path per store, chosen by the caller)::

    <path>/<collection>/collection.json   our record: dimension, distance, format, live shard
    <path>/<collection>/shard/            the Edge shard (segments, WAL, edge_config.json)
    <path>/<collection>/shard-<hex>/      the live shard after a background index build

`collection.json` is written only after the shard exists, so it marks a finished
collection: a shard folder without it is a creation that crashed half-way, and is redone.
Dropping renames the folder to a `.dropped-…` tombstone before deleting it, so a crash
mid-delete never leaves a half-collection under a live name.

Background index builds (driven by `indexing.py`, decision 0005) copy the live shard to a
new `shard-<hex>` folder, optimize the copy in a child process, and make it live by
rewriting `collection.json`'s `shard` key (write-then-rename). Any shard folder the record
does not name is a build that never finished, or a retired shard, and is removed on open.

Locking: each collection has one lock held across every call into its shard. Edge keeps
the GIL for the whole of each call (measured: a Python thread is starved for the full
3.4 s of an `optimize` at 10k x 384), so the lock costs no parallelism, and it makes the
check-then-act sequences here (count then delete, existence check then set_payload, drop
while a search runs) atomic.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import shutil
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TextIO, cast

import numpy as np
import qdrant_edge as qe

from services.runtime.errors import Conflict, InvalidInput, NotFound, Unavailable
from services.runtime.vectorstore.base import (
    ID_KEY,
    FieldEquals,
    FieldIn,
    FieldNotEquals,
    FieldRange,
    Filter,
    Scalar,
    StoredPoint,
    VectorHit,
    VectorLike,
    VectorPoint,
    VectorStore,
    as_vector,
    check_collection_name,
    check_dimension,
    check_filter,
    check_limit,
    check_payload,
    dense_array,
    field_in_values,
    last_write_wins,
    mismatch_error,
    order_by_request,
    parse_offset,
    payload_selector,
    point_uuid,
    split_payload,
    stored_payload,
    unique_ids,
)

logger = logging.getLogger(__name__)

_META_FILE = "collection.json"
_SHARD_DIR = "shard"
# Shard folders made by background index builds: `shard-<hex>`.
_BUILD_PREFIX = "shard-"
_LOCK_FILE = ".lock"
_TOMBSTONE_PREFIX = ".dropped-"
_META_FORMAT = 1
# Bounds the size of one Edge update (and of its WAL record) for big ingests.
_UPSERT_BATCH = 1024
# finish_index_build replays the journal onto the new shard outside the lock while it is
# longer than this, so the part replayed with reads and writes held is at most this long.
_SWAP_TAIL_OPS = 64
_CATCH_UP_ROUNDS = 8

PayloadIndexKind = Literal["keyword", "integer", "float", "bool"]
_PAYLOAD_SCHEMAS: dict[str, qe.PayloadSchemaType] = {
    "keyword": qe.PayloadSchemaType.Keyword,
    "integer": qe.PayloadSchemaType.Integer,
    "float": qe.PayloadSchemaType.Float,
    "bool": qe.PayloadSchemaType.Bool,
}


@dataclass
class _Collection:
    name: str
    dimension: int
    shard: qe.EdgeShard
    lock: threading.Lock
    shard_dir: Path
    closed: bool = False
    # Taken by writers before `lock`, so a snapshot can hold writes back while reads go on.
    write_gate: threading.Lock = field(default_factory=threading.Lock)
    # While an index build runs: its id, and every update applied since its snapshot, in
    # order, to be replayed onto the rebuilt shard before it goes live.
    build_id: str | None = None
    journal: list[qe.UpdateOperation] = field(default_factory=list)
    # Payload fields whose index every HNSW segment was built with (collection.json).
    filter_fields: frozenset[str] = frozenset()


@dataclass(frozen=True)
class IndexStatus:
    """How much of a collection Edge's HNSW index covers, from the shard's own counters."""

    points: int
    indexed_vectors: int
    segments: int
    building: bool
    # Payload fields with an index, sorted (see ensure_payload_index).
    payload_indexes: tuple[str, ...] = ()
    # The indexed fields the HNSW graph was built with: only filters on these may use it.
    # An index made after the build does not add filter-aware links to the graph, and a
    # re-optimize does not rebuild it (measured: recall@10 0.24 with a late index).
    hnsw_filter_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class IndexSnapshot:
    """A consistent copy of a collection's shard, taken for a background index build."""

    collection: str
    build_id: str
    dimension: int
    path: Path
    points: int
    # How long writes were held back while the shard was flushed and copied (reads were not).
    writes_paused_s: float
    # The payload indexes present in the copy, so built into its HNSW graph.
    payload_indexes: frozenset[str] = frozenset()
    # Whether the live shard had HNSW segments already (built with older filter fields).
    had_index: bool = False


@dataclass(frozen=True)
class SwapReport:
    """What finish_index_build did: journal replay, and how long everything was held."""

    replayed_ops: int
    load_s: float
    # How long reads and writes on the collection were held for the final switch.
    paused_s: float


class EdgeVectorStore(VectorStore):
    """Collections as Qdrant Edge shards under `path`; survives process restarts."""

    def __init__(self, path: Path) -> None:
        self._root = path
        self._root.mkdir(parents=True, exist_ok=True)
        self._lock_file = _lock_store(path)
        self._collections: dict[str, _Collection] = {}
        # Guards the map above and creation/drop of collection folders.
        self._registry_lock = threading.Lock()
        self._closed = False
        self._remove_tombstones()
        self._remove_unfinished_builds()

    # -- collections -------------------------------------------------------------------

    def ensure_collection(self, name: str, dimension: int) -> None:
        """Create the collection's shard if missing; InvalidInput on a dimension mismatch."""
        check_collection_name(name)
        check_dimension(dimension)
        with self._registry_lock:
            self._check_open()
            stored = self._stored_dimension(name)
            if stored is not None:
                if stored != dimension:
                    raise mismatch_error(name, stored, dimension)
                return
            folder = self._root / name
            shard_dir = folder / _SHARD_DIR
            if shard_dir.exists():
                logger.warning("removing half-created collection", extra={"collection": name})
                shutil.rmtree(shard_dir)
            folder.mkdir(exist_ok=True)
            shard = qe.EdgeShard.create(str(shard_dir), _edge_config(dimension))
            _write_meta(folder / _META_FILE, dimension, shard_dir.name)
            self._collections[name] = _Collection(
                name, dimension, shard, threading.Lock(), shard_dir
            )

    def drop_collection(self, name: str) -> None:
        """Close the collection's shard and delete its folder; missing is not an error."""
        check_collection_name(name)
        with self._registry_lock:
            self._check_open()
            collection = self._collections.pop(name, None)
            if collection is not None:
                with collection.lock:
                    collection.closed = True
                    collection.shard.close()
            folder = self._root / name
            if folder.exists():
                tombstone = self._root / f"{_TOMBSTONE_PREFIX}{name}-{uuid.uuid4().hex}"
                folder.rename(tombstone)
                shutil.rmtree(tombstone)

    def collection_names(self) -> list[str]:
        """The finished collections on disk, sorted."""
        with self._registry_lock:
            self._check_open()
            return sorted(
                entry.name
                for entry in self._root.iterdir()
                if not entry.name.startswith(_TOMBSTONE_PREFIX) and (entry / _META_FILE).is_file()
            )

    def optimize(self, collection: str) -> None:
        """Run Edge's segment optimizers to completion: merges segments and builds HNSW.

        Blocks the calling thread and, because Edge holds the GIL, every other Python
        thread of the process for the duration (seconds per 10k vectors at 384 dims).
        A serving process uses `indexing.IndexBuilder` instead, which builds in a child.
        """
        with self._use(collection) as handle:
            before = handle.shard.info()
            changed = handle.shard.optimize()
            handle.shard.flush()
            if changed:
                # As for a background build: the graph knows the fields indexed right now.
                fields = frozenset(before.payload_schema)
                if before.indexed_vectors_count > 0:
                    fields &= handle.filter_fields
                _write_meta(
                    handle.shard_dir.parent / _META_FILE,
                    handle.dimension,
                    handle.shard_dir.name,
                    fields,
                )
                handle.filter_fields = fields
        logger.info("optimized collection", extra={"collection": collection, "changed": changed})

    def close(self) -> None:
        """Flush and close every open shard; later calls raise Unavailable."""
        with self._registry_lock:
            if self._closed:
                return
            self._closed = True
            for collection in self._collections.values():
                with collection.lock:
                    collection.closed = True
                    collection.shard.flush()
                    collection.shard.close()
            self._collections.clear()
            self._lock_file.close()  # releases the flock

    # -- points ------------------------------------------------------------------------

    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Insert or replace points; all are validated before any is written."""
        with self._use(collection, write=True) as handle:
            edge_points = [
                qe.Point(
                    point_uuid(point.id),
                    as_vector(point.vector, handle.dimension, what=f"vector of {point.id!r}"),
                    stored_payload(point.id, point.payload),
                )
                for point in last_write_wins(points)
            ]
            for start in range(0, len(edge_points), _UPSERT_BATCH):
                batch = edge_points[start : start + _UPSERT_BATCH]
                _update(handle, qe.UpdateOperation.upsert_points(batch))

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete points by id; ids not stored are ignored."""
        point_ids: list[qe.PointId] = [point_uuid(point_id) for point_id in unique_ids(ids)]
        with self._use(collection, write=True) as handle:
            if point_ids:
                _update(handle, qe.UpdateOperation.delete_points(point_ids))

    def delete_by_filter(self, collection: str, flt: Filter) -> int:
        """Delete the points matching `flt`; return how many there were (exact: locked)."""
        edge_filter = _edge_filter(_require_conditions(flt))
        with self._use(collection, write=True) as handle:
            matched = handle.shard.count(qe.CountRequest(exact=True, filter=edge_filter))
            if matched and edge_filter is not None:
                _update(handle, qe.UpdateOperation.delete_points_by_filter(edge_filter))
            return matched

    def set_payload(self, collection: str, ids: Sequence[str], payload: dict[str, Any]) -> None:
        """Merge `payload` into each point's payload; NotFound and no change if any is missing."""
        wanted = unique_ids(ids)
        check_payload(payload)
        with self._use(collection, write=True) as handle:
            if not wanted or not payload:
                return
            point_ids: list[qe.PointId] = [point_uuid(point_id) for point_id in wanted]
            # Edge applies set_payload to the ids it has and then fails on the first one it
            # lacks; checking first keeps "no change on error" true.
            found = {str(record.id) for record in handle.shard.retrieve(point_ids, False, False)}
            missing = [pid for pid in wanted if str(point_uuid(pid)) not in found]
            if missing:
                raise NotFound(
                    f"{len(missing)} point(s) not in collection {collection!r}, e.g."
                    f" {missing[0]!r}; no payload was changed",
                    field="ids",
                )
            _update(handle, qe.UpdateOperation.set_payload(point_ids, dict(payload)))

    # -- reads -------------------------------------------------------------------------

    def search(
        self,
        collection: str,
        vector: VectorLike,
        *,
        limit: int,
        flt: Filter | None = None,
        exact: bool = False,
        with_vectors: bool = False,
        with_payload: bool = True,
    ) -> list[VectorHit]:
        """Nearest points by cosine; `exact` sets SearchParams.exact (a full scan)."""
        check_limit(limit)
        edge_filter = _edge_filter(check_filter(flt))
        with self._use(collection) as handle:
            query = as_vector(vector, handle.dimension, what="query vector")
            scored = handle.shard.query(
                qe.QueryRequest(
                    limit=limit,
                    query=qe.Query.Nearest(query),
                    filter=edge_filter,
                    with_payload=payload_selector(with_payload),
                    with_vector=with_vectors,
                    params=qe.SearchParams(exact=exact),
                )
            )
        hits = []
        for point in scored:
            point_id, payload = split_payload(point.payload)
            stored = dense_array(point.vector) if with_vectors else None
            hits.append(VectorHit(point_id, float(point.score), payload, stored))
        return hits

    def retrieve(
        self,
        collection: str,
        ids: Sequence[str],
        *,
        with_vectors: bool = False,
        with_payload: bool = True,
    ) -> list[StoredPoint]:
        """The stored points among `ids`, in the order asked."""
        wanted = unique_ids(ids)
        point_ids: list[qe.PointId] = [point_uuid(point_id) for point_id in wanted]
        with self._use(collection) as handle:
            records = (
                handle.shard.retrieve(point_ids, payload_selector(with_payload), with_vectors)
                if point_ids
                else []
            )
        return order_by_request(wanted, [_stored_point(record, with_vectors) for record in records])

    def count(self, collection: str, flt: Filter | None = None) -> int:
        """Exact number of points matching `flt`."""
        edge_filter = _edge_filter(check_filter(flt))
        with self._use(collection) as handle:
            return handle.shard.count(qe.CountRequest(exact=True, filter=edge_filter))

    def scroll(
        self,
        collection: str,
        *,
        flt: Filter | None = None,
        limit: int = 256,
        offset: str | None = None,
        with_vectors: bool = False,
    ) -> tuple[list[StoredPoint], str | None]:
        """One page in Qdrant id order, and the cursor of the next page."""
        check_limit(limit)
        edge_filter = _edge_filter(check_filter(flt))
        start = parse_offset(offset)
        with self._use(collection) as handle:
            records, next_id = handle.shard.scroll(
                qe.ScrollRequest(
                    offset=start,
                    limit=limit,
                    filter=edge_filter,
                    with_payload=True,
                    with_vector=with_vectors,
                )
            )
        page = [_stored_point(record, with_vectors) for record in records]
        return page, None if next_id is None else str(next_id)

    # -- background index builds (driven by indexing.IndexBuilder; decision 0005) ---------

    def index_status(self, collection: str) -> IndexStatus:
        """Points, HNSW-indexed vectors and segments of the live shard, and whether a build runs."""
        with self._use(collection) as handle:
            info = handle.shard.info()
            return IndexStatus(
                points=info.points_count,
                indexed_vectors=info.indexed_vectors_count,
                segments=info.segments_count,
                building=handle.build_id is not None,
                payload_indexes=tuple(sorted(info.payload_schema)),
                hnsw_filter_fields=tuple(sorted(handle.filter_fields)),
            )

    def ensure_payload_index(self, collection: str, key: str, kind: PayloadIndexKind) -> None:
        """Index the payload field `key` (values of `kind`); a no-op if it is indexed already.

        Filters need it at scale, exact or not (decision 0005, 100k x 384): a 10% filter on an
        unindexed field took 88 ms exact and HNSW returned about half the hits asked for;
        indexed, 1.4 ms exact and recall@10 1.0 with HNSW. Create it while the collection is
        small (it is built over every stored point, holding the GIL), and before the HNSW
        build, which then adds filter-aware links for it. Edge only: the Qdrant server takes
        `create_payload_index` through its own client.
        """
        if not key or key == ID_KEY:
            raise InvalidInput(f"payload index key {key!r} is not allowed", field="key")
        schema = _PAYLOAD_SCHEMAS.get(kind)
        if schema is None:
            raise InvalidInput(
                f"payload index kind {kind!r} is not one of {', '.join(_PAYLOAD_SCHEMAS)}",
                field="kind",
            )
        with self._use(collection, write=True) as handle:
            existing = handle.shard.info().payload_schema.get(key)
            if existing is None:
                _update(handle, qe.UpdateOperation.create_field_index(key, schema))
            elif existing.data_type != schema:
                raise InvalidInput(
                    f"payload field {key!r} of collection {collection!r} is already indexed as"
                    f" {existing.data_type}, not {kind}",
                    field="kind",
                )

    def begin_index_build(self, collection: str) -> IndexSnapshot:
        """Copy the live shard to a new folder and start journaling writes; Conflict if a
        build already runs.

        Writes wait while the shard is flushed and copied, so the copy is the exact state the
        journal starts from; reads go on meanwhile (the copy runs without the collection
        lock, and file copies release the GIL).
        """
        handle = self._open_collection(collection)
        started = time.perf_counter()
        with handle.write_gate:
            with self._locked(handle):
                if handle.build_id is not None:
                    raise Conflict(
                        f"an index build of collection {collection!r} is already running",
                        field="collection",
                    )
                handle.shard.flush()
                info = handle.shard.info()
                source = handle.shard_dir
            build_id = uuid.uuid4().hex
            target = source.parent / f"{_BUILD_PREFIX}{build_id}"
            try:
                shutil.copytree(source, target, copy_function=_copy_sparse)
            except OSError:
                shutil.rmtree(target, ignore_errors=True)
                with self._locked(handle):  # NotFound / Unavailable if dropped or closed
                    pass
                raise
            with self._locked(handle):
                handle.build_id = build_id
                handle.journal = []
        paused = time.perf_counter() - started
        return IndexSnapshot(
            collection,
            build_id,
            handle.dimension,
            target,
            info.points_count,
            paused,
            frozenset(info.payload_schema),
            info.indexed_vectors_count > 0,
        )

    def finish_index_build(self, snapshot: IndexSnapshot) -> SwapReport:
        """Make the optimized copy live: replay the journal onto it, then switch over.

        Most of the journal is replayed while reads and writes go on; only the last few
        operations, the record rewrite and the handle swap hold the collection lock. Conflict
        if this build is no longer current (the collection was dropped and made again).
        """
        handle = self._open_collection(snapshot.collection)
        started = time.perf_counter()
        shard = qe.EdgeShard.load(str(snapshot.path))
        load_s = time.perf_counter() - started
        try:
            applied = 0
            for _ in range(_CATCH_UP_ROUNDS):
                with self._locked(handle):
                    self._check_build(handle, snapshot)
                    pending = handle.journal[applied:]
                if len(pending) <= _SWAP_TAIL_OPS:
                    break
                for operation in pending:
                    shard.update(operation)
                applied += len(pending)
            shard.flush()
            with self._locked(handle):
                paused_from = time.perf_counter()
                self._check_build(handle, snapshot)
                tail = handle.journal[applied:]
                for operation in tail:
                    shard.update(operation)
                # Older HNSW segments keep the links they were built with: a field counts
                # only if every build so far had its index.
                fields = snapshot.payload_indexes
                if snapshot.had_index:
                    fields &= handle.filter_fields
                _write_meta(
                    self._root / snapshot.collection / _META_FILE,
                    handle.dimension,
                    snapshot.path.name,
                    fields,
                )
                retired, retired_dir = handle.shard, handle.shard_dir
                handle.shard, handle.shard_dir = shard, snapshot.path
                handle.filter_fields = fields
                handle.build_id, handle.journal = None, []
                paused_s = time.perf_counter() - paused_from
        except BaseException:
            shard.close()
            raise
        # Nobody can hold the retired shard now: every use goes through the lock and the
        # handle already points at the new one.
        retired.close()
        shutil.rmtree(retired_dir, ignore_errors=True)
        logger.info(
            "index build is live",
            extra={"collection": snapshot.collection, "replayed": applied + len(tail)},
        )
        return SwapReport(applied + len(tail), load_s, paused_s)

    def abort_index_build(self, snapshot: IndexSnapshot) -> None:
        """Stop journaling for this build and delete its copy; the live shard is untouched."""
        with self._registry_lock:
            handle = self._collections.get(snapshot.collection)
        if handle is not None:
            with handle.lock:
                if handle.build_id == snapshot.build_id:
                    handle.build_id, handle.journal = None, []
        shutil.rmtree(snapshot.path, ignore_errors=True)

    def _check_build(self, handle: _Collection, snapshot: IndexSnapshot) -> None:
        if handle.build_id != snapshot.build_id:
            raise Conflict(
                f"the index build of collection {snapshot.collection!r} was superseded: the"
                " collection was dropped or rebuilt meanwhile",
                field="collection",
            )

    # -- internals ---------------------------------------------------------------------

    @contextmanager
    def _use(self, name: str, *, write: bool = False) -> Iterator[_Collection]:
        """The open collection, locked for the duration of the block.

        Writers pass the write gate first: an index build's snapshot holds it while it copies
        the shard, which pauses writes but not reads.
        """
        collection = self._open_collection(name)
        with collection.write_gate if write else nullcontext(), self._locked(collection):
            yield collection

    @contextmanager
    def _locked(self, collection: _Collection) -> Iterator[_Collection]:
        with collection.lock:
            if collection.closed:
                # The store was closed, or the collection dropped, between lookup and lock.
                self._check_open()
                raise NotFound(f"collection {collection.name!r} was dropped", field="collection")
            yield collection

    def _open_collection(self, name: str) -> _Collection:
        check_collection_name(name)
        with self._registry_lock:
            self._check_open()
            collection = self._collections.get(name)
            if collection is not None:
                return collection
            dimension = self._stored_dimension(name)
            if dimension is None:
                raise NotFound(
                    f"collection {name!r} does not exist: create it with ensure_collection",
                    field="collection",
                )
            shard_name, filter_fields = _read_live(self._root / name / _META_FILE)
            shard_dir = self._root / name / shard_name
            shard = qe.EdgeShard.load(str(shard_dir))
            collection = _Collection(
                name, dimension, shard, threading.Lock(), shard_dir, filter_fields=filter_fields
            )
            self._collections[name] = collection
            return collection

    def _stored_dimension(self, name: str) -> int | None:
        collection = self._collections.get(name)
        if collection is not None:
            return collection.dimension
        meta_path = self._root / name / _META_FILE
        if not meta_path.is_file():
            return None
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        dimension = meta["dimension"]
        if not isinstance(dimension, int):
            raise Unavailable(f"{meta_path} is damaged (dimension {dimension!r}): restore it")
        return dimension

    def _check_open(self) -> None:
        if self._closed:
            raise Unavailable("the vector store is closed; open a new one")

    def _remove_tombstones(self) -> None:
        # Leftovers of a drop that crashed between rename and delete.
        for entry in self._root.iterdir():
            if entry.name.startswith(_TOMBSTONE_PREFIX) and entry.is_dir():
                shutil.rmtree(entry, ignore_errors=True)

    def _remove_unfinished_builds(self) -> None:
        # Shard folders collection.json does not name: a build that never went live (its
        # writes are all in the live shard too), or a retired shard whose delete was cut off.
        for folder in self._root.iterdir():
            meta_path = folder / _META_FILE
            if folder.name.startswith(_TOMBSTONE_PREFIX) or not meta_path.is_file():
                continue
            live, _ = _read_live(meta_path)
            for entry in folder.iterdir():
                is_shard = entry.name == _SHARD_DIR or entry.name.startswith(_BUILD_PREFIX)
                if entry.is_dir() and is_shard and entry.name != live:
                    logger.warning(
                        "removing unfinished index build",
                        extra={"collection": folder.name, "folder": entry.name},
                    )
                    shutil.rmtree(entry, ignore_errors=True)


def _lock_store(path: Path) -> TextIO:
    """Hold an exclusive lock on the store folder for the life of the store.

    Edge refuses a second opener of a shard only when it loads it, with an opaque
    "WouldBlock" error; locking the whole folder up front gives one clear message instead.
    """
    lock_file = (path / _LOCK_FILE).open("a", encoding="utf-8")
    try:
        fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        lock_file.close()
        raise Unavailable(
            f"the vector store at {path} is already open in another process or store;"
            " one store per path"
        ) from None
    return lock_file


def _edge_config(dimension: int) -> qe.EdgeConfig:
    return qe.EdgeConfig(vectors=qe.EdgeVectorParams(size=dimension, distance=qe.Distance.Cosine))


def _write_meta(
    path: Path, dimension: int, shard: str, filter_fields: frozenset[str] = frozenset()
) -> None:
    # Write-then-rename so a crash never leaves a truncated record that looks finished. The
    # rename is also what makes a rebuilt shard live: one atomic step.
    tmp = path.with_suffix(".tmp")
    record = {
        "format": _META_FORMAT,
        "dimension": dimension,
        "distance": "cosine",
        "shard": shard,
        "hnsw_filter_fields": sorted(filter_fields),
    }
    with tmp.open("w", encoding="utf-8") as handle:
        json.dump(record, handle)
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)


def _copy_sparse(source: str, target: str) -> str:
    """Copy one file's data regions only, leaving its holes as holes; copytree's helper.

    Edge preallocates its WAL, vector chunks and payload pages as 32 MiB sparse files, so a
    plain copy writes mostly zeros: at 2k points it made a 760 KiB shard a 131 MiB copy.
    """
    with open(source, "rb") as src, open(target, "wb") as dst:
        size = os.fstat(src.fileno()).st_size
        offset = 0
        while offset < size:
            try:
                start = os.lseek(src.fileno(), offset, os.SEEK_DATA)
            except OSError as error:
                if error.errno == errno.ENXIO:  # nothing but a hole from here to the end
                    break
                if error.errno != errno.EINVAL:
                    raise
                start = offset  # the filesystem cannot tell holes: copy the rest whole
                end = size
            else:
                end = os.lseek(src.fileno(), start, os.SEEK_HOLE)
            _copy_range(src.fileno(), dst.fileno(), start, end)
            offset = end
        dst.truncate(size)
    shutil.copystat(source, target)
    return target


def _copy_range(src: int, dst: int, start: int, end: int) -> None:
    # copy_file_range stays in the kernel; both paths release the GIL while they run.
    while start < end:
        if hasattr(os, "copy_file_range"):
            copied = os.copy_file_range(src, dst, end - start, start, start)
        else:
            chunk = os.pread(src, min(end - start, 1 << 20), start)
            copied = os.pwrite(dst, chunk, start)
        if copied == 0:  # end of file: nothing writes to the shard while it is copied
            return
        start += copied


def _read_live(meta_path: Path) -> tuple[str, frozenset[str]]:
    """The live shard folder and HNSW filter fields named by collection.json.

    Stores that predate background builds have neither key: "shard", and no fields.
    """
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    name = meta.get("shard", _SHARD_DIR)
    fields = meta.get("hnsw_filter_fields", [])
    if not isinstance(name, str) or not (name == _SHARD_DIR or name.startswith(_BUILD_PREFIX)):
        raise Unavailable(f"{meta_path} is damaged (shard {name!r}): restore it")
    if not isinstance(fields, list) or not all(isinstance(key, str) for key in fields):
        raise Unavailable(f"{meta_path} is damaged (hnsw_filter_fields {fields!r}): restore it")
    return name, frozenset(fields)


def _update(collection: _Collection, operation: qe.UpdateOperation) -> None:
    """Apply one update to the live shard, and journal it while an index build runs."""
    collection.shard.update(operation)
    if collection.build_id is not None:
        collection.journal.append(operation)


def _require_conditions(flt: Filter) -> Filter:
    checked = check_filter(flt)
    if checked is None or not checked.must:
        raise InvalidInput(
            "delete_by_filter needs at least one condition; use drop_collection to delete"
            " everything",
            field="filter",
        )
    return checked


def _edge_filter(flt: Filter | None) -> qe.Filter | None:
    if flt is None or not flt.must:
        return None
    must: list[qe.ConditionType] = []
    must_not: list[qe.ConditionType] = []
    for condition in flt.must:
        if isinstance(condition, FieldEquals):
            must.append(qe.FieldCondition(condition.key, match=_match_value(condition.value)))
        elif isinstance(condition, FieldIn):
            must.append(
                qe.FieldCondition(condition.key, match=qe.MatchAny(field_in_values(condition)))
            )
        elif isinstance(condition, FieldRange):
            bounds = qe.RangeFloat(gte=condition.gte, lte=condition.lte)
            must.append(qe.FieldCondition(condition.key, range=bounds))
        elif isinstance(condition, FieldNotEquals):
            match = _match_value(condition.value)
            must_not.append(qe.FieldCondition(condition.key, match=match))
    return qe.Filter(must=must or None, must_not=must_not or None)


def _match_value(value: Scalar) -> qe.MatchValue:
    # qdrant-edge-py 0.9 reads a Python bool as the integer 0/1 (bool subclasses int), so
    # MatchValue(True) never matches a stored `true`. A numpy bool is not an int and
    # arrives as a real boolean.
    if isinstance(value, bool):
        return qe.MatchValue(cast(bool, np.bool_(value)))
    return qe.MatchValue(value)


def _stored_point(record: qe.Record, with_vectors: bool) -> StoredPoint:
    point_id, payload = split_payload(record.payload)
    vector = dense_array(record.vector) if with_vectors else None
    return StoredPoint(point_id, payload, vector)
