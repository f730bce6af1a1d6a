"""Background index builds on Edge: the build runs in a child, the collection keeps serving.

Small data (1200 points, 16 dims) with the builder's threshold lowered to 400 points, which
also lowers Edge's indexing threshold, so a real HNSW build takes about a second.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from services.runtime.errors import Conflict, NotFound
from services.runtime.vectorstore import (
    FieldEquals,
    Filter,
    VectorPoint,
    VectorStore,
    open_vector_store,
)
from services.runtime.vectorstore.edge import EdgeVectorStore
from services.runtime.vectorstore.indexing import IndexBuilder, IndexBuildFailed

DIM = 16
N = 1200
MIN_POINTS = 400
COLLECTION = "drawers"
ROOM_3 = Filter([FieldEquals("room", 3)])


def points(matrix: npt.NDArray[np.float32], prefix: str = "p") -> list[VectorPoint]:
    return [VectorPoint(f"{prefix}_{i}", row, {"room": i % 10}) for i, row in enumerate(matrix)]


def builder_for(store: VectorStore, **options: Any) -> IndexBuilder:
    """A builder with the lowered threshold and no pause between builds, unless overridden."""
    settings: dict[str, Any] = {"min_unindexed_points": MIN_POINTS, "min_interval_s": 0}
    settings.update(options)
    return IndexBuilder(store, COLLECTION, **settings)


def sleeping_worker(pid_file: Path) -> list[str]:
    """A child that records its pid and sleeps: a build that is still running."""
    code = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    return [sys.executable, "-c", code]


def shard_folders(store_path: Path) -> list[str]:
    return sorted(entry.name for entry in (store_path / COLLECTION).iterdir() if entry.is_dir())


@pytest.fixture
def matrix() -> npt.NDArray[np.float32]:
    return np.random.default_rng(11).normal(size=(N, DIM)).astype(np.float32)


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "vectors"


@pytest.fixture
def store(store_path: Path, matrix: npt.NDArray[np.float32]) -> Iterator[EdgeVectorStore]:
    opened = open_vector_store("edge", path=store_path)
    assert isinstance(opened, EdgeVectorStore)
    opened.ensure_collection(COLLECTION, DIM)
    opened.upsert(COLLECTION, points(matrix))
    yield opened
    opened.close()


class Traffic:
    """Searches and writes from worker threads, as a serving tier makes them, until stopped."""

    def __init__(self, store: VectorStore, builder: IndexBuilder) -> None:
        self.store = store
        self.builder = builder
        self.searches = 0
        self.written: list[str] = []
        self.errors: list[BaseException] = []
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._guard, args=(self._search,)),
            threading.Thread(target=self._guard, args=(self._write,)),
        ]

    def __enter__(self) -> Traffic:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join()

    def _guard(self, work: Callable[[], None]) -> None:
        try:
            work()
        except BaseException as error:  # recorded for the test to report, not swallowed
            self.errors.append(error)

    def _search(self) -> None:
        rng = np.random.default_rng(5)
        while not self._stop.is_set():
            hits = self.store.search(
                COLLECTION, rng.normal(size=DIM), limit=10, exact=not self.builder.indexed
            )
            assert len(hits) == 10, f"expected 10 hits, got {len(hits)}"
            self.searches += 1

    def _write(self) -> None:
        rng = np.random.default_rng(6)
        while not self._stop.wait(0.005):
            point_id = f"w_{len(self.written)}"
            self.store.upsert(COLLECTION, [VectorPoint(point_id, rng.normal(size=DIM), {"w": 1})])
            self.written.append(point_id)


async def wait_until_building(store: EdgeVectorStore) -> None:
    """Return once the build's snapshot is taken (writes are journaled from then on)."""
    deadline = time.monotonic() + 10
    while not store.index_status(COLLECTION).building:
        assert time.monotonic() < deadline, "expected the build to start within 10 s"
        await asyncio.sleep(0.01)


def test_a_small_collection_needs_no_build_and_is_searched_exactly(
    store: EdgeVectorStore,
) -> None:
    builder = IndexBuilder(store, COLLECTION)  # default threshold: far above 1200 points

    assert not builder.needs_build(), "expected no build for 1200 points at the default threshold"
    assert not builder.indexed, "expected an unbuilt collection to be searched exactly"
    lowered = builder_for(store)
    assert lowered.needs_build(), f"expected a build once {N} points >= {MIN_POINTS}"


