"""The 6-signal scorer: formula, dampening over the set, pin binding, rankers and selection.

Expected numbers are computed by hand from the design (formula, matrices, tiers), written out
in comments, and never read back from constants.py.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from services.retrieval.core import (
    Candidate,
    PinStatus,
    RankerMode,
    Ranking,
    ScoredCandidate,
    ScoringContext,
    default_min_relevance,
    rank,
    select,
)

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
LN2, LN4, LN5, LN14 = math.log(2), math.log(4), math.log(5), math.log(14)


def cand(
    id: str,
    sim: float = 0.5,
    memory_type: str = "decision",
    *,
    pin: PinStatus = "active",
    salience: float = 1.0,
    idle_weeks: float = 0.0,
    room: str = "projects/engram",
    added_by: str = "architect",
    confidence: float | None = None,
    keyword: bool = False,
) -> Candidate:
    return Candidate(
        id=id,
        similarity=sim,
        memory_type=memory_type,
        pin_status=pin,
        salience_base=salience,
        last_activity=NOW - timedelta(weeks=idle_weeks),
        room=room,
        added_by=added_by,
        confidence=confidence,
        keyword_hit=keyword,
        vector_hit=True,
    )


def ctx(
    intent: str = "general",
    mode: str = "default",
    *,
    legacy_authority: bool = False,
    profile: Mapping[str, str] | None = None,
    ranker: RankerMode = "full",
    include_deprecated: bool = False,
    default_tier: str = "worker",
) -> ScoringContext:
    return ScoringContext(
        mode=mode,
        intent=intent,
        now=NOW,
        legacy_authority=legacy_authority,
        authority_profile=profile or {},
        default_tier=default_tier,
        ranker=ranker,
        include_deprecated=include_deprecated,
    )


def by_id(ranking: Ranking) -> dict[str, ScoredCandidate]:
    return {s.id: s for s in ranking.ranked}


def ids(scored: list[ScoredCandidate] | tuple[ScoredCandidate, ...]) -> list[str]:
    return [s.id for s in scored]


# ---------------------------------------------------------------- the formula


def test_single_candidate_formula_by_hand() -> None:
    # One candidate: every dampened signal is uniform → 1.0. Debugging w_sal = 1.5.
    # score = 0.7 × 0.5^1.5 × 0.85 (diary) = 0.7 × 0.353553 × 0.85 = 0.210364; final + 0.04.
    c = cand("d", 0.7, "bug", salience=0.5, room="me/diary", keyword=True)
    s = rank([c], ctx("debugging")).ranked[0]
    expected = 0.7 * 0.5**1.5 * 0.85
    assert s.score == pytest.approx(expected), f"expected score {expected}, got {s.score}"
    assert s.final_score == pytest.approx(expected + 0.04)
    b = s.breakdown
    assert (b.salience, b.salience_weight) == (0.5, 1.5)
    assert b.type_multiplier_raw == 1.5 and b.type_factor == 1.0, "uniform type must collapse"
    assert (b.authority_factor, b.confidence_factor, b.diary_factor) == (1.0, 1.0, 0.85)


def test_diverse_pool_with_authority_by_hand() -> None:
    # Intent design. a: decision (1.5), architect → directive (1.6), salience 0.8.
    #                b: bug (0.7), engineer → worker (1.0), salience 1.0.
    # type damp = ln2/ln14 = 0.262650; a: 1 + 0.5·0.262650 = 1.131325, b: 1 − 0.3·0.262650.
    # authority damp = ln2/ln4 = 0.5; a: 1.3, b: 1.0. Confidence uniform (1.0) → 1.0.
    # score a = 0.6 × 0.8 × 1.3 × 1.131325 = 0.705947; score b = 0.5 × 0.921205 = 0.460603.
    profile = {"architect": "directive", "engineer": "worker"}
    a = cand("a", 0.6, "decision", salience=0.8, added_by="architect")
    b = cand("b", 0.5, "bug", added_by="engineer")
    r = rank([b, a], ctx("design", legacy_authority=True, profile=profile))
    damp_t = LN2 / LN14
    type_a, type_b = damp_t * 1.5 + (1 - damp_t), damp_t * 0.7 + (1 - damp_t)
    got = by_id(r)
    assert got["a"].breakdown.type_factor == pytest.approx(type_a)
    assert got["b"].breakdown.type_factor == pytest.approx(type_b)
    assert got["a"].breakdown.authority_factor == pytest.approx(1.3)
    assert got["a"].score == pytest.approx(0.6 * 0.8 * 1.3 * type_a)
    assert got["a"].score == pytest.approx(0.705947, abs=1e-6)
    assert got["b"].score == pytest.approx(0.460603, abs=1e-6)
    assert ids(r.ranked) == ["a", "b"]
    assert r.dampening.get("type").damp == pytest.approx(damp_t)
    assert r.dampening.get("authority").damp == pytest.approx(0.5)
    assert r.dampening.candidate_count == 2


def test_ranked_descending_by_final_score() -> None:
    r = rank([cand("low", 0.2), cand("high", 0.9), cand("mid", 0.5)], ctx())
    finals = [s.final_score for s in r.ranked]
    assert finals == sorted(finals, reverse=True), f"expected descending, got {finals}"
    assert ids(r.ranked) == ["high", "mid", "low"]


def test_tie_break_is_by_id_whatever_the_input_order() -> None:
    pool = [cand("c"), cand("a"), cand("b")]
    assert ids(rank(pool, ctx()).ranked) == ["a", "b", "c"]
    assert ids(rank(list(reversed(pool)), ctx()).ranked) == ["a", "b", "c"]


def test_unknown_intent_scores_as_general() -> None:
    r = rank([cand("a", memory_type="directive"), cand("b", memory_type="bug")], ctx("poetry"))
    assert r.intent == "general"
    assert by_id(r)["a"].breakdown.type_multiplier_raw == 1.2, "directive × general"


def test_empty_candidate_set_gives_an_empty_ranking() -> None:
    r = rank([], ctx())
    assert r.ranked == () and r.dampening.candidate_count == 0
    assert select(r) == []


# ---------------------------------------------------------------- keyword boost


def test_keyword_boost_is_additive_regardless_of_factors() -> None:
    # Same drawer twice, only the keyword hit differs; diary, decay, debugging and a diverse
    # type pool all scale `score` but the hit adds exactly 0.04 on top.
    pool = [
        cand("hit", 0.6, "bug", salience=0.7, idle_weeks=9, room="diary", keyword=True),
        cand("miss", 0.6, "bug", salience=0.7, idle_weeks=9, room="diary"),
        cand("other", 0.4, "architecture"),
    ]
    got = by_id(rank(pool, ctx("debugging")))
    assert got["hit"].score == got["miss"].score, "the boost must not touch the product"
    diff = got["hit"].final_score - got["miss"].final_score
    assert diff == pytest.approx(0.04, abs=1e-12), f"expected +0.04 exactly, got {diff}"
    assert got["hit"].breakdown.keyword_boost == 0.04 and got["miss"].breakdown.keyword_boost == 0
    assert got["miss"].final_score == got["miss"].score


def test_keyword_boost_lifts_a_negative_similarity_too() -> None:
    s = rank([cand("k", -0.2, keyword=True)], ctx()).ranked[0]
    assert s.final_score == pytest.approx(-0.2 + 0.04)


# ---------------------------------------------------------------- similarity floor


def test_similarity_below_minus_point_three_is_dropped_before_scoring() -> None:
    r = rank([cand("gone", -0.31), cand("edge", -0.3), cand("kept", -0.29)], ctx())
    assert r.below_floor == ("gone",), f"expected only 'gone' dropped, got {r.below_floor}"
    assert sorted(ids(r.ranked)) == ["edge", "kept"]


def test_dropped_candidates_do_not_count_towards_dampening() -> None:
    r = rank([cand("a", 0.5, "decision"), cand("z", -0.9, "bug")], ctx("design"))
    entry = r.dampening.get("type")
    assert entry.distinct_values == 1 and entry.damp == 0.0
    assert r.ranked[0].breakdown.type_factor == 1.0


# ---------------------------------------------------------------- pin status


def test_deprecated_is_excluded_by_default() -> None:
    r = rank([cand("old", 0.9, pin="deprecated"), cand("new", 0.4)], ctx("planning"))
    assert ids(r.ranked) == ["new"], "a deprecated drawer must not be served for planning"
    assert r.excluded_deprecated == ("old",)


def test_deprecated_is_included_and_flagged_for_history() -> None:
    r = rank([cand("old", 0.9, pin="deprecated"), cand("new", 0.4)], ctx("history"))
    got = by_id(r)
    assert set(got) == {"old", "new"}
    assert got["old"].deprecated and got["old"].breakdown.deprecated
    assert not got["new"].deprecated


def test_deprecated_is_included_and_flagged_when_asked() -> None:
    r = rank([cand("old", pin="deprecated")], ctx("planning", include_deprecated=True))
    assert ids(r.ranked) == ["old"] and r.ranked[0].deprecated


def test_companion_has_no_history_intent_so_deprecated_stays_out() -> None:
    r = rank([cand("old", memory_type="want", pin="deprecated")], ctx("history", "companion"))
    assert r.ranked == () and r.intent == "general"


def test_pinned_drawers_keep_their_salience() -> None:
    pool = [
        cand("pinned", pin="pinned", salience=0.9, idle_weeks=52),
        cand("active", salience=0.9, idle_weeks=52),
    ]
    got = by_id(rank(pool, ctx()))
    assert got["pinned"].breakdown.salience == 0.9
    assert got["active"].breakdown.salience == pytest.approx(0.9 * 0.975**52)


# ---------------------------------------------------------------- salience weight


@pytest.mark.parametrize(
    ("intent", "w_sal"), [("debugging", 1.5), ("planning", 0.8), ("review", 1)]
)
def test_salience_is_raised_to_the_intent_weight(intent: str, w_sal: float) -> None:
    s = rank([cand("a", salience=0.64)], ctx(intent)).ranked[0]
    assert s.breakdown.salience_weight == w_sal
    assert s.breakdown.salience_factor == pytest.approx(0.64**w_sal)


# ---------------------------------------------------------------- authority


def test_authority_is_off_without_legacy_authority() -> None:
    profile = {"architect": "directive", "engineer": "worker"}
    pool = [cand("a", added_by="architect"), cand("b", added_by="engineer")]
    r = rank(pool, ctx(profile=profile))
    assert all(s.breakdown.authority_factor == 1.0 for s in r.ranked)
    assert all(s.breakdown.authority_raw == 1.0 for s in r.ranked)
    entry = r.dampening.get("authority")
    assert not entry.enabled and not entry.fired


def test_single_author_pool_collapses_authority_to_one() -> None:
    profile = {"architect": "directive"}
    pool = [cand("a", 0.6), cand("b", 0.5)]
    r = rank(pool, ctx(legacy_authority=True, profile=profile))
    for s in r.ranked:
        assert s.breakdown.authority_raw == 1.6
        assert s.breakdown.authority_factor == 1.0, "same author: expected factor exactly 1.0"
    assert r.dampening.get("authority").enabled and not r.dampening.get("authority").fired


def test_different_authors_in_one_tier_do_not_fire() -> None:
    profile = {"alice": "advisory", "bob": "advisory"}
    pool = [cand("a", added_by="alice"), cand("b", added_by="bob")]
    r = rank(pool, ctx(legacy_authority=True, profile=profile))
    assert [s.breakdown.authority_factor for s in r.ranked] == [1.0, 1.0]


def test_unprofiled_authors_take_the_default_tier() -> None:
    # architect → directive (1.6); stranger → execution (1.1) by default_tier.
    # Two tiers of four: damp 0.5 → 1.3 and 1.05.
    profile = {"architect": "directive"}
    pool = [cand("a", added_by="architect"), cand("s", added_by="stranger")]
    c = ctx(legacy_authority=True, profile=profile, default_tier="execution")
    got = by_id(rank(pool, c))
    assert got["s"].breakdown.authority_raw == 1.1
    assert got["s"].breakdown.authority_factor == pytest.approx(1.05)
    assert got["a"].breakdown.authority_factor == pytest.approx(1.3)


def test_unknown_tier_in_profile_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown tiers \\['overlord'\\]"):
        ctx(legacy_authority=True, profile={"x": "overlord"})


# ---------------------------------------------------------------- confidence


def test_default_confidence_of_opinion_fires_against_decisions() -> None:
    # opinion → 0.6 (level 3), decision → 1.0 (level 5): damp = ln2/ln5 = 0.430677.
    # opinion factor = 0.430677·0.6 + 0.569323 = 0.827729.
    r = rank([cand("o", memory_type="opinion"), cand("d", memory_type="decision")], ctx())
    got = by_id(r)
    damp_c = LN2 / LN5
    assert got["o"].breakdown.confidence_raw == 0.6
    assert got["o"].breakdown.confidence_factor == pytest.approx(damp_c * 0.6 + 1 - damp_c)
    assert got["o"].breakdown.confidence_factor == pytest.approx(0.827729, abs=1e-6)
    assert got["d"].breakdown.confidence_factor == 1.0


def test_drawer_confidence_overrides_the_type_default() -> None:
    r = rank([cand("low", confidence=0.3), cand("sure")], ctx())
    got = by_id(r)
    damp_c = LN2 / LN5
    assert got["low"].breakdown.confidence_raw == 0.3
    assert got["low"].breakdown.confidence_factor == pytest.approx(damp_c * 0.3 + 1 - damp_c)


def test_uniform_confidence_collapses_even_when_low() -> None:
    r = rank([cand("a", confidence=0.7), cand("b", confidence=0.7)], ctx())
    assert [s.breakdown.confidence_factor for s in r.ranked] == [1.0, 1.0]


# ---------------------------------------------------------------- type × intent


def test_same_type_pool_collapses_the_type_factor() -> None:
    pool = [cand(str(i), 0.5 + i / 100, "architecture") for i in range(10)]
    r = rank(pool, ctx("planning"))
    for s in r.ranked:
        assert s.breakdown.type_multiplier_raw == 1.4
        assert s.breakdown.type_factor == 1.0, "ten same-typed drawers: expected 1.0"
    assert not r.dampening.get("type").fired


def test_unknown_type_is_neutral_but_counts_as_diversity() -> None:
    r = rank([cand("d", memory_type="decision"), cand("x", memory_type="musing")], ctx("design"))
    got = by_id(r)
    damp_t = LN2 / LN14
    assert got["x"].breakdown.type_multiplier_raw == 1.0 and got["x"].breakdown.type_factor == 1.0
    assert got["d"].breakdown.type_factor == pytest.approx(damp_t * 1.5 + 1 - damp_t)


def test_companion_mode_uses_the_speech_act_matrix() -> None:
    pool = [cand("w", memory_type="want"), cand("o", memory_type="observation")]
    r = rank(pool, ctx("state_check", "companion"))
    got = by_id(r)
    damp_t = LN2 / LN4  # two of four companion types
    assert got["o"].breakdown.type_multiplier_raw == 1.4
    assert got["o"].breakdown.type_factor == pytest.approx(damp_t * 1.4 + 1 - damp_t)
    assert ids(r.ranked) == ["o", "w"]


# ---------------------------------------------------------------- diary


def test_diary_room_is_penalised_outside_history() -> None:
    pool = [cand("diary", room="personal/Diary-2026"), cand("canon", room="projects/engram")]
    got = by_id(rank(pool, ctx("planning")))
    assert got["diary"].breakdown.diary_factor == 0.85, "room name match is case-insensitive"
    assert got["canon"].breakdown.diary_factor == 1.0
    assert got["diary"].score == pytest.approx(0.85 * got["canon"].score)


def test_diary_penalty_is_never_dampened() -> None:
    pool = [cand(str(i), room="me/diary") for i in range(5)]
    for s in rank(pool, ctx("design")).ranked:
        assert s.breakdown.diary_factor == 0.85, "an all-diary pool must still be penalised"
        assert s.score == pytest.approx(0.5 * 0.85)


def test_history_reads_diaries_without_penalty() -> None:
    s = rank([cand("d", room="me/diary")], ctx("history")).ranked[0]
    assert s.breakdown.diary_factor == 1.0


@pytest.mark.parametrize(
    ("intent", "factor"), [("recall", 1.0), ("reflection", 1.0), ("general", 0.85)]
)
def test_companion_historical_intents_read_diaries_without_penalty(
    intent: str, factor: float
) -> None:
    s = rank([cand("d", memory_type="want", room="diary")], ctx(intent, "companion")).ranked[0]
    assert s.breakdown.diary_factor == factor, f"{intent}: expected diary factor {factor}"


# ---------------------------------------------------------------- ranker modes


def _busy_pool() -> list[Candidate]:
    return [
        cand("a", 0.6, "decision", added_by="architect", room="diary", idle_weeks=30),
        cand("b", 0.5, "bug", added_by="engineer", keyword=True, confidence=0.2),
        cand("c", 0.55, "opinion", added_by="engineer", salience=0.3),
        cand("old", 0.9, "decision", pin="deprecated"),
        cand("far", -0.5, "bug"),
    ]


def test_hybrid_ranker_is_similarity_plus_keyword_boost() -> None:
    profile = {"architect": "directive", "engineer": "worker"}
    r = rank(_busy_pool(), ctx("design", legacy_authority=True, profile=profile, ranker="hybrid"))
    for s in r.ranked:
        b = s.breakdown
        factors = (b.salience_factor, b.authority_factor, b.confidence_factor, b.type_factor)
        assert factors == (1.0, 1.0, 1.0, 1.0) and b.diary_factor == 1.0, f"{s.id}: {b}"
        assert s.final_score == s.candidate.similarity + (0.04 if s.candidate.keyword_hit else 0)
    assert ids(r.ranked) == ["a", "c", "b"], "0.6, 0.55, 0.5 + 0.04"
    assert not any(entry.enabled for entry in r.dampening.signals)


def test_cosine_ranker_is_similarity_alone() -> None:
    r = rank(_busy_pool(), ctx("design", ranker="cosine"))
    for s in r.ranked:
        assert s.final_score == s.candidate.similarity and s.breakdown.keyword_boost == 0.0
    assert ids(r.ranked) == ["a", "c", "b"]


@pytest.mark.parametrize("ranker", ["full", "hybrid", "cosine"])
def test_every_ranker_applies_the_floor_and_pin_binding(ranker: RankerMode) -> None:
    r = rank(_busy_pool(), ctx("design", ranker=ranker))
    assert r.below_floor == ("far",) and r.excluded_deprecated == ("old",)
    assert r.ranker == ranker


def _two_retriever_pool() -> list[Candidate]:
    """k1, k2: keyword hits (BM25 positions 1 and 0); v1: vector only; both: in both."""
    return [
        replace(cand("k1", 0.2, "opinion", keyword=True), vector_hit=False, keyword_rank=1),
        replace(cand("k2", 0.1, "bug", keyword=True), vector_hit=False, keyword_rank=0),
        cand("v1", 0.7, "decision"),
        replace(cand("both", 0.5, "decision", keyword=True), keyword_rank=2),
        replace(cand("old", 0.9, keyword=True, pin="deprecated"), keyword_rank=3),
        cand("far", -0.5, "bug"),
    ]


def test_keyword_ranker_keeps_keyword_hits_in_bm25_order() -> None:
    r = rank(_two_retriever_pool(), ctx("design", ranker="keyword"))
    # BM25 positions 0, 1, 2 → scores 1/1, 1/2, 1/3; v1 and far were never keyword hits.
    assert ids(r.ranked) == ["k2", "k1", "both"], "similarity and metadata play no part"
    assert [s.final_score for s in r.ranked] == pytest.approx([1.0, 0.5, 1 / 3])
    assert all(s.breakdown.keyword_boost == 0.0 for s in r.ranked), "no boost on top of BM25"
    assert r.excluded_deprecated == ("old",) and r.below_floor == ()
    assert by_id(r)["k1"].breakdown.similarity == 0.2, "the raw similarity stays in the breakdown"
    assert not any(entry.enabled for entry in r.dampening.signals)


def test_dense_ranker_keeps_vector_hits_by_cosine_alone() -> None:
    r = rank(_two_retriever_pool(), ctx("design", ranker="dense"))
    assert ids(r.ranked) == ["v1", "both"], "keyword-only hits k1, k2 are not dense candidates"
    for s in r.ranked:
        assert s.final_score == s.candidate.similarity and s.breakdown.keyword_boost == 0.0
    assert r.below_floor == ("far",) and r.excluded_deprecated == ("old",)


def test_keyword_rank_cannot_be_negative() -> None:
    with pytest.raises(ValueError, match="keyword_rank"):
        replace(cand("a"), keyword_rank=-1)


def test_uniform_metadata_makes_full_rank_like_hybrid() -> None:
    """One type, one room, one author, all active, salience 1.0 at `now`: every dampened signal
    has entropy 0 and salience^w_sal is 1, so full scoring is hybrid's ranking exactly."""
    pool = [
        replace(cand(f"d{i}", 0.3 + 0.05 * i, "fact", keyword=i % 2 == 0), keyword_rank=i)
        for i in range(8)
    ]
    for intent in ("planning", "debugging", "general"):
        full = rank(pool, ctx(intent, ranker="full"))
        hybrid = rank(pool, ctx(intent, ranker="hybrid"))
        assert ids(full.ranked) == ids(hybrid.ranked), intent
        assert [s.final_score for s in full.ranked] == pytest.approx(
            [s.final_score for s in hybrid.ranked]
        )


