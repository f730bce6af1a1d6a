"""The mirror's id sets by wing, room and type: a filtered selection starts from them, and
answers exactly what a walk of every drawer answers, in the same order (a replaced drawer
keeps its place, as in a dict), through puts that change a drawer's room or type and
removals."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime

from services.retrieval.pool.mirror import DrawerMeta, MetaFilter, MetaIndex

WINGS = ("projects", "people", "ops")
TYPES = ("decision", "observation", "bug", "directive")
PINS = ("active", "pinned", "deprecated")


def _meta(i: int, rng: random.Random) -> DrawerMeta:
    wing = rng.choice(WINGS)
    return DrawerMeta(
        id=f"d{i}",
        memory_type=rng.choice(TYPES),
        pin_status=rng.choice(PINS),
        wing=wing,
        room=f"{wing}/r{rng.randrange(4)}",
        topic=rng.choice(("", "billing")),
        added_by=rng.choice(("ana", "bo")),
        confidence=None,
        salience=0.5,
        last_activity=datetime(2026, 7, 1, tzinfo=UTC),
        created_at=float(i),
        retrieval_count=0,
        content_hash="",
        sessions=frozenset(),
        chunks=frozenset(),
    )


def _filters(rng: random.Random) -> list[MetaFilter]:
    found = [MetaFilter(), MetaFilter(exclude_pin_statuses=frozenset({"deprecated"}))]
    for _ in range(60):
        wing = rng.choice(("", *WINGS))
        found.append(
            MetaFilter(
                wing=wing,
                room=rng.choice(("", f"{wing or 'ops'}/r{rng.randrange(5)}")),
                memory_types=frozenset(rng.sample(TYPES, rng.randrange(3))),
                exclude_pin_statuses=frozenset(rng.sample(PINS, rng.randrange(2))),
                added_by=rng.choice(("", "ana")),
            )
        )
    return found


def test_a_selection_is_the_walk_of_every_drawer_in_the_same_order() -> None:
    rng = random.Random(7)
    index, walked = MetaIndex(), {}
    for step in range(1500):
        i = rng.randrange(400)
        if step % 7 == 0:  # a removal
            index.remove(f"d{i}")
            walked.pop(f"d{i}", None)
            continue
        meta = _meta(i, rng)  # often a drawer already there, in another room or type
        index.put(meta)
        walked[meta.id] = meta  # a replaced entry keeps its place, as in a dict
    assert len(index) == len(walked)
    for flt in _filters(rng):
        expected = [m for m in walked.values() if flt.matches(m)]
        assert index.select(flt) == expected, f"{flt} selected other drawers, or in another order"


def test_a_drawer_moved_to_another_room_leaves_the_old_rooms_set() -> None:
    rng = random.Random(1)
    index = MetaIndex()
    meta = replace(_meta(1, rng), wing="ops", room="ops/r0", memory_type="bug")
    index.put(meta)
    index.put(replace(meta, room="ops/r1", memory_type="decision"))
    assert index.select(MetaFilter(room="ops/r0")) == []
    assert index.select(MetaFilter(memory_types=frozenset({"bug"}))) == []
    assert [m.room for m in index.select(MetaFilter(room="ops/r1"))] == ["ops/r1"]
    assert index.remove("d1") is not None and index.select(MetaFilter(room="ops/r1")) == []


def test_bound_is_never_below_what_a_filter_selects_and_exact_for_one_named_set() -> None:
    rng = random.Random(11)
    index = MetaIndex()
    for i in range(400):
        index.put(_meta(i, rng))
    for flt in [*_filters(rng), MetaFilter(memory_types=frozenset(TYPES[:2]))]:
        selected = len(index.select(flt))
        assert index.bound(flt) >= selected, f"bound under the selection for {flt}"
        if flt == MetaFilter(memory_types=flt.memory_types) and flt.memory_types:
            assert index.bound(flt) == selected, f"types alone: the bound is the count, {flt}"
