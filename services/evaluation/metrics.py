"""Retrieval metrics over ranked id lists. Pure; checked against hand-computed cases."""

from __future__ import annotations

import math
from collections.abc import Sequence


def right_at_1(ranked: Sequence[str], relevant: Sequence[str]) -> float:
    """1.0 when the first result is the best relevant id (the first of `relevant`)."""
    return 1.0 if relevant and ranked and ranked[0] == relevant[0] else 0.0


def reciprocal_rank(ranked: Sequence[str], relevant: Sequence[str]) -> float:
    """1 / rank of the first relevant id (any of them); 0.0 when none is returned."""
    wanted = set(relevant)
    for position, item in enumerate(ranked, start=1):
        if item in wanted:
            return 1.0 / position
    return 0.0


def recall_at(ranked: Sequence[str], relevant: Sequence[str], k: int) -> float:
    """Share of the relevant ids found in the first k results."""
    wanted = set(relevant)
    if not wanted:
        return 0.0
    return len(wanted.intersection(ranked[:k])) / len(wanted)


def ndcg_at(ranked: Sequence[str], gains: dict[str, float], k: int) -> float:
    """nDCG@k with graded gains (log2 discount, gain as given)."""
    dcg = sum(
        gains.get(item, 0.0) / math.log2(position + 1)
        for position, item in enumerate(ranked[:k], start=1)
    )
    ideal = sorted(gains.values(), reverse=True)[:k]
    idcg = sum(gain / math.log2(position + 1) for position, gain in enumerate(ideal, start=1))
    return dcg / idcg if idcg > 0 else 0.0


def silence_correct(ranked: Sequence[str]) -> float:
    """1.0 when nothing was returned (for queries whose right answer is silence)."""
    return 1.0 if not ranked else 0.0
