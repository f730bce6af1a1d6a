"""Drift between the parts of a store, as `engram doctor` reports it (CheckStore on each tier).

Pure: the comparisons and the report shape, no I/O. The tiers read their engines, hand the
contents here, and carry out the remedies themselves (`HybridCollection.check`,
`DrawerPool.check`, `CorpusStore.check`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from engram.v1 import common_pb2

# Ids a finding names; the count says how many there are in all.
EXAMPLES = 5


@dataclass(frozen=True)
class Drift:
    """One kind of disagreement between two parts of a store."""

    part: str  # e.g. "drawers: vectors ↔ keywords"
    problem: str  # what disagrees, in plain words
    ids: tuple[str, ...]  # the items concerned (may be empty for a whole-index problem)
    remedy: str  # what repairing does, or why it cannot
    repaired: bool = False
    count: int = 0  # 0: len(ids)

    @property
    def items(self) -> int:
        return self.count or len(self.ids)

    def to_proto(self) -> common_pb2.StoreDrift:
        return common_pb2.StoreDrift(
            part=self.part,
            problem=self.problem,
            count=self.items,
            examples=sorted(self.ids)[:EXAMPLES],
            remedy=self.remedy,
            repaired=self.repaired,
        )


def found(
    part: str, problem: str, ids: Iterable[str], remedy: str, *, repaired: bool
) -> list[Drift]:
    """A one-element list when `ids` names anything, else empty: findings are built as
    `drifts += found(...)` so a clean part adds nothing."""
    named = tuple(sorted(set(ids)))
    return [Drift(part, problem, named, remedy, repaired)] if named else []


@dataclass(frozen=True)
class RowDrift:
    """How a derived table (keyword rows, a metadata mirror) differs from its source."""

    missing: list[str]  # in the source, not in the table
    orphans: list[str]  # in the table, not in the source
    stale: list[str]  # in both, with different values

    def __bool__(self) -> bool:
        return bool(self.missing or self.orphans or self.stale)


def compare_rows(source: Mapping[str, object], table: Mapping[str, object]) -> RowDrift:
    """Compare what a derived table should hold (`source`, by id) with what it holds."""
    return RowDrift(
        missing=sorted(i for i in source if i not in table),
        orphans=sorted(i for i in table if i not in source),
        stale=sorted(i for i, value in source.items() if i in table and table[i] != value),
    )


def rebuilt_if_drifted(
    part: str,
    problem: str,
    source: Mapping[str, object],
    table: Mapping[str, object],
    remedy: str,
    *,
    repair: bool,
    rebuild: Callable[[], None],
) -> list[Drift]:
    """A derived table (an in-memory mirror or index) judged against its source: the ids
    it lacks, holds for nothing, or holds otherwise; with `repair`, `rebuild` runs."""
    rows = compare_rows(source, table)
    if repair and rows:
        rebuild()
    return found(
        part, problem, [*rows.missing, *rows.orphans, *rows.stale], remedy, repaired=repair
    )


def dangling_links(
    links: Iterable[tuple[str, str, str]], present: Collection[str]
) -> dict[str, list[str]]:
    """Open links (id, from, to) with an end that is not a present drawer: the missing
    drawer ids, each with the links that point at it."""
    missing: dict[str, list[str]] = {}
    for link_id, from_id, to_id in links:
        for end in (from_id, to_id):
            if end not in present:
                missing.setdefault(end, []).append(link_id)
    return missing


def store_check(
    tier: str, items_checked: int, parts: Sequence[str], drifts: Sequence[Drift]
) -> common_pb2.StoreCheck:
    """One tier's answer to CheckStore."""
    return common_pb2.StoreCheck(
        tier=tier,
        items_checked=items_checked,
        parts=list(parts),
        drift=[d.to_proto() for d in drifts],
    )