# ---------------------------------------------------------------- selection


def test_nothing_above_min_score_is_silence() -> None:
    r = rank([cand("a", 0.3), cand("b", 0.2)], ctx())
    assert select(r, min_score=0.5) == [], "nothing cleared min_score: expected an empty result"


def test_min_score_applies_to_the_final_score() -> None:
    r = rank([cand("hit", 0.1, keyword=True), cand("miss", 0.1)], ctx())
    assert ids(select(r, min_score=0.12)) == ["hit"], "0.1 + 0.04 clears 0.12; 0.1 does not"


def test_n_results_cuts_after_ordering() -> None:
    r = rank([cand(f"d{i}", 0.3 + i / 20) for i in range(6)], ctx())
    assert ids(select(r, n_results=2, min_score=0.0)) == ["d5", "d4"]
    assert select(r, n_results=0) == []


def test_companion_defaults_to_five_results() -> None:
    pool = [cand(f"w{i}", 0.9, "want") for i in range(8)]
    assert len(select(rank(pool, ctx(mode="companion")))) == 5


def test_default_mode_defaults_to_ten_results() -> None:
    pool = [cand(f"d{i:02}", 0.9) for i in range(12)]
    assert len(select(rank(pool, ctx()))) == 10


@pytest.mark.parametrize("mode", ["default", "companion"])
def test_default_floor_silences_a_query_nothing_answers(mode: str) -> None:
    floor = default_min_relevance(mode)
    memory_type = "want" if mode == "companion" else "decision"
    pool = [cand("near", floor - 0.01, memory_type), cand("far", floor - 0.2, memory_type)]
    assert select(rank(pool, ctx(mode=mode))) == [], "best relevance under the floor: silence"


