"""The drawer pool keeps Qdrant and the FTS5 sidecar in step: a failure between them is rolled
back, and a crash between them is repaired on the next open."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from engram.v1 import common_pb2

from services.retrieval.pool import DrawerPool
from services.retrieval.pool.mirror import MetaFilter
from services.retrieval.pool.pool import PoolLocation
from services.retrieval.pool.records import content_hash, drawer_payload, to_timestamp
from services.runtime.errors import Unavailable
from services.runtime.vectorstore import VectorPoint

DIM = 16


def _drawer(i: int, content: str) -> common_pb2.Drawer:
    d = common_pb2.Drawer(
        id=f"d-{i}",
        content=content,
        memory_type="decision",
        wing="projects",
        room="projects/x",
        salience=0.5,
        pin_status=common_pb2.PIN_STATUS_ACTIVE,
        content_hash=content_hash(content),
    )
    d.created_at.CopyFrom(to_timestamp(datetime(2026, 6, 1, tzinfo=UTC)))
    d.last_activity_at.CopyFrom(d.created_at)
    return d


def _vectors(n: int, seed: int = 1) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, DIM)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[DrawerPool]:
    opened = DrawerPool(PoolLocation(tmp_path / "store"), DIM)
    yield opened
    opened.close()


def test_a_failed_vector_write_leaves_both_stores_unchanged(
    pool: DrawerPool, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool.upsert([_drawer(1, "alpha decision about shards")], _vectors(1))

    def broken(*args: object, **kwargs: object) -> None:
        raise Unavailable("disk full (injected)")

    monkeypatch.setattr(pool.collection.vectors, "upsert", broken)
    with pytest.raises(Unavailable):
        pool.upsert([_drawer(2, "beta decision about replicas")], _vectors(1, seed=2))
    monkeypatch.undo()
    assert pool.count() == 1, "the mirror must not hold the failed drawer"
    assert pool.keyword_search("beta replicas", MetaFilter(), 10).ids == [], (
        "the keyword row of a failed write must be rolled back"
    )
    assert pool.keyword_search("alpha shards", MetaFilter(), 10).ids == ["d-1"]


def test_a_crash_between_the_stores_is_repaired_on_open(tmp_path: Path) -> None:
    location = PoolLocation(tmp_path / "store")
    first = DrawerPool(location, DIM)
    first.upsert([_drawer(1, "alpha decision about shards")], _vectors(1))
    # Simulate a crash after the vector write and before the keyword commit: the point is in
    # Qdrant, its keyword row is not; and a keyword row whose point never landed.
    orphan = _drawer(3, "gamma orphan keyword row")
    first.collection.vectors.upsert(
        "drawers",
        [VectorPoint("d-2", _vectors(1, 2)[0], drawer_payload(_drawer(2, "beta replicas")))],
    )
    first.collection.keywords.upsert([{"id": orphan.id, "content": orphan.content}])
    first.close()

    reopened = DrawerPool(location, DIM)
    try:
        assert reopened.count() == 2
        assert reopened.keyword_search("beta replicas", MetaFilter(), 10).ids == ["d-2"], (
            "the keyword row of a drawer present in Qdrant must be restored"
        )
        assert reopened.keyword_search("gamma orphan", MetaFilter(), 10).ids == [], (
            "a keyword row without a drawer must be dropped"
        )
    finally:
        reopened.close()


def test_delete_removes_from_both_stores(pool: DrawerPool) -> None:
    pool.upsert([_drawer(1, "alpha"), _drawer(2, "beta")], _vectors(2))
    assert pool.delete(["d-1", "missing"]) == 1
    assert pool.get_many(["d-1", "d-2"])[0].id == "d-2"
    assert pool.keyword_search("alpha", MetaFilter(), 10).ids == []
