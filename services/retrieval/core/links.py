"""Typed temporal links between drawers: what a link is, when it holds, and how a drawer's
neighbourhood of links is walked. Pure: links come in through a lookup function.

A link is directed (`from_id` → `to_id`: "d2 supersedes d1" is from d2 to d1), typed, and
holds from `valid_from` until `valid_to` (open when None). Ending a link sets `valid_to`; it
stays listed as history. Invalidation only ever follows an explicit link (issue 15): nothing
here guesses one.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Final

LINK_TYPES: Final = (
    "supersedes",
    "caused_by",
    "relates_to",
    "implements",
    "reverts",
    "contradicts",
)
DIRECTIONS: Final = ("both", "outgoing", "incoming")
# Traversal never walks further than this many links from the start.
MAX_DEPTH: Final = 5


@dataclass(frozen=True, slots=True)
class Link:
    id: str
    from_id: str
    to_id: str
    type: str
    valid_from: float  # epoch seconds
    valid_to: float | None  # None: still holds
    asserted_by: str
    reason: str
    evidence_ids: tuple[str, ...]
    created_at: float

    def holds_at(self, at: float) -> bool:
        """Whether the link is in force at `at` (valid_from inclusive, valid_to exclusive)."""
        return self.valid_from <= at and (self.valid_to is None or at < self.valid_to)

    def other_end(self, drawer_id: str) -> str:
        return self.to_id if self.from_id == drawer_id else self.from_id


@dataclass(frozen=True, slots=True)
class Traversal:
    links: tuple[Link, ...]  # every link walked, in the order first reached
    drawer_ids: tuple[str, ...]  # the drawers reached, the start first
    depth_of: dict[str, int]  # links from the start to each drawer reached


def traverse(
    start: str,
    links_of: Callable[[str], Iterable[Link]],
    *,
    types: Collection[str] = (),
    depth: int = 2,
    at: float | None = None,
    direction: str = "both",
) -> Traversal:
    """Breadth first from `start` over the links `links_of(drawer)` gives (both ends), of
    `types` (all when empty), holding `at` (any time when None), at most `depth` links away.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction {direction!r} is not one of {DIRECTIONS}")
    if not 1 <= depth <= MAX_DEPTH:
        raise ValueError(f"depth must be between 1 and {MAX_DEPTH}, got {depth}")
    depth_of = {start: 0}
    order = [start]
    walked: dict[str, Link] = {}
    frontier = [start]
    for level in range(1, depth + 1):
        reached: list[str] = []
        for drawer in frontier:
            for link in links_of(drawer):
                if types and link.type not in types:
                    continue
                if at is not None and not link.holds_at(at):
                    continue
                outgoing = link.from_id == drawer
                if (direction == "outgoing" and not outgoing) or (
                    direction == "incoming" and outgoing
                ):
                    continue
                walked.setdefault(link.id, link)
                other = link.other_end(drawer)
                if other not in depth_of:
                    depth_of[other] = level
                    order.append(other)
                    reached.append(other)
        frontier = reached
        if not frontier:
            break
    return Traversal(tuple(walked.values()), tuple(order), depth_of)