def test_default_floor_keeps_results_within_the_margin_once_answered() -> None:
    # The best clears the floor, so the query is answered; supporting results may stand up
    # to RESULT_RELEVANCE_MARGIN (0.15) under it; anything further is cut.
    floor = default_min_relevance("default")
    pool = [
        cand("best", floor + 0.05),
        cand("support", floor - 0.10),
        cand("noise", floor - 0.20),
    ]
    assert ids(select(rank(pool, ctx()))) == ["best", "support"]


def test_an_answered_companion_query_gets_its_whole_narrative_set() -> None:
    # The floor decides whether anything answers; once it does, a narrative set's supporting
    # memories are not cut by their own relevance (they are rightly less like the question).
    floor = default_min_relevance("companion")
    pool = [
        cand("best", floor + 0.05, "want"),
        cand("support", floor - 0.10, "observation"),
        cand("far", floor - 0.40, "preference"),
    ]
    chosen = select(rank(pool, ctx(mode="companion")))
    assert ids(chosen)[0] == "best" and set(ids(chosen)) == {"best", "support", "far"}, ids(chosen)
    hybrid = select(rank(pool, ctx(mode="companion", ranker="hybrid")))
    assert ids(hybrid) == ["best", "support"], "a plain ranker keeps the margin: no set to fill"


