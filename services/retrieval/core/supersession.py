"""Which drawers are superseded, and by what: read only from explicit `supersedes` links that
hold at the time asked about (never guessed from similarity or recency; issue 15).

Pure: the links come in; the search pipeline fetches them and decides what a query sees
(outside history intents a superseded drawer is withheld and its successor offered, carrying
the withheld drawer's match to the query: `inherit`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from services.retrieval.core.links import MAX_DEPTH, Link
from services.retrieval.core.scoring import Candidate

SUPERSEDES = "supersedes"


@dataclass(frozen=True)
class Supersession:
    superseded_by: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    supersedes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def latest(self, drawer_id: str) -> list[str]:
        """The drawers that replace `drawer_id` and are not replaced themselves, following the
        chain (at most MAX_DEPTH links); the drawer itself when nothing replaces it."""
        frontier, seen, found = [drawer_id], {drawer_id}, []
        for _ in range(MAX_DEPTH + 1):
            reached = []
            for current in frontier:
                successors = self.superseded_by.get(current, ())
                if not successors:
                    found.append(current)
                for successor in successors:
                    if successor not in seen:
                        seen.add(successor)
                        reached.append(successor)
            if not reached:
                break
            frontier = reached
        return list(dict.fromkeys(found)) or [drawer_id]


def supersession_of(links: Iterable[Link], at: float) -> Supersession:
    """The supersedes links among `links` that hold at `at`, both ways."""
    by: dict[str, list[str]] = {}
    of: dict[str, list[str]] = {}
    for link in links:
        if link.type != SUPERSEDES or not link.holds_at(at):
            continue
        by.setdefault(link.to_id, []).append(link.from_id)
        of.setdefault(link.from_id, []).append(link.to_id)
    return Supersession(
        {k: tuple(dict.fromkeys(v)) for k, v in by.items()},
        {k: tuple(dict.fromkeys(v)) for k, v in of.items()},
    )


def inherit(successor: Candidate, superseded: Candidate, *, least: float) -> Candidate:
    """`successor` standing in for `superseded` in one query's candidates.

    A supersedes link is an author's statement that the newer drawer answers what the older
    one answered. So when the older drawer answered *this* query — its cosine reaches `least`,
    the lowest relevance a shown result may stand on (the silence floor less the result
    margin) — the successor takes over that cosine where it is better than its own. Nothing
    else passes: the keyword match stays its own (one shared word is weak evidence), and so
    do type, pin, salience, confidence and author. An older drawer that was only a near-miss
    passes nothing, so an unrelated replacement is not lifted into another topic. Without
    this a replacement worded unlike the question would lose to discussion of the old value
    once the old drawer is withheld. (Passing the older drawer's salience too was measured
    and changed nothing on the supersession sets: it is not done.)"""
    if superseded.similarity < least or superseded.similarity <= successor.similarity:
        return successor
    return replace(successor, similarity=superseded.similarity)


def in_chain_order(ranked: Sequence[str], binding: Supersession) -> list[str]:
    """`ranked` ids with each supersession chain among them told in the order it happened:
    a drawer comes after every drawer it (transitively) supersedes, in the places the
    chain's members already hold; everything else keeps its rank. What a history question
    reads: how the decision changed, not only which versions match best."""
    rank = {drawer: n for n, drawer in enumerate(ranked)}
    parent = {drawer: drawer for drawer in ranked}

    def root(drawer: str) -> str:
        while parent[drawer] != drawer:
            parent[drawer] = parent[parent[drawer]]
            drawer = parent[drawer]
        return drawer

    for drawer in ranked:  # a chain: the ranked drawers joined by supersedes links
        for older in binding.supersedes.get(drawer, ()):
            if older in rank:
                parent[root(drawer)] = root(older)

    def replaced(drawer: str) -> int:
        seen: set[str] = set()
        stack = [d for d in binding.supersedes.get(drawer, ()) if d in rank]
        while stack:
            older = stack.pop()
            if older not in seen:
                seen.add(older)
                stack.extend(d for d in binding.supersedes.get(older, ()) if d in rank)
        return len(seen)

    chains: dict[str, list[str]] = {}
    for drawer in ranked:
        chains.setdefault(root(drawer), []).append(drawer)
    ordered = list(ranked)
    for members in chains.values():
        if len(members) > 1:
            told = sorted(members, key=lambda d: (replaced(d), rank[d]))
            for place, drawer in zip(sorted(rank[m] for m in members), told, strict=True):
                ordered[place] = drawer
    return ordered
