"""Session-start recollection (seed 003): the few drawers an agent should hold before it
starts, chosen from what the store holds as binding and what bears on the session's context.
Pure: the caller gathers the candidates (with their vectors) and packs the choice.

What comes first is the drawer's *standing*:

    pinned     a drawer an operator or author pinned: it binds every session
    canonical  a signed drawer: a claim later questions should resolve to
    ambient    everything else

With a context (what the session is about), the candidates are the drawers a search for that
context ranks above the store's silence floor, standing first and in the search's order
within a standing; pinned and canonical drawers the context did not reach fill the places
left (a pin binds every session, a canonical claim is what a session most often needs),
nearest to the context first. Ambient drawers come only when the context reaches them.
Without a context, pinned drawers come first, then canonical ones, then ambient ones, each
by effective salience and then recency.

Decisions:

- Standing is a partition, not a weight: a relevant pinned drawer is never outranked by a
  relevant canonical one, whatever their scores. Inside a standing the order is the
  search's (which already weighs type, pin, salience and confidence) or salience's.
- Diversity by maximal marginal relevance inside a standing: each pick maximises
  `MMR_LAMBDA · value − (1 − MMR_LAMBDA) · (highest cosine to a drawer already picked)`,
  `value` being the candidate's order in its standing mapped to (0, 1]. Five drawers that
  say the same thing five ways spend the session's context on one memory.
- A candidate at `REDUNDANT_COSINE` or more to a drawer already picked is left out: it is
  the same memory again, whatever its standing.
- Superseded and deprecated drawers never reach this module: the caller withholds them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Final

import numpy as np
import numpy.typing as npt

# The session-start cap of seed 003 ("inject top 5"), and the most a caller may ask for.
DEFAULT_PRIME_RESULTS: Final = 5
MAX_PRIME_RESULTS: Final = 20

# Carbonell & Goldstein's trade-off, at the usual value: relevance weighs more than novelty.
MMR_LAMBDA: Final = 0.7
# Unit-vector cosine at which two drawers are the same memory worded twice (all-MiniLM-L6-v2
# puts paraphrases of one sentence at 0.9 and above; distinct claims on one topic below).
REDUNDANT_COSINE: Final = 0.92


class Standing(IntEnum):
    """How binding a drawer is for a session start (higher first)."""

    AMBIENT = 0
    CANONICAL = 1
    PINNED = 2


REASONS: Final[Mapping[Standing, str]] = {
    Standing.PINNED: "pinned",
    Standing.CANONICAL: "canonical",
    Standing.AMBIENT: "salient",
}
RELEVANT = "relevant"  # the reason of an ambient drawer the context reached


@dataclass(frozen=True)
class PrimeCandidate:
    """A drawer offered to the session start, in its source's order (best first)."""

    id: str
    standing: Standing
    relevant: bool  # reached by the context's search (always False without a context)
    relevance: float  # the search's cosine to the context (0.0 without one)


@dataclass(frozen=True)
class Primed:
    id: str
    standing: Standing
    reason: str
    relevance: float


def standing_of(*, pinned: bool, signed: bool) -> Standing:
    if pinned:
        return Standing.PINNED
    return Standing.CANONICAL if signed else Standing.AMBIENT


def choose(
    candidates: Sequence[PrimeCandidate],
    vectors: Mapping[str, npt.NDArray[np.float32]],
    n: int,
) -> list[Primed]:
    """Up to `n` candidates: relevant ones first, then the rest; inside each, by standing
    (pinned, canonical, ambient); inside a standing, by maximal marginal relevance over the
    given order. A candidate without a vector is never redundant and adds no redundancy."""
    if n <= 0:
        return []
    groups: dict[tuple[bool, Standing], list[PrimeCandidate]] = {}
    for candidate in candidates:
        groups.setdefault((candidate.relevant, candidate.standing), []).append(candidate)
    picked: list[Primed] = []
    picked_vectors: list[npt.NDArray[np.float32]] = []
    for key in sorted(groups, key=lambda k: (k[0], k[1]), reverse=True):
        group = groups[key]
        values = {c.id: 1.0 - position / len(group) for position, c in enumerate(group)}
        remaining = list(group)
        while remaining and len(picked) < n:
            best: PrimeCandidate | None = None
            best_mmr = -np.inf
            for candidate in list(remaining):
                similarity = _max_cosine(vectors.get(candidate.id), picked_vectors)
                if similarity >= REDUNDANT_COSINE:
                    remaining.remove(candidate)
                    continue
                mmr = MMR_LAMBDA * values[candidate.id] - (1.0 - MMR_LAMBDA) * max(similarity, 0.0)
                if mmr > best_mmr:
                    best, best_mmr = candidate, mmr
            if best is None:
                break
            remaining.remove(best)
            reason = RELEVANT if best.relevant and best.standing is Standing.AMBIENT else None
            picked.append(
                Primed(
                    id=best.id,
                    standing=best.standing,
                    reason=reason or REASONS[best.standing],
                    relevance=best.relevance,
                )
            )
            vector = vectors.get(best.id)
            if vector is not None:
                picked_vectors.append(vector)
        if len(picked) >= n:
            break
    return picked


def _max_cosine(
    vector: npt.NDArray[np.float32] | None, others: Sequence[npt.NDArray[np.float32]]
) -> float:
    if vector is None or not others:
        return 0.0
    return float(np.max(np.stack(others) @ vector))