def test_negative_n_results_is_refused() -> None:
    with pytest.raises(ValueError, match="n_results must be 0 or more"):
        select(rank([], ctx()), n_results=-1)


# ---------------------------------------------------------------- invalid input


def test_unknown_mode_and_ranker_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown deployment mode"):
        ctx(mode="swarm")
    with pytest.raises(ValueError, match="ranker 'bm25'"):
        ctx(ranker="bm25")  # type: ignore[arg-type]


def test_unknown_pin_status_and_nan_similarity_are_refused() -> None:
    with pytest.raises(ValueError, match="pin_status 'archived'"):
        cand("a", pin="archived")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="NaN"):
        cand("a", float("nan"))


# ---------------------------------------------------------------- fused relevance


def test_relevance_adds_calibrated_keyword_evidence() -> None:
    # The best keyword hit scores 8; the query's reference (Σ IDF) is 10, so the scale is
    # max(8, 0.2 × 10) = 8: "a" gains 0.4 × 8/8 = 0.4, "b" 0.4 × 4/8 = 0.2, "c" nothing.
    a = replace(cand("a", 0.5), keyword_hit=True, keyword_score=8.0)
    b = replace(cand("b", 0.5), keyword_hit=True, keyword_score=4.0)
    c = cand("c", 0.5)
    r = by_id(rank([a, b, c], replace(ctx(), keyword_reference=10.0)))
    assert r["a"].breakdown.relevance == pytest.approx(0.9)
    assert r["b"].breakdown.relevance == pytest.approx(0.7)
    assert r["c"].breakdown.relevance == pytest.approx(0.5)
    # The floor's absolute form: coverage = bm25 / reference (0.8 and 0.4).
    assert r["a"].breakdown.standing_relevance == pytest.approx(0.5 + 0.4 * 0.8)
    assert r["b"].breakdown.standing_relevance == pytest.approx(0.5 + 0.4 * 0.4)


