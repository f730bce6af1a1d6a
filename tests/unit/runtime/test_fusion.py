"""Relevance fusion: keyword evidence normalised per query, with the reference floor, and
the absolute coverage silence reads."""

from __future__ import annotations

import math

import pytest

from services.runtime.fusion import (
    KEYWORD_BOOST,
    fuse_hits,
    fused_relevance,
    keyword_coverage,
    keyword_evidence,
    keyword_scale,
)


def test_the_scale_is_the_best_score_or_a_fifth_of_the_reference() -> None:
    assert keyword_scale([3.0, 8.0], reference=10.0) == 8.0
    assert keyword_scale([1.0], reference=20.0) == pytest.approx(4.0)
    assert keyword_scale([], reference=10.0) == 0.0
    assert keyword_scale([math.nan, -1.0], reference=10.0) == 0.0


def test_evidence_is_in_zero_one_and_zero_for_misses() -> None:
    assert keyword_evidence(4.0, 8.0) == 0.5
    assert keyword_evidence(9.0, 8.0) == 1.0
    assert keyword_evidence(None, 8.0) == 0.0
    assert keyword_evidence(4.0, 0.0) == 0.0
    assert keyword_evidence(math.inf, 8.0) == 0.0


def test_coverage_is_absolute() -> None:
    assert keyword_coverage(5.0, 10.0) == 0.5
    assert keyword_coverage(15.0, 10.0) == 1.0
    assert keyword_coverage(5.0, 0.0) == 0.0
    assert keyword_coverage(None, 10.0) == 0.0


def test_relevance_is_cosine_plus_weighted_evidence() -> None:
    assert fused_relevance(0.5, 1.0) == pytest.approx(0.9)
    assert fused_relevance(0.5, 0.0) == 0.5


def test_fused_hits_rank_the_union_and_say_which_retriever_found_them() -> None:
    similarities = {"dense-only": 0.62, "both": 0.50, "keyword-only": 0.20}
    bm25 = {"both": 8.0, "keyword-only": 4.0}
    hits = fuse_hits(similarities, bm25, reference=10.0, limit=3)
    assert [h.id for h in hits] == ["both", "dense-only", "keyword-only"]
    both, dense_only, keyword_only = hits
    assert both.score == pytest.approx(0.50 + 0.4 * 1.0 + KEYWORD_BOOST)
    assert keyword_only.score == pytest.approx(0.20 + 0.4 * 0.5 + KEYWORD_BOOST)
    assert (dense_only.score, dense_only.similarity, dense_only.keyword_hit) == (0.62, 0.62, False)
    assert both.keyword_hit and keyword_only.keyword_hit


def test_fused_hits_break_ties_by_id_and_cut_to_the_limit() -> None:
    hits = fuse_hits({"b": 0.4, "a": 0.4, "c": 0.1}, {}, reference=0.0, limit=2)
    assert [h.id for h in hits] == ["a", "b"]
    assert fuse_hits({"a": 0.4}, {}, reference=0.0, limit=0) == []
