"""Build a collection's HNSW index off the request path, without freezing the process.

Qdrant Edge has no background optimizer, and `EdgeShard.optimize()` holds the GIL for the
whole build (31-105 s at 100k x 384 on the 2-core dev machine), which stalls every thread of
a serving process. So the build runs in a child process on a copy of the shard (decision 0005):

1. snapshot: flush and copy the live shard into a new folder; writes wait for the copy,
   reads do not. From then on every write to the live shard is also journaled.
2. build: a child process (`python -m services.runtime.vectorstore.indexing`) opens the
   copy, optimizes it and exits. The serving process only waits on a pipe meanwhile, and
   keeps answering searches exactly from the live shard.
3. swap: the serving process opens the built copy, replays the journal onto it, and makes it
   live in one atomic record rewrite; reads and writes are held only for the last few
   journaled operations.

A failed or killed child changes nothing: its copy is deleted and the live shard, which
received every write all along, stays as it was. The Qdrant server indexes by itself, so
over the qdrant-client adapter the builder does nothing.

    builder = IndexBuilder(store, "drawers")
    if builder.needs_build():
        report = await builder.build_in_background()
    hits = store.search("drawers", query, limit=20, flt=flt, exact=builder.use_exact(flt))

Filters need payload indexes at scale, exact or not: `EdgeVectorStore.ensure_payload_index`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import math
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from services.runtime.errors import Conflict, EngramError
from services.runtime.vectorstore.base import Filter, VectorStore, check_collection_name
from services.runtime.vectorstore.edge import EdgeVectorStore, IndexSnapshot

logger = logging.getLogger(__name__)

# Below this many points outside the HNSW index, search them exactly. Measured on the 2-core
# dev machine with MiniLM embeddings (decision 0005): an exact search of 20k x 384 takes
# 1.6 ms p50 (3.1 ms p99), which leaves the 25 ms end-to-end budget to the query embedding
# (12.6 ms p50 on one torch thread); at 100k it takes 14-19 ms and the budget is gone.
DEFAULT_MIN_UNINDEXED_POINTS = 20_000
# One build per interval at most: bounds the CPU spent rebuilding under a steady write
# stream, and keeps a crashing build from being retried in a tight loop.
DEFAULT_MIN_INTERVAL_S = 300.0
DEFAULT_TIMEOUT_S = 3600.0
# How often a running build checks that its collection still exists and the store is open.
_POLL_S = 0.5
_WORKER_MODULE = "services.runtime.vectorstore.indexing"
# Qdrant's own HNSW defaults, used when only the thread count is given.
_DEFAULT_M = 16
_DEFAULT_EF_CONSTRUCT = 100
_DEFAULT_FULL_SCAN_THRESHOLD_KB = 10_000
_STDERR_TAIL = 2000


class IndexBuildFailed(EngramError):
    """The index build did not complete; the live collection is unchanged and usable."""


@dataclass(frozen=True)
class HnswSettings:
    """HNSW build parameters written into the shard's config (Qdrant's defaults if unset)."""

    m: int = _DEFAULT_M
    ef_construct: int = _DEFAULT_EF_CONSTRUCT
    full_scan_threshold_kb: int = _DEFAULT_FULL_SCAN_THRESHOLD_KB


@dataclass(frozen=True)
class BuildReport:
    """What one build did, and what it cost the serving process (seconds)."""

    collection: str
    built: bool
    # Why nothing was built (remote backend), empty when built.
    reason: str = ""
    points: int = 0
    indexed_vectors: int = 0
    segments: int = 0
    replayed_ops: int = 0
    # Writes waited this long for the snapshot copy; reads never waited for it.
    writes_paused_s: float = 0.0
    # The child's wall time, and the part of it spent in Edge's optimize.
    build_s: float = 0.0
    optimize_s: float = 0.0
    # Opening the built shard in the serving process (Edge holds the GIL meanwhile).
    load_s: float = 0.0
    # Reads and writes were held this long for the final switch.
    swap_paused_s: float = 0.0
    total_s: float = 0.0


class IndexBuilder:
    """Decides when a collection needs an HNSW index and builds it in a child process.

    One builder per collection; `build_in_background` runs at most once at a time per
    builder, and the store refuses a second concurrent build of a collection (Conflict).
    """

    def __init__(
        self,
        store: VectorStore,
        collection: str,
        *,
        min_unindexed_points: int = DEFAULT_MIN_UNINDEXED_POINTS,
        min_interval_s: float = DEFAULT_MIN_INTERVAL_S,
        max_indexing_threads: int = 1,
        nice: int = 10,
        hnsw: HnswSettings | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        worker: Sequence[str] | None = None,
    ) -> None:
        """`min_unindexed_points` is both the trigger and Edge's indexing threshold, so the
        points that trigger a build are always big enough for Edge to index. The child
        builds with `max_indexing_threads` threads at `nice`, leaving the serving process
        the rest of the machine. `worker` replaces the child's command (tests use it to
        make the child crash); its arguments are appended to it.
        """
        if min_unindexed_points < 1:
            raise ValueError(f"min_unindexed_points must be at least 1, got {min_unindexed_points}")
        self._store = store
        self._collection = check_collection_name(collection)
        self._min_points = min_unindexed_points
        self._min_interval_s = min_interval_s
        self._threads = max_indexing_threads
        self._nice = nice
        self._hnsw = hnsw
        self._timeout_s = timeout_s
        self._worker = (
            list(worker) if worker is not None else [sys.executable, "-m", _WORKER_MODULE]
        )
        self._running = False
        self._last_build_at = -math.inf
        self._warned: set[str] = set()  # filter fields already warned about (no index)

    @property
    def edge(self) -> EdgeVectorStore | None:
        """The Edge store behind this builder, or None when a Qdrant server indexes itself."""
        return self._store if isinstance(self._store, EdgeVectorStore) else None

    @property
    def indexed(self) -> bool:
        """Whether an HNSW index covers part of the collection: `exact=not indexed` for an
        unfiltered search (filtered searches take `use_exact(flt)`).

        Edge then searches the indexed segments by HNSW and the rest exactly. Always True
        over a Qdrant server, which picks between its index and a full scan itself. Costs
        one shard-info call.
        """
        edge = self.edge
        if edge is None:
            return True
        return edge.index_status(self._collection).indexed_vectors > 0

    def use_exact(self, flt: Filter | None = None) -> bool:
        """The `exact=` to pass to `search` with filter `flt`.

        Exact while no HNSW index exists (small collections), and for a filter on any field
        the HNSW graph was not built with a payload index for: with such a filter Edge's
        HNSW returned about half the hits asked for (recall@10 0.12-0.24 at 100k, 10%
        selectivity), while an exact search stays correct, and with a payload index fast
        (1.4 ms). Over a Qdrant server: never, the server plans it.
        """
        edge = self.edge
        if edge is None:
            return False
        status = edge.index_status(self._collection)
        if status.indexed_vectors == 0:
            return True
        keys = {condition.key for condition in flt.must} if flt is not None else set()
        unindexed = keys - set(status.payload_indexes) - self._warned
        if unindexed:
            self._warned |= unindexed
            logger.warning(
                "filtered search on payload fields without an index: searched exactly, which"
                " is slow at scale; create the indexes with ensure_payload_index",
                extra={"collection": self._collection, "fields": sorted(unindexed)},
            )
        return not keys <= set(status.hnsw_filter_fields)

    @property
    def building(self) -> bool:
        """Whether this builder's build is running."""
        return self._running

    def needs_build(self) -> bool:
        """Whether enough points lie outside the index to be worth a build now."""
        edge = self.edge
        if edge is None or self._running:
            return False
        if time.monotonic() - self._last_build_at < self._min_interval_s:
            return False
        status = edge.index_status(self._collection)
        return not status.building and status.points - status.indexed_vectors >= self._min_points

    async def build_if_needed(self) -> BuildReport | None:
        """Run a build when `needs_build()` says so; None when it does not."""
        if not self.needs_build():
            return None
        return await self.build_in_background()

    async def build_in_background(self) -> BuildReport:
        """Build the index in a child process and swap it in; searches and writes go on.

        Raises IndexBuildFailed when the child fails, crashes or times out, Conflict when a
        build of the collection already runs, and NotFound / Unavailable when the collection
        is dropped or the store closed meanwhile. In every failure the live shard is
        unchanged and holds every write.
        """
        edge = self.edge
        if edge is None:
            return BuildReport(
                self._collection, built=False, reason="the Qdrant server indexes by itself"
            )
        if self._running:
            raise Conflict(
                f"an index build of collection {self._collection!r} is already running",
                field="collection",
            )
        self._running = True
        self._last_build_at = time.monotonic()
        try:
            return await self._build(edge)
        finally:
            self._running = False
            self._last_build_at = time.monotonic()

    async def _build(self, edge: EdgeVectorStore) -> BuildReport:
        started = time.perf_counter()
        snapshot = await asyncio.to_thread(edge.begin_index_build, self._collection)
        logger.info(
            "index build started",
            extra={"collection": self._collection, "points": snapshot.points},
        )
        try:
            child_started = time.perf_counter()
            result = await self._run_child(edge, snapshot)
            build_s = time.perf_counter() - child_started
            swap = await asyncio.to_thread(edge.finish_index_build, snapshot)
        except BaseException:
            # Cancelled, failed or superseded: drop the copy; the live shard never changed.
            await asyncio.shield(asyncio.to_thread(edge.abort_index_build, snapshot))
            raise
        status = await asyncio.to_thread(edge.index_status, self._collection)
        report = BuildReport(
            collection=self._collection,
            built=True,
            points=snapshot.points,
            indexed_vectors=status.indexed_vectors,
            segments=status.segments,
            replayed_ops=swap.replayed_ops,
            writes_paused_s=round(snapshot.writes_paused_s, 4),
            build_s=round(build_s, 3),
            optimize_s=round(float(result.get("optimize_s", 0.0)), 3),
            load_s=round(swap.load_s, 4),
            swap_paused_s=round(swap.paused_s, 4),
            total_s=round(time.perf_counter() - started, 3),
        )
        logger.info("index build finished", extra=asdict(report))
        return report

    def _child_argv(self, snapshot: IndexSnapshot) -> list[str]:
        # Edge indexes a segment once its vectors exceed this size; matching it to our
        # trigger means the points that start a build are always enough to be indexed.
        threshold_kb = max(1, self._min_points * snapshot.dimension * 4 // 1024)
        argv = [
            *self._worker,
            "--shard",
            str(snapshot.path),
            "--dimension",
            str(snapshot.dimension),
            "--indexing-threshold-kb",
            str(threshold_kb),
            "--max-indexing-threads",
            str(self._threads),
            "--nice",
            str(self._nice),
        ]
        if self._hnsw is not None:
            argv += [
                "--m",
                str(self._hnsw.m),
                "--ef-construct",
                str(self._hnsw.ef_construct),
                "--full-scan-threshold-kb",
                str(self._hnsw.full_scan_threshold_kb),
            ]
        return argv

    async def _run_child(self, edge: EdgeVectorStore, snapshot: IndexSnapshot) -> dict[str, float]:
        process = await asyncio.create_subprocess_exec(
            *self._child_argv(snapshot),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        output = asyncio.ensure_future(process.communicate())
        deadline = time.monotonic() + self._timeout_s
        try:
            while not output.done():
                await asyncio.wait({output}, timeout=_POLL_S)
                if output.done():
                    break
                if time.monotonic() > deadline:
                    raise IndexBuildFailed(
                        f"the index build of {self._collection!r} ran past {self._timeout_s:.0f}"
                        " s and was stopped; the collection is unchanged"
                    )
                # Raises NotFound / Unavailable if the collection was dropped or the store
                # closed: no point finishing a build nobody can swap in.
                status = await asyncio.to_thread(edge.index_status, self._collection)
                if not status.building:
                    raise Conflict(
                        f"the index build of {self._collection!r} was superseded",
                        field="collection",
                    )
        finally:
            if process.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                # Reap the child so no zombie outlives the build, even when cancelled.
                await asyncio.shield(output)
        stdout, stderr = output.result()
        if process.returncode != 0:
            tail = stderr.decode(errors="replace")[-_STDERR_TAIL:].strip()
            raise IndexBuildFailed(
                f"the index build child of {self._collection!r} exited with code"
                f" {process.returncode}; the collection is unchanged. Its stderr: {tail}"
            )
        return _parse_result(stdout)


def _parse_result(stdout: bytes) -> dict[str, float]:
    lines = stdout.decode(errors="replace").strip().splitlines()
    try:
        raw = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        raise IndexBuildFailed(
            f"the index build child printed no result (stdout: {stdout[-200:]!r})"
        ) from None
    return {key: float(value) for key, value in raw.items() if isinstance(value, int | float)}


# -- the child -------------------------------------------------------------------------


def run_worker(argv: Sequence[str] | None = None) -> dict[str, float | int | bool]:
    """Optimize the shard copy named on the command line; return figures for the parent.

    Runs in its own process so Edge's GIL-holding optimize stalls nobody else. The config
    given at load is written into the copy, so it carries over when the copy goes live.
    """
    parser = argparse.ArgumentParser(description="Build the HNSW index of an Edge shard copy.")
    parser.add_argument("--shard", required=True)
    parser.add_argument("--dimension", type=int, required=True)
    parser.add_argument("--indexing-threshold-kb", type=int, default=None)
    parser.add_argument("--max-indexing-threads", type=int, default=0)
    parser.add_argument("--nice", type=int, default=0)
    parser.add_argument("--m", type=int, default=None)
    parser.add_argument("--ef-construct", type=int, default=None)
    parser.add_argument("--full-scan-threshold-kb", type=int, default=None)
    args = parser.parse_args(argv)
    if args.nice:
        os.nice(args.nice)
    import qdrant_edge as qe  # only the child needs the engine loaded before work starts

    hnsw = qe.HnswIndexConfig(
        m=args.m or _DEFAULT_M,
        ef_construct=args.ef_construct or _DEFAULT_EF_CONSTRUCT,
        full_scan_threshold=args.full_scan_threshold_kb or _DEFAULT_FULL_SCAN_THRESHOLD_KB,
        max_indexing_threads=args.max_indexing_threads,
    )
    optimizers = (
        qe.EdgeOptimizersConfig(indexing_threshold=args.indexing_threshold_kb)
        if args.indexing_threshold_kb
        else None
    )
    config = qe.EdgeConfig(
        vectors=qe.EdgeVectorParams(size=args.dimension, distance=qe.Distance.Cosine),
        hnsw_config=hnsw,
        optimizers=optimizers,
    )
    shard = qe.EdgeShard.load(args.shard, config)
    started = time.perf_counter()
    changed = shard.optimize()
    shard.flush()
    optimize_s = time.perf_counter() - started
    info = shard.info()
    shard.close()
    return {
        "changed": changed,
        "optimize_s": round(optimize_s, 3),
        "points": info.points_count,
        "indexed_vectors": info.indexed_vectors_count,
        "segments": info.segments_count,
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Child entry point: print the build's figures as one JSON line on stdout."""
    print(json.dumps(run_worker(argv)), flush=True)


if __name__ == "__main__":
    main()