def test_a_weak_best_keyword_match_is_not_promoted_to_full_evidence() -> None:
    # Best hit 1.0 against a reference of 20: the scale is 0.2 × 20 = 4, evidence 0.25.
    a = replace(cand("a", 0.5), keyword_hit=True, keyword_score=1.0)
    r = rank([a, cand("b", 0.4)], replace(ctx(), keyword_reference=20.0))
    assert by_id(r)["a"].breakdown.keyword_evidence == pytest.approx(0.25)


def test_cosine_ranker_ignores_keyword_evidence() -> None:
    a = replace(cand("a", 0.5), keyword_hit=True, keyword_score=8.0)
    r = rank([a], replace(ctx(ranker="cosine"), keyword_reference=10.0))
    assert r.ranked[0].final_score == pytest.approx(0.5)


# ---------------------------------------------------------------- topical authority


def topic_cand(id: str, sim: float, memory_type: str, **kw: object) -> Candidate:
    base = cand(id, sim, memory_type, **kw)  # type: ignore[arg-type]
    return replace(base, topic="auction-timeout")


def test_the_decision_stands_on_the_discussions_evidence() -> None:
    # Planning; same room and topic. The observation echoes the query (0.8), the decision
    # does not (0.5, inside the 2× window). Type damp = ln2/ln14 = 0.262650:
    # decision 1 + 0.3·damp = 1.078795, observation 1 − 0.1·damp = 0.973735.
    # The decision stands on 0.8 → 0.8 × 1.078795 = 0.863036 > 0.8 × 0.973735 = 0.778988.
    decision = topic_cand("dec", 0.5, "decision")
    talk = topic_cand("obs", 0.8, "observation")
    r = rank([talk, decision], ctx("planning"))
    assert ids(list(r.ranked)) == ["dec", "obs"], "the decision must win its topic"
    got = by_id(r)["dec"]
    damp = LN2 / LN14
    assert got.breakdown.lifted_by == "obs"
    assert got.score == pytest.approx(0.8 * (1 + 0.3 * damp))
    assert by_id(r)["obs"].breakdown.lifted_by == "", "evidence never flows upward to talk"
    assert r.lifted == 1