async def test_a_build_completes_while_searches_and_writes_go_on_and_keeps_every_write(
    store: EdgeVectorStore, matrix: npt.NDArray[np.float32]
) -> None:
    builder = builder_for(store)
    with Traffic(store, builder) as traffic:
        build = asyncio.create_task(builder.build_in_background())
        await wait_until_building(store)
        searches_at_start = traffic.searches
        # Edits of every kind after the snapshot: they must be replayed onto the new shard.
        await asyncio.to_thread(store.delete, COLLECTION, ["p_0", "p_1"])
        await asyncio.to_thread(store.set_payload, COLLECTION, ["p_2"], {"pinned": True})
        report = await build
        searches_during = traffic.searches - searches_at_start

    assert traffic.errors == [], f"expected searches and writes to succeed, got {traffic.errors}"
    assert report.built, f"expected a built index, got {report}"
    assert searches_during > 0, "expected searches to be answered while the index was built"
    assert report.replayed_ops > 0, f"expected writes during the build to be replayed: {report}"
    kept = {stored.id for stored in store.retrieve(COLLECTION, traffic.written)}
    lost = [point_id for point_id in traffic.written if point_id not in kept]
    assert lost == [], f"expected all {len(traffic.written)} writes kept, lost {lost[:5]}"
    assert store.retrieve(COLLECTION, ["p_0", "p_1"]) == [], "expected deletes to survive the swap"
    (edited,) = store.retrieve(COLLECTION, ["p_2"])
    assert edited.payload.get("pinned") is True, f"expected the payload edit, got {edited.payload}"
    expected_count = N - 2 + len(traffic.written)
    assert store.count(COLLECTION) == expected_count, (
        f"expected {expected_count} points, got {store.count(COLLECTION)}"
    )
    assert builder.indexed, "expected the collection to be indexed after the build"
    assert not builder.needs_build(), "expected no further build right after one"


async def test_after_a_build_hnsw_returns_the_same_top_k_as_exact_and_survives_reopening(
    store: EdgeVectorStore, store_path: Path
) -> None:
    store.ensure_payload_index(COLLECTION, "room", "integer")
    report = await builder_for(store).build_in_background()
    assert report.indexed_vectors >= N, f"expected all {N} points indexed, got {report}"
    probes = np.random.default_rng(9).normal(size=(20, DIM)).astype(np.float32)

    def top_ids(probe: npt.NDArray[np.float32], flt: Filter | None, *, exact: bool) -> list[str]:
        hits = store.search(COLLECTION, probe, limit=10, flt=flt, exact=exact)
        return [hit.id for hit in hits]

    for probe in probes:
        for flt in (None, ROOM_3):
            exact, hnsw = top_ids(probe, flt, exact=True), top_ids(probe, flt, exact=False)
            assert hnsw == exact, f"expected HNSW top-10 to equal exact:\n{exact}\ngot\n{hnsw}"
    store.close()
    # What a crash between the switch and deleting the retired shard leaves behind.
    (store_path / COLLECTION / "shard" / "segments").mkdir(parents=True)

    with open_vector_store("edge", path=store_path) as reopened:
        assert isinstance(reopened, EdgeVectorStore)
        status = reopened.index_status(COLLECTION)
        assert status.indexed_vectors >= N, f"expected the built shard live on reopen: {status}"
        assert status.hnsw_filter_fields == ("room",), f"expected room kept on reopen: {status}"
        assert reopened.count(COLLECTION) == N, f"expected {N}, got {reopened.count(COLLECTION)}"
    assert len(shard_folders(store_path)) == 1, (
        f"expected one shard, got {shard_folders(store_path)}"
    )


async def test_filters_use_hnsw_only_on_fields_indexed_before_the_build(
    store: EdgeVectorStore,
) -> None:
    builder = builder_for(store)
    store.ensure_payload_index(COLLECTION, "room", "integer")
    assert builder.use_exact(None), "expected exact search before any build"
    assert builder.use_exact(ROOM_3), "expected exact filtered search before any build"

    await builder.build_in_background()
    # Indexed after the build: the graph has no filter-aware links for it.
    store.ensure_payload_index(COLLECTION, "late", "integer")

    assert not builder.use_exact(None), "expected HNSW for unfiltered search after the build"
    assert not builder.use_exact(ROOM_3), "expected HNSW for a field indexed before the build"
    late = Filter([FieldEquals("late", 1)])
    assert builder.use_exact(late), "expected exact search for a field indexed after the build"
    unindexed = Filter([FieldEquals("room", 3), FieldEquals("wing", "eng")])
    assert builder.use_exact(unindexed), "expected exact search for an unindexed field"


