"""Relevance from two retrievers: the dense cosine plus calibrated keyword (BM25) evidence.

    keyword_evidence = bm25 / max(best bm25 among the candidates, 0.2 × reference)   in [0, 1]
    relevance        = cosine + 0.4 × keyword_evidence                  (ranks)
    keyword_coverage = min(1, bm25 / reference)                         in [0, 1]
    standing         = cosine + 0.4 × keyword_coverage                  (decides silence)

Pure and shared: the drawer pool's scorer (retrieval tier) and raw-chunk search (corpus tier)
fuse the same way, so "relevance" means one thing across the product.

Decisions (docs/decisions/0011-relevance-fusion.md has the measurements):

- Score fusion, not rank fusion. Reciprocal-rank fusion throws away how *much* better a hit
  is; a convex combination of normalised scores keeps it. On SciFact (nDCG@10) and LoCoMo
  (turn and session recall@10) the combination beats RRF at every weight between 0.3 and 0.7;
  0.4 sits in the flat top of both curves.
- The relevance stays on the cosine's scale (cosine plus a bounded bonus), so the rest of the
  product — the −0.3 similarity floor, the multiplicative signals, the relevance floor that
  decides silence — keeps reading it as a similarity.
- BM25 is normalised by the best keyword score among the candidates, so the strongest keyword
  match of a query counts fully whatever the query's length. Alone that would also hand full
  credit to the best of a set of *weak* matches (an off-topic query that shares one common
  word with a drawer), which would make silence impossible to calibrate. The denominator is
  therefore at least a fifth of the query's reference score (the BM25 a row holding every
  searched term once would score, Σ IDF): a match worth less than that stays partial. The
  floor costs nothing measurable on either benchmark.
- Silence reads the *absolute* form (`keyword_coverage`: BM25 over the reference, capped):
  ranking wants the strongest keyword match of a query to count whatever its absolute size,
  deciding whether anything answers wants the opposite. On Engram's development sets the
  absolute form separates answerable from unanswerable queries far better than either the
  cosine or the ranking relevance (docs/decisions/0006-default-min-score.md).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

# The seed's keyword boost: a keyword hit gains this after scoring, additive and small (enough
# to break ties, never to dominate). Here because raw search adds it too.
KEYWORD_BOOST: Final = 0.04

# Weight of keyword evidence added to the cosine (a fully matching row gains 0.4).
KEYWORD_EVIDENCE_WEIGHT: Final = 0.4

# The keyword normaliser never drops below this share of the query's reference score.
KEYWORD_REFERENCE_FRACTION: Final = 0.2


def keyword_scale(scores: Iterable[float], reference: float) -> float:
    """The denominator keyword scores of one query are divided by (0.0: no keyword hits)."""
    best = max((s for s in scores if s > 0.0 and math.isfinite(s)), default=0.0)
    if best <= 0.0:
        return 0.0
    return max(best, KEYWORD_REFERENCE_FRACTION * max(reference, 0.0))


def keyword_evidence(score: float | None, scale: float) -> float:
    """One hit's keyword evidence in [0, 1]; 0.0 for a candidate the keyword index missed."""
    if score is None or scale <= 0.0 or not math.isfinite(score) or score <= 0.0:
        return 0.0
    return min(1.0, score / scale)


def keyword_coverage(score: float | None, reference: float) -> float:
    """How much of the query a keyword hit covers, on the absolute scale: BM25 over the
    query's reference score, capped at 1 (0.0 for a miss or an unknown reference).

    Unlike `keyword_evidence` it never promotes the best of weak matches, and a query term
    that no row holds (an unknown name, a component nobody wrote about) still counts in the
    reference: which is what tells a near-miss from an answer when deciding on silence.
    """
    return keyword_evidence(score, reference)


def fused_relevance(cosine: float, evidence: float) -> float:
    """Cosine plus the weighted keyword evidence."""
    return cosine + KEYWORD_EVIDENCE_WEIGHT * evidence


@dataclass(frozen=True)
class FusedHit:
    """One candidate of a fused search (raw chunks, source chunks): what ranked it and why."""

    id: str
    score: float  # fused relevance plus the keyword boost (the cosine alone for a vector-only hit)
    similarity: float
    keyword_hit: bool


def fuse_hits(
    similarities: Mapping[str, float], bm25: Mapping[str, float], reference: float, limit: int
) -> list[FusedHit]:
    """Rank the union of both retrievers' candidates by fused relevance, best first, ties by id.

    `similarities` must hold every candidate's cosine (keyword-only hits included: the caller
    reads their vectors); `bm25` the keyword scores of the query's keyword hits.
    """
    scale = keyword_scale(bm25.values(), reference)

    def fused(candidate: str, similarity: float) -> FusedHit:
        score = bm25.get(candidate)
        if score is None:
            return FusedHit(candidate, similarity, similarity, False)
        relevance = fused_relevance(similarity, keyword_evidence(score, scale))
        return FusedHit(candidate, relevance + KEYWORD_BOOST, similarity, True)

    hits = [fused(candidate, similarity) for candidate, similarity in similarities.items()]
    hits.sort(key=lambda hit: (-hit.score, hit.id))
    return hits[: max(0, limit)]
