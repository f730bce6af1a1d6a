"""Retrieval metrics against hand-computed cases."""

from __future__ import annotations

import math

import pytest

from services.evaluation.metrics import (
    ndcg_at,
    recall_at,
    reciprocal_rank,
    right_at_1,
    silence_correct,
)


def test_right_at_1_counts_only_the_best_relevant_id_first() -> None:
    assert right_at_1(["a", "b"], ["a", "b"]) == 1.0
    assert right_at_1(["b", "a"], ["a", "b"]) == 0.0, (
        "an acceptable alternative first is not right@1"
    )
    assert right_at_1([], ["a"]) == 0.0
    assert right_at_1(["a"], []) == 0.0


def test_reciprocal_rank_of_the_first_relevant_hit() -> None:
    assert reciprocal_rank(["x", "y", "b"], ["a", "b"]) == pytest.approx(1 / 3)
    assert reciprocal_rank(["x"], ["a"]) == 0.0


def test_recall_at_k() -> None:
    assert recall_at(["a", "x", "b", "c"], ["a", "b", "c"], 2) == pytest.approx(1 / 3)
    assert recall_at(["a", "x", "b", "c"], ["a", "b", "c"], 4) == 1.0
    assert recall_at(["a"], [], 5) == 0.0


def test_ndcg_matches_a_hand_computed_case() -> None:
    # ranked: b (gain 1), a (gain 2), x (0); ideal: a (2), b (1)
    # DCG = 1/log2(2) + 2/log2(3) = 1 + 1.26186 = 2.26186
    # IDCG = 2/log2(2) + 1/log2(3) = 2 + 0.63093 = 2.63093
    expected = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert ndcg_at(["b", "a", "x"], {"a": 2.0, "b": 1.0}, 3) == pytest.approx(expected)
    assert ndcg_at(["a", "b"], {"a": 2.0, "b": 1.0}, 2) == pytest.approx(1.0)
    assert ndcg_at(["x"], {}, 10) == 0.0


def test_silence_is_right_only_when_nothing_came_back() -> None:
    assert silence_correct([]) == 1.0
    assert silence_correct(["a"]) == 0.0
