"""The keyword query of a search runs before the intent is known (while the query is being
embedded): `keyword_prefetch` reads only the selecting filters and `keyword_narrow` applies the
pin exclusions after. Together they must answer exactly what one query restricted to the
allowed drawers answers, also when excluded drawers crowd the best matches."""

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
from services.retrieval.pool.records import content_hash, to_timestamp

DIM = 8
DEPRECATED = frozenset({"deprecated"})


def _drawer(
    i: int, content: str, room: str, pin: int, memory_type: str = "decision"
) -> common_pb2.Drawer:
    d = common_pb2.Drawer(
        id=f"d-{i:03d}",
        content=content,
        memory_type=memory_type,
        wing="projects",
        room=room,
        salience=0.5,
        pin_status=pin,  # type: ignore[arg-type]
        content_hash=content_hash(content),
    )
    d.created_at.CopyFrom(to_timestamp(datetime(2026, 6, 1, tzinfo=UTC)))
    d.last_activity_at.CopyFrom(d.created_at)
    return d


@pytest.fixture
def pool(tmp_path: Path) -> Iterator[DrawerPool]:
    opened = DrawerPool(PoolLocation(tmp_path / "store"), DIM)
    # The strongest "ledger" matches (the word repeated) are all deprecated; the active
    # drawers match it once, in two rooms.
    drawers = (
        [
            _drawer(
                i, "ledger " * 6 + f"old note {i}", "projects/a", common_pb2.PIN_STATUS_DEPRECATED
            )
            for i in range(30)
        ]
        + [
            _drawer(100 + i, f"ledger entry {i} with more words around it", room, pin)
            for i, (room, pin) in enumerate(
                [("projects/a", common_pb2.PIN_STATUS_ACTIVE)] * 10
                + [("projects/b", common_pb2.PIN_STATUS_ACTIVE)] * 10
                + [("projects/b", common_pb2.PIN_STATUS_PINNED)] * 5
            )
        ]
        + [  # a type few drawers have: a filter on it restricts FTS5 to their ids
            _drawer(
                200 + i, f"ledger remark {i}", "projects/b", common_pb2.PIN_STATUS_ACTIVE, "bug"
            )
            for i in range(3)
        ]
    )
    vectors = np.random.default_rng(3).normal(size=(len(drawers), DIM)).astype(np.float32)
    opened.upsert(drawers, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
    yield opened
    opened.close()


def _restricted(pool: DrawerPool, flt: MetaFilter, limit: int) -> list[str]:
    allowed = [m.id for m in pool.metas(flt)]
    return pool.collection.keyword_search("ledger", limit=limit, allowed_ids=allowed).ids


@pytest.mark.parametrize(
    "flt",
    [
        MetaFilter(exclude_pin_statuses=DEPRECATED),  # every search but history's
        MetaFilter(),  # history: deprecated drawers stay
        MetaFilter(room="projects/a", exclude_pin_statuses=DEPRECATED),
        MetaFilter(room="projects/b", exclude_pin_statuses=DEPRECATED),
        MetaFilter(memory_types=frozenset({"decision"}), exclude_pin_statuses=DEPRECATED),
        MetaFilter(memory_types=frozenset({"bug"}), exclude_pin_statuses=DEPRECATED),
        MetaFilter(memory_types=frozenset({"decision", "bug"}), room="projects/b"),
    ],
    ids=["exclusions", "none", "room-crowded", "room", "broad-types", "rare-type", "both"],
)
@pytest.mark.parametrize("limit", [5, 12, 40])
def test_prefetch_then_narrow_answers_what_one_restricted_query_answers(
    pool: DrawerPool, flt: MetaFilter, limit: int
) -> None:
    selecting = MetaFilter(room=flt.room, memory_types=flt.memory_types)
    narrowed = pool.keyword_narrow(pool.keyword_prefetch("ledger", selecting, limit), flt)
    expected = _restricted(pool, flt, limit)
    assert narrowed.ids == expected, (
        f"prefetch + narrow gave {narrowed.ids}, one restricted query {expected}"
    )
    assert pool.keyword_search("ledger", flt, limit).ids == expected


def test_narrow_drops_a_drawer_deleted_after_the_prefetch(pool: DrawerPool) -> None:
    flt = MetaFilter(exclude_pin_statuses=DEPRECATED)
    prefetched = pool.keyword_prefetch("ledger", MetaFilter(), 5)
    first = pool.keyword_narrow(prefetched, flt).ids[0]
    pool.delete([first])
    assert first not in pool.keyword_narrow(prefetched, flt).ids, (
        "a drawer deleted between the keyword query and the narrowing must not be offered"
    )


def test_excluded_drawers_filling_the_prefetched_page_send_narrow_back_to_the_index(
    pool: DrawerPool,
) -> None:
    prefetched = pool.keyword_prefetch("ledger", MetaFilter(), 5)
    assert all(int(hit.id[2:]) < 30 for hit in prefetched.found.hits), (
        "the fixture must put only deprecated drawers in the prefetched page"
    )
    narrowed = pool.keyword_narrow(prefetched, MetaFilter(exclude_pin_statuses=DEPRECATED))
    assert len(narrowed.ids) == 5 and all(int(i[2:]) >= 100 for i in narrowed.ids), (
        f"expected five active drawers from the restricted query, got {narrowed.ids}"
    )


def test_a_broad_type_filter_runs_unrestricted_and_a_rare_one_restricted(
    pool: DrawerPool,
) -> None:
    broad = MetaFilter(memory_types=frozenset({"decision"}))
    prefetched = pool.keyword_prefetch("ledger", broad, 40)
    bugs = [h.id for h in prefetched.found.hits if int(h.id[2:]) >= 200]
    assert bugs, "a filter most drawers pass must run unrestricted (the short bug notes rank)"
    assert not set(pool.keyword_narrow(prefetched, broad).ids) & set(bugs)
    rare = pool.keyword_prefetch("ledger", MetaFilter(memory_types=frozenset({"bug"})), 5)
    assert [h.id for h in rare.found.hits] and all(int(h.id[2:]) >= 200 for h in rare.found.hits), (
        "a filter few drawers pass must restrict the query to their ids"
    )