def test_rules_lifted_by_one_neighbour_are_ordered_by_their_own_evidence() -> None:
    # Two decisions on one topic stand on the same discussion's evidence with the same
    # provenance, so their scores tie exactly. The tie goes to the one whose own evidence is
    # larger (the fresher rule: 0.5 × 0.6^0.8 = 0.333 against 0.6 × 0.2^0.8 = 0.166), not to
    # the smaller id.
    talk = topic_cand("obs", 0.8, "observation")
    old = topic_cand("a-old", 0.6, "decision", salience=0.2)
    new = topic_cand("b-new", 0.5, "decision", salience=0.6)
    r = rank([talk, old, new], ctx("planning"))
    assert by_id(r)["a-old"].final_score == by_id(r)["b-new"].final_score, "a tie to break"
    assert ids(list(r.ranked))[:2] == ["b-new", "a-old"], "the fresher rule must come first"


def test_uniform_metadata_shares_nothing() -> None:
    # Same type, same everything: nobody outranks anybody, so the ranking is the seed's.
    a, b = topic_cand("a", 0.5, "decision"), topic_cand("b", 0.8, "decision")
    r = rank([a, b], ctx("planning"))
    assert ids(list(r.ranked)) == ["b", "a"] and r.lifted == 0


def test_no_sharing_across_topics_or_outside_the_override_window() -> None:
    other_topic = replace(cand("dec", 0.5, "decision"), topic="billing")
    talk = topic_cand("obs", 0.8, "observation")
    assert rank([talk, other_topic], ctx("planning")).lifted == 0, "different topic"
    # Planning ranks a spike (1.1) over an observation (0.9), but a spike rules nothing: it
    # keeps the 2× window. 0.8 / 0.3 > 2: not about what is asked.
    far = topic_cand("spk", 0.3, "spike")
    assert rank([talk, far], ctx("planning")).lifted == 0, "outside the window"
    beyond = topic_cand("dec", 0.15, "decision")  # 0.8 / 0.15 > 4: not even a rule's window
    assert rank([talk, beyond], ctx("planning")).lifted == 0, "outside the binding window"


def test_close_vectors_make_neighbours_without_a_tag() -> None:
    a = cand("dec", 0.5, "decision")
    b = cand("obs", 0.8, "observation")
    same = {"dec": np.array([1.0, 0.0]), "obs": np.array([0.9, 0.1])}
    apart = {"dec": np.array([1.0, 0.0]), "obs": np.array([0.0, 1.0])}
    assert rank([a, b], ctx("planning"), same).lifted == 1
    assert rank([a, b], ctx("planning"), apart).lifted == 0


def test_pinned_binds_over_active_on_the_same_topic() -> None:
    # Same type: only the pin differs (×1.1, never dampened).
    pinned = topic_cand("pin", 0.5, "decision", pin="pinned", salience=0.3)
    fresh = topic_cand("new", 0.8, "decision", salience=0.9)
    r = rank([fresh, pinned], ctx("planning"))
    assert ids(list(r.ranked))[0] == "pin"
    assert by_id(r)["pin"].breakdown.pin_factor == pytest.approx(1.1)


