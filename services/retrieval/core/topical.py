"""Topical neighbourhoods: which candidates of one query discuss the same thing.

Topical authority (docs/decisions/0012-topical-authority.md) lets the most authoritative
drawer of a neighbourhood stand on the evidence of its neighbours; this module only answers
the question it needs: for each candidate, which others are about the same topic.

Two candidates are neighbours when

- they carry the same (non-empty) topic tag — the author said so. A tag names one subject
  of the store, whatever room or wing holds the drawer: the seed's own example of one topic
  is an architect's decision in the project's room and the diary entries about it in a
  diary room, and the writers of Engram's sets tag it so (in one room, across a wing's
  rooms, or across wings); or
- their own vectors are close: drawer-to-drawer cosine at least `NEIGHBOUR_COSINE` (0.55),
  and they share the wing (or either has none). Two memories that near each other are
  restatements of one subject, whatever their tags say.

Pure: vectors come in as a mapping, nothing is read from a store.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from services.retrieval.core.constants import NEIGHBOUR_COSINE


@dataclass(frozen=True, slots=True)
class TopicalMember:
    """What neighbourhoods read of one candidate."""

    id: str
    topic: str = ""
    wing: str = ""


def _wings_allow(a: TopicalMember, b: TopicalMember) -> bool:
    return not a.wing or not b.wing or a.wing == b.wing


def topic_mates(members: Sequence[TopicalMember]) -> dict[str, frozenset[str]]:
    """Each member's neighbours by the author's tags alone: the others that carry its
    (non-empty) topic tag."""
    tagged: dict[str, set[str]] = defaultdict(set)
    for member in members:
        if member.topic:
            tagged[member.topic].add(member.id)
    return {m.id: frozenset(tagged[m.topic] - {m.id}) if m.topic else frozenset() for m in members}


def neighbourhoods(
    members: Sequence[TopicalMember],
    vectors: Mapping[str, npt.NDArray[np.floating]] | None = None,
    *,
    threshold: float = NEIGHBOUR_COSINE,
    mates: Mapping[str, frozenset[str]] | None = None,
) -> dict[str, frozenset[str]]:
    """Each member's neighbours (never itself). Members without a vector join by tags only;
    `mates` passes `topic_mates(members)` when the caller has it already."""
    tagged = topic_mates(members) if mates is None else mates
    links: dict[str, set[str]] = {m.id: set(tagged.get(m.id, ())) for m in members}
    if vectors:
        present = [m for m in members if m.id in vectors]
        if len(present) > 1:
            matrix = np.stack([np.asarray(vectors[m.id], dtype=np.float64) for m in present])
            norms = np.linalg.norm(matrix, axis=1)
            norms[norms == 0.0] = 1.0
            unit = matrix / norms[:, np.newaxis]
            cosines = unit @ unit.T
            rows, cols = np.nonzero(np.triu(cosines >= threshold, k=1))
            for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
                a, b = present[row], present[col]
                if a.id != b.id and _wings_allow(a, b):
                    links[a.id].add(b.id)
                    links[b.id].add(a.id)
    return {member: frozenset(found) for member, found in links.items()}