async def test_a_crashed_builder_child_leaves_the_live_collection_intact_and_buildable(
    store: EdgeVectorStore, store_path: Path
) -> None:
    crashing = [sys.executable, "-c", "import os, time; time.sleep(0.3); os.abort()"]
    builder = builder_for(store, worker=crashing, min_interval_s=60)
    with (
        Traffic(store, builder) as traffic,
        pytest.raises(IndexBuildFailed, match="exited with code"),
    ):
        await builder.build_in_background()

    assert traffic.errors == [], f"expected searches and writes to succeed, got {traffic.errors}"
    expected_count = N + len(traffic.written)
    assert store.count(COLLECTION) == expected_count, (
        f"expected {expected_count} points, got {store.count(COLLECTION)}"
    )
    status = store.index_status(COLLECTION)
    assert not status.building, f"expected journaling to stop after the crash: {status}"
    assert shard_folders(store_path) == ["shard"], (
        f"expected only the live shard, got {shard_folders(store_path)}"
    )
    assert not builder.needs_build(), "expected no retry within min_interval_s of a failure"

    report = await builder_for(store).build_in_background()
    assert report.indexed_vectors >= expected_count, f"expected a later build to work: {report}"


async def test_cancelling_a_build_kills_the_child_and_keeps_the_collection(
    store: EdgeVectorStore, store_path: Path, tmp_path: Path
) -> None:
    pid_file = tmp_path / "child.pid"
    builder = builder_for(store, worker=sleeping_worker(pid_file))
    build = asyncio.create_task(builder.build_in_background())
    deadline = time.monotonic() + 10
    while not pid_file.exists() or not pid_file.read_text():
        assert time.monotonic() < deadline, "expected the build child to start within 10 s"
        await asyncio.sleep(0.01)
    build.cancel()
    with pytest.raises(asyncio.CancelledError):
        await build

    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped: no such process
    assert not store.index_status(COLLECTION).building, "expected journaling to stop"
    assert shard_folders(store_path) == ["shard"], f"got {shard_folders(store_path)}"
    assert store.count(COLLECTION) == N, f"expected {N}, got {store.count(COLLECTION)}"


async def test_a_second_build_of_the_same_collection_is_refused(
    store: EdgeVectorStore, tmp_path: Path
) -> None:
    first = builder_for(store, worker=sleeping_worker(tmp_path / "child.pid"))
    build = asyncio.create_task(first.build_in_background())
    await wait_until_building(store)

    assert not builder_for(store).needs_build(), "expected no build while one is running"
    with pytest.raises(Conflict, match="already running"):
        await builder_for(store).build_in_background()
    with pytest.raises(Conflict, match="already running"):
        await first.build_in_background()
    build.cancel()
    with pytest.raises(asyncio.CancelledError):
        await build


async def test_dropping_the_collection_during_a_build_abandons_the_build(
    store: EdgeVectorStore, store_path: Path, tmp_path: Path
) -> None:
    builder = builder_for(store, worker=sleeping_worker(tmp_path / "child.pid"))
    build = asyncio.create_task(builder.build_in_background())
    await wait_until_building(store)
    await asyncio.to_thread(store.drop_collection, COLLECTION)

    with pytest.raises(NotFound):
        await build
    assert not (store_path / COLLECTION).exists(), "expected the dropped folder gone"


def test_an_unfinished_build_folder_is_removed_when_the_store_reopens(
    store: EdgeVectorStore, store_path: Path
) -> None:
    store.close()
    # What a crash mid-build leaves: a copy that never went live.
    (store_path / COLLECTION / "shard-0123abcd" / "segments").mkdir(parents=True)

    with open_vector_store("edge", path=store_path) as reopened:
        assert reopened.count(COLLECTION) == N, f"expected {N}, got {reopened.count(COLLECTION)}"
    assert shard_folders(store_path) == ["shard"], f"got {shard_folders(store_path)}"


async def test_the_builder_does_nothing_over_a_qdrant_server() -> None:
    remote = open_vector_store("qdrant", path=None, url=":memory:")
    remote.ensure_collection(COLLECTION, DIM)
    builder = IndexBuilder(remote, COLLECTION, min_unindexed_points=1)

    assert not builder.needs_build(), "expected the server to index by itself"
    assert builder.indexed, "expected searches over a server to let it choose its index"
    report = await builder.build_in_background()
    assert not report.built and "server" in report.reason, f"expected a no-op, got {report}"
    remote.close()
