"""What a new drawer's neighbours in its room are to it: the same claim (a duplicate, the
write answers with it), a near-copy whose claim differs, or a related drawer the write may
update or contradict. Pure: the caller looks the neighbours up (cosine, exact hash) and acts.

- A duplicate is the same text (hash), or a drawer of the same type at `duplicate` cosine or
  closer that makes the same claim (`core.claims`).
- A near-copy is a drawer of the same type at `duplicate` cosine or closer whose claim
  differs (a number, a name, a negation): "retried 103 times" beside "retried 105 times".
- A related drawer is any other live drawer of the room, of any type, at `related` cosine or
  closer: a different wording of what the write may replace ("capped at 3 attempts" beside
  "we now allow five retries"). At most `max_related`, the closest first.

Near-copies and related drawers are named to the writer as supersession candidates; the
write stores the new drawer beside them either way (docs/decisions/0018).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from services.authoring.core.claims import ClaimDifference, claim_difference

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Neighbour(Generic[T]):
    """A drawer of the room near the new one (`item` is whatever the caller keeps)."""

    item: T
    content: str
    memory_type: str
    similarity: float
    same_hash: bool = False
    deprecated: bool = False


@dataclass(frozen=True, slots=True)
class Neighbourhood(Generic[T]):
    duplicate: T | None
    differing: tuple[tuple[T, ClaimDifference], ...] = ()
    related: tuple[tuple[T, float], ...] = ()


def classify(
    content: str,
    memory_type: str,
    neighbours: Sequence[Neighbour[T]],
    *,
    duplicate: float,
    related: float,
    max_related: int,
) -> Neighbourhood[T]:
    """The duplicate among `neighbours` (best first), the differing near-copies and the
    related drawers of a new drawer with `content` and `memory_type`."""
    differing: list[tuple[T, ClaimDifference]] = []
    close: list[tuple[T, float]] = []
    for near in neighbours:
        same_type = near.memory_type == memory_type
        if near.same_hash or (same_type and near.similarity >= duplicate):
            difference = claim_difference(content, near.content)
            if near.same_hash or difference.same:
                return Neighbourhood(near.item, tuple(differing), tuple(close))
            differing.append((near.item, difference))
        elif near.similarity >= related and not near.deprecated and len(close) < max_related:
            close.append((near.item, near.similarity))
    return Neighbourhood(None, tuple(differing), tuple(close))