def test_a_pin_and_a_rule_bind_across_a_wider_window_than_other_types() -> None:
    # 0.8 / 0.25 = 3.2: outside the 2× window an outranking type gets over its neighbour,
    # inside the 4× binding window of a pin over an unpinned neighbour, or of a ruling type
    # (directive, architecture, decision) over discussion.
    talk = topic_cand("obs", 0.8, "observation")
    spike = topic_cand("spk", 0.25, "spike")  # planning: spike 1.1 over observation 0.9
    assert rank([talk, spike], ctx("planning")).lifted == 0, "a type that rules nothing: outside"
    for ruling in ("directive", "architecture", "decision"):
        rule = topic_cand("rule", 0.25, ruling)
        r = rank([talk, rule], ctx("planning"))
        assert ids(list(r.ranked))[0] == "rule", f"a {ruling} must rule the talk on its topic"
        assert by_id(r)["rule"].breakdown.lifted_by == "obs"
    pinned = topic_cand("spk", 0.25, "spike", pin="pinned")
    r = rank([talk, pinned], ctx("planning"))
    assert ids(list(r.ranked))[0] == "spk" and by_id(r)["spk"].breakdown.lifted_by == "obs"
    rule = topic_cand("rule", 0.25, "want", pin="pinned")
    offer = topic_cand("offer", 0.8, "observation")
    r = rank([offer, rule], ctx("procedural", mode="companion"))
    assert ids(list(r.ranked))[0] == "rule", "a pinned constraint governs its topic"
    beyond = topic_cand("rule", 0.15, "want", pin="pinned")  # 0.8 / 0.15 > 4
    assert rank([offer, beyond], ctx("procedural", mode="companion")).lifted == 0
    both = topic_cand("offer", 0.8, "observation", pin="pinned")
    assert rank([both, rule], ctx("procedural", mode="companion")).lifted == 0, "pin vs pin"


def test_a_rule_binds_over_discussion_only() -> None:
    # Rule over rule keeps the 2× window (design: decision 1.5 over architecture 1.3), and so
    # does a rule over a pinned note: the pin is the operator's word on that drawer.
    arch = topic_cand("arch", 0.8, "architecture")
    decision = topic_cand("dec", 0.25, "decision")
    assert rank([arch, decision], ctx("design")).lifted == 0, "rule over rule: 2× window"
    pinned_note = topic_cand("obs", 0.8, "observation", pin="pinned")
    assert rank([pinned_note, decision], ctx("planning")).lifted == 0, "rule over a pin"
    # Debugging ranks a bug (1.5) over a decision (0.7): authority, not the window, decides.
    bug = topic_cand("bug", 0.8, "bug")
    assert rank([bug, decision], ctx("debugging")).lifted == 0, "a rule does not rule a bug hunt"
    # A companion speech act rules nothing, whatever the intent favours.
    want = topic_cand("w", 0.25, "want")
    seen = topic_cand("o", 0.8, "observation")
    assert rank([seen, want], ctx("procedural", mode="companion")).lifted == 0


def test_companion_speech_acts_do_not_outrank_each_other_by_type() -> None:
    # Procedural favours wants, but a want is not more authoritative than an observation:
    # no evidence flows between them in a companion store.
    want = topic_cand("w", 0.5, "want")
    seen = topic_cand("o", 0.8, "observation")
    assert rank([want, seen], ctx("procedural", mode="companion")).lifted == 0


def test_deprecated_shown_outside_history_never_wins() -> None:
    old = cand("old", 0.9, "decision", pin="deprecated")
    new = cand("new", 0.5, "decision")
    r = rank([old, new], ctx("design", include_deprecated=True))
    assert ids(list(r.ranked)) == ["new", "old"]
    assert by_id(r)["old"].breakdown.pin_factor == pytest.approx(0.2)
    history = rank([old, new], ctx("history"))
    assert ids(list(history.ranked)) == ["old", "new"], "history takes it as it is"


# ---------------------------------------------------------------- soft intent


def test_a_mixture_weights_the_matrix_columns() -> None:
    # 0.5 planning + 0.5 debugging: decision 0.5·1.3 + 0.5·0.7 = 1.0, bug 0.5·0.8 + 0.5·1.5
    # = 1.15; w_sal = 0.5·0.8 + 0.5·1.5 = 1.15.
    c = replace(ctx("planning"), intent_weights={"planning": 0.5, "debugging": 0.5})
    r = by_id(rank([cand("d", 0.5, "decision"), cand("b", 0.5, "bug")], c))
    assert r["d"].breakdown.type_multiplier_raw == pytest.approx(1.0)
    assert r["b"].breakdown.type_multiplier_raw == pytest.approx(1.15)
    assert r["d"].breakdown.salience_weight == pytest.approx(1.15)


def test_intent_weights_must_be_usable() -> None:
    with pytest.raises(ValueError, match="non-negative"):
        replace(ctx(), intent_weights={"planning": -1.0})
    with pytest.raises(ValueError, match="all be zero"):
        replace(ctx(), intent_weights={"planning": 0.0})


# ---------------------------------------------------------------- narrative sets


def test_a_companion_set_spans_the_speech_acts() -> None:
    # General intent, type damp = H(3 wants, 1 preference, 1 observation)/ln4 = 0.685:
    # want ×1.2056, preference ×1.137, observation ×1.0. Scores: w1 1.085, w2 1.061,
    # w3 1.037, p 0.910, o 0.870. After w1 each remaining want counts ×0.8 (w2 → 0.849),
    # so the set takes p (0.910) and o (0.870) before the second-best want.
    pool = [
        cand("w1", 0.90, "want"),
        cand("w2", 0.88, "want"),
        cand("w3", 0.86, "want"),
        cand("p", 0.80, "preference"),
        cand("o", 0.87, "observation"),
    ]
    chosen = select(rank(pool, ctx("general", mode="companion")), n_results=3, min_score=-1.0)
    assert ids(chosen)[0] == "w1", "the best drawer always comes first"
    assert set(ids(chosen)) == {"w1", "p", "o"}, ids(chosen)


