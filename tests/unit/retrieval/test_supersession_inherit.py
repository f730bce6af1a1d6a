"""A successor standing in for the drawer it supersedes takes over that drawer's match to the
query, and only when that drawer answered the query; a history answer tells each chain in
order."""

from __future__ import annotations

from datetime import UTC, datetime

from services.retrieval.core.scoring import Candidate
from services.retrieval.core.supersession import Supersession, in_chain_order, inherit

NOW = datetime(2026, 7, 1, tzinfo=UTC)


def cand(id: str, similarity: float, **extra: object) -> Candidate:
    fields: dict[str, object] = {
        "memory_type": "decision",
        "pin_status": "active",
        "salience_base": 0.5,
        "last_activity": NOW,
        **extra,
    }
    return Candidate(id=id, similarity=similarity, **fields)  # type: ignore[arg-type]


def test_the_successor_takes_the_older_drawers_cosine_when_it_answered() -> None:
    old = cand("old", 0.71, keyword_hit=True, keyword_rank=0, keyword_score=9.0, salience_base=0.9)
    new = cand("new", 0.40, memory_type="directive")
    stood_in = inherit(new, old, least=0.45)
    assert stood_in.similarity == 0.71
    assert (stood_in.memory_type, stood_in.salience_base) == ("directive", 0.5), "own metadata"
    assert not stood_in.keyword_hit and stood_in.keyword_rank is None, "own keyword match"


def test_a_near_miss_passes_nothing_and_a_better_match_is_kept() -> None:
    assert inherit(cand("new", 0.20), cand("old", 0.40), least=0.45).similarity == 0.20
    assert inherit(cand("new", 0.80), cand("old", 0.70), least=0.45).similarity == 0.80


def test_a_history_answer_tells_each_chain_in_the_order_it_happened() -> None:
    # c supersedes b supersedes a; x is unrelated. Ranked by match: b, x, c, a.
    binding = Supersession(
        superseded_by={"a": ("b",), "b": ("c",)},
        supersedes={"b": ("a",), "c": ("b",)},
    )
    assert in_chain_order(["b", "x", "c", "a"], binding) == ["a", "x", "b", "c"]
    assert in_chain_order(["x", "y"], binding) == ["x", "y"], "no chain, no change"
