"""The session start's ranking of standing drawers by column: the same order as drawer by
drawer, scoped by wing and room, with skipped ids left out and the limit kept."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import numpy as np

from services.retrieval.core.salience import effective_salience
from services.retrieval.pool.mirror import (
    SALIENCE_BINS,
    DrawerMeta,
    StandingTable,
    salience_summary,
)
from services.retrieval.priming import most_salient

NOW = datetime(2026, 7, 1, tzinfo=UTC)


def meta(i: int, rng: random.Random) -> DrawerMeta:
    return DrawerMeta(
        id=f"d{i}",
        memory_type="decision",
        pin_status="pinned" if i % 3 == 0 else "active",
        wing="projects",
        room=f"projects/r{i % 2}",
        topic="",
        added_by="",
        confidence=None,
        salience=rng.uniform(0.1, 1.0),
        last_activity=NOW - timedelta(days=rng.uniform(0, 400)),
        created_at=float(i),
        retrieval_count=0,
        content_hash="",
        sessions=frozenset(),
        chunks=frozenset(),
        signed=True,
    )


def test_columns_rank_as_one_by_one() -> None:
    rng = random.Random(3)
    metas = [meta(i, rng) for i in range(200)]
    table = StandingTable.of(metas)
    rows = table.where(room="projects/r1")
    got = [m.id for m in most_salient(table, rows, NOW, 10, frozenset({"d1"}))]
    expected = sorted(
        (m for m in metas if m.room == "projects/r1" and m.id != "d1"),
        key=lambda m: (
            -effective_salience(m.salience, m.last_activity, NOW, m.pin_status == "pinned"),
            -m.created_at,
        ),
    )[:10]
    assert got == [m.id for m in expected]
    assert not most_salient(table, np.zeros(len(metas), dtype=np.bool_), NOW, 10, frozenset())


def test_the_salience_histogram_counts_every_drawer_in_its_bin() -> None:
    rng = random.Random(5)
    metas = [meta(i, rng) for i in range(300)]
    summary = salience_summary(metas, NOW)
    assert len(summary.histogram) == SALIENCE_BINS and sum(summary.histogram) == len(metas)
    values = [
        effective_salience(m.salience, m.last_activity, NOW, pinned=m.pin_status == "pinned")
        for m in metas
    ]
    top = sum(1 for v in values if v >= 1 - 1 / SALIENCE_BINS)
    assert summary.histogram[-1] == top, "1.0 (a pin at the cap) falls in the last bin"
    assert salience_summary([], NOW).histogram == (0,) * SALIENCE_BINS