def story_cand(id: str, sim: float, memory_type: str, topic: str) -> Candidate:
    return replace(cand(id, sim, memory_type, room="life/wedding"), topic=topic)


def test_a_narrative_set_gathers_the_topic_of_its_best_memory() -> None:
    # The best memory is the wedding date (an observation). Its topic also holds a want (the
    # toast) and an opinion (the venue) that echo the question far less than an unrelated
    # preference does; the set tells the wedding's story first.
    pool = [
        story_cand("date", 0.80, "observation", "sister-wedding"),
        story_cand("unrelated", 0.55, "preference", "coffee"),
        story_cand("toast", 0.20, "want", "sister-wedding"),
        story_cand("venue", 0.15, "opinion", "sister-wedding"),
    ]
    chosen = select(rank(pool, ctx("general", mode="companion")), n_results=3, min_score=-1.0)
    assert ids(chosen)[0] == "date", "the best drawer always comes first"
    assert set(ids(chosen)) == {"date", "toast", "venue"}, ids(chosen)
    untagged = [replace(c, topic="") for c in pool]
    plain = select(rank(untagged, ctx("general", mode="companion")), n_results=3, min_score=-1.0)
    assert "unrelated" in ids(plain), "without a shared topic nothing is gathered"


def test_a_narrative_set_does_not_gather_neighbours_of_the_same_speech_act() -> None:
    # Uniform types: the set is the ranking, topics or not (the no-op guarantee).
    pool = [
        story_cand("a", 0.80, "observation", "sister-wedding"),
        story_cand("b", 0.55, "observation", "coffee"),
        story_cand("c", 0.20, "observation", "sister-wedding"),
    ]
    ranking = rank(pool, ctx("general", mode="companion"))
    assert ids(select(ranking, n_results=3, min_score=-1.0)) == ids(ranking.ranked)


def test_a_gathered_memory_never_ties_the_one_that_gathered_it() -> None:
    pool = [
        story_cand("date", 0.80, "observation", "sister-wedding"),
        story_cand("toast", 0.10, "want", "sister-wedding"),
    ]
    chosen = select(rank(pool, ctx("general", mode="companion")), n_results=2, min_score=-1.0)
    assert ids(chosen) == ["date", "toast"]


# ---------------------------------------------------------------- relevance override window


def test_metadata_never_lifts_a_memory_from_outside_the_relevance_window() -> None:
    # A fresh pinned rule on another subject (relevance 0.25, salience 0.85, pinned) against the
    # memory the question names (0.60, idle 42 weeks: salience 0.75 × 0.975^42 ≈ 0.26). Without
    # the window the rule scores 0.25 × 0.85 × 1.1 × type ≈ 0.25 and the memory 0.60 × 0.26 ≈
    # 0.16; 0.60 / 0.25 > 2, so the rule is ranked after it.
    trip = cand("trip", 0.60, "want", salience=0.75, idle_weeks=42, room="travel/azores")
    rule = cand("rule", 0.25, "want", pin="pinned", salience=0.85, room="money/budget")
    ranking = rank([rule, trip], ctx("general", mode="companion"))
    assert by_id(ranking)["rule"].final_score > by_id(ranking)["trip"].final_score
    assert ids(ranking.ranked) == ["trip", "rule"], "a rule on another subject outranked it"
    assert ranking.outside_window == {"rule"}
    inside = replace(rule, similarity=0.35)  # 0.60 / 0.35 < 2: metadata decides
    assert ids(rank([inside, trip], ctx("general", mode="companion")).ranked)[0] == "rule"


def test_the_relevance_window_moves_nothing_when_metadata_is_uniform() -> None:
    pool = [cand("a", 0.9, keyword=True), cand("b", 0.3, keyword=True), cand("c", 0.2)]
    ranking = rank(pool, ctx("planning"))
    assert ranking.outside_window == frozenset()
    assert ids(ranking.ranked) == ["a", "b", "c"]


def test_a_lifted_drawer_answers_on_its_neighbours_relevance() -> None:
    # The decision (0.45) stands on the discussion's evidence (0.8) and is inside the window
    # of the best (0.85) though its own relevance is not.
    decision = topic_cand("dec", 0.45, "decision")
    talk = topic_cand("obs", 0.80, "observation")
    best = cand("best", 0.85, "observation", salience=0.2, room="other/room")
    ranking = rank([best, talk, decision], ctx("planning"))
    assert by_id(ranking)["dec"].breakdown.lifted_by == "obs"
    assert "dec" not in ranking.outside_window


def test_a_narrative_set_keeps_the_window_but_gathers_across_it() -> None:
    pool = [
        story_cand("trip", 0.70, "want", "azores"),
        story_cand("guesthouse", 0.30, "preference", "azores"),
        replace(story_cand("rule", 0.30, "want", "budget"), pin_status="pinned"),
    ]
    ranking = rank(pool, ctx("general", mode="companion"))
    assert {"guesthouse", "rule"} <= ranking.outside_window
    chosen = select(ranking, n_results=2, min_score=-1.0)
    assert ids(chosen) == ["trip", "guesthouse"], "the trip's own topic, not the pinned rule"
