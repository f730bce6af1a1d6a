"""Relevance fusion: keyword evidence normalised per query, with the reference floor, and
the absolute coverage silence reads."""

from __future__ import annotations

import math

import pytest

from services.runtime.fusion import (
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
