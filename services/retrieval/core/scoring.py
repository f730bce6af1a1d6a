"""The 6-signal scorer: a pure function from a merged candidate set to a ranked, explained list.

    score       = similarity × salience^w_sal × auth_factor × conf_factor
                  × effective_type_mult × diary_factor
    final_score = score + keyword_boost          (additive, never multiplied)

`rank` does, in order: drop candidates with similarity below −0.3; bind pin status (deprecated
drawers leave the set unless the intent is history or the request includes them, and those
included are flagged); measure dampening over the remaining set; apply the formula; sort by
final_score, ties broken by id so equal scores always come back in the same order. `select`
then applies min_score to final_score and cuts to n_results; nothing clearing min_score is an
empty result, which is a valid answer (silence).

Decisions:

- Ranker modes exist for evaluation: "full" is the formula; "hybrid" is similarity plus the
  keyword boost with every factor 1.0; "cosine" is similarity alone. The floor and pin-status
  binding apply in every mode, so these three differ only in scoring, never in eligibility.
  "keyword" and "dense" are single-retriever baselines (BEIR-style): keyword keeps only the
  FTS5 hits and orders them by their BM25 rank (score 1 / (1 + keyword_rank), the reciprocal
  of the BM25 position, since the keyword index hands back its hits in BM25 order); dense
  keeps only the vector hits, scored by cosine. Candidates the other retriever alone found
  are left out before the floor and pin binding, which then apply as in every mode.
  Raw values stay in the breakdown in every mode so rankings can be compared cell by cell.
- Authority is off unless the store has legacy_authority; then the author's tier comes from
  the injected profile (authors it does not name get the default tier), raised to W_AUTH and
  dampened over the tiers present. Same author, or different authors in one tier, is entropy
  0: the factor is exactly 1.0.
- Confidence is the drawer's own value when set, else the library's per-type default,
  clamped to [0, 1] (the stored range), raised to W_CONF and dampened over confidence levels.
- The diary penalty is never dampened: on a diary-heavy store dampening would erase it exactly
  where it must fire. The room test is case-insensitive.
- Salience is clamped and decayed at `ctx.now` (see `salience`); pinned drawers do not decay.
- Factors scale a similarity's magnitude; a candidate between −0.3 and 0 sinks further when
  amplified. That is accepted: such candidates sit under any useful min_score anyway.
- Invalid inputs (unknown mode, ranker, pin status or tier; NaN similarity) raise ValueError
  naming the value and what was expected; the servicer maps it to InvalidInput.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Literal

from services.retrieval.core.constants import (
    AUTHORITY_H_MAX,
    AUTHORITY_TIER_BOOST,
    CONFIDENCE_H_MAX,
    DEFAULT_AUTHORITY_TIER,
    DEFAULT_MIN_SCORE,
    DEFAULT_N_RESULTS_BY_MODE,
    DEPRECATED_VISIBLE_INTENTS,
    DIARY_EXEMPT_INTENTS,
    DIARY_PENALTY,
    DIARY_ROOM_MARKER,
    KEYWORD_BOOST,
    PIN_DEPRECATED,
    PIN_PINNED,
    PIN_STATUSES,
    RANKER_DENSE,
    RANKER_FULL,
    RANKER_HYBRID,
    RANKER_KEYWORD,
    RANKERS,
    SIMILARITY_FLOOR,
    W_AUTH,
    W_CONF,
)
from services.retrieval.core.dampening import DampeningProfile, SignalDampening, confidence_level
from services.retrieval.core.library import TypeLibrary, library_for
from services.retrieval.core.salience import effective_salience, salience_weight

PinStatus = Literal["active", "pinned", "deprecated"]
RankerMode = Literal["full", "hybrid", "cosine", "keyword", "dense"]

# Names of the dampened signals, as the dampening profile reports them.
SIGNAL_AUTHORITY = "authority"
SIGNAL_CONFIDENCE = "confidence"
SIGNAL_TYPE = "type"


@dataclass(frozen=True, slots=True)
class Candidate:
    """One drawer from the merged vector + keyword candidate set, with what scoring reads."""

    id: str
    similarity: float
    memory_type: str
    pin_status: PinStatus
    salience_base: float
    last_activity: datetime
    room: str = ""
    added_by: str = ""
    confidence: float | None = None
    keyword_hit: bool = False
    vector_hit: bool = True
    # 0-based position among the keyword (BM25) hits, best first; None when not a keyword hit.
    keyword_rank: int | None = None

    def __post_init__(self) -> None:
        if self.keyword_rank is not None and self.keyword_rank < 0:
            raise ValueError(f"drawer {self.id!r}: keyword_rank {self.keyword_rank} is negative")
        if self.pin_status not in PIN_STATUSES:
            raise ValueError(
                f"drawer {self.id!r}: pin_status {self.pin_status!r} is not one of {PIN_STATUSES}"
            )
        if math.isnan(self.similarity):
            raise ValueError(f"drawer {self.id!r}: similarity is NaN; re-embed the drawer")


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoringContext:
    """Everything about the store and the request that scoring depends on."""

    mode: str
    intent: str
    now: datetime
    legacy_authority: bool = False
    authority_profile: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    default_tier: str = DEFAULT_AUTHORITY_TIER
    ranker: RankerMode = RANKER_FULL
    include_deprecated: bool = False

    def __post_init__(self) -> None:
        library_for(self.mode)  # raises for an unknown mode
        if self.ranker not in RANKERS:
            raise ValueError(f"ranker {self.ranker!r} is not one of {RANKERS}")
        tiers = {self.default_tier, *self.authority_profile.values()}
        unknown = sorted(tiers - set(AUTHORITY_TIER_BOOST))
        if unknown:
            raise ValueError(
                f"authority profile names unknown tiers {unknown}: "
                f"expected some of {tuple(AUTHORITY_TIER_BOOST)}"
            )

    @property
    def library(self) -> TypeLibrary:
        """The type library of the store's deployment mode."""
        return library_for(self.mode)

    def tier_of(self, added_by: str) -> str:
        """The authority tier of an author under the injected profile."""
        return self.authority_profile.get(added_by, self.default_tier)


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """Every factor of one candidate's score, so a ranking can be explained cell by cell."""

    similarity: float
    salience: float
    salience_weight: float
    salience_factor: float
    authority_raw: float
    authority_factor: float
    confidence_raw: float
    confidence_factor: float
    type_multiplier_raw: float
    type_factor: float
    diary_factor: float
    keyword_boost: float
    keyword_hit: bool
    vector_hit: bool
    score: float
    final_score: float
    deprecated: bool


@dataclass(frozen=True, slots=True)
class ScoredCandidate:
    """A candidate with its score (the product) and final score (plus keyword boost)."""

    candidate: Candidate
    score: float
    final_score: float
    breakdown: ScoreBreakdown

    @property
    def id(self) -> str:
        """The drawer id."""
        return self.candidate.id

    @property
    def deprecated(self) -> bool:
        """Included although deprecated: callers must say so."""
        return self.breakdown.deprecated


@dataclass(frozen=True, slots=True)
class Ranking:
    """The ranked candidates of one query and how the scorer treated the set."""

    ranked: tuple[ScoredCandidate, ...]
    dampening: DampeningProfile
    mode: str
    intent: str  # the library intent actually scored with
    ranker: RankerMode
    below_floor: tuple[str, ...]  # ids dropped for similarity < SIMILARITY_FLOOR
    excluded_deprecated: tuple[str, ...]  # ids left out by pin status


def is_diary_room(room: str) -> bool:
    """Whether a room holds diary notes: its name contains "diary", in any case."""
    return DIARY_ROOM_MARKER in room.lower()


def default_n_results(mode: str) -> int:
    """n_results when a request leaves it unset (companion: 5)."""
    library_for(mode)
    return DEFAULT_N_RESULTS_BY_MODE[mode]


def default_min_score(mode: str) -> float:
    """min_score when a request leaves it unset."""
    library_for(mode)
    return DEFAULT_MIN_SCORE[mode]


def _confidence_of(candidate: Candidate, library: TypeLibrary) -> float:
    raw = candidate.confidence
    if raw is None or math.isnan(raw):
        raw = library.confidence_for(candidate.memory_type)
    return min(1.0, max(0.0, raw))


def _from_ranked_retriever(candidate: Candidate, ranker: str) -> bool:
    """Whether the single-retriever baselines keep this candidate (every other mode does)."""
    if ranker == RANKER_KEYWORD:
        return candidate.keyword_hit
    if ranker == RANKER_DENSE:
        return candidate.vector_hit
    return True


def keyword_rank_score(keyword_rank: int | None) -> float:
    """The keyword ranker's score: 1 / (1 + BM25 position); 0.0 for a non-keyword hit."""
    return 0.0 if keyword_rank is None else 1.0 / (1.0 + keyword_rank)


def _eligible(
    candidates: Iterable[Candidate], ctx: ScoringContext, intent: str
) -> tuple[list[Candidate], list[str], list[str]]:
    """Split candidates into the scored pool, the below-floor ids and the excluded ids."""
    show_deprecated = ctx.include_deprecated or intent in DEPRECATED_VISIBLE_INTENTS
    pool: list[Candidate] = []
    below_floor: list[str] = []
    excluded: list[str] = []
    for candidate in candidates:
        if not _from_ranked_retriever(candidate, ctx.ranker):
            continue
        if candidate.similarity < SIMILARITY_FLOOR:
            below_floor.append(candidate.id)
        elif candidate.pin_status == PIN_DEPRECATED and not show_deprecated:
            excluded.append(candidate.id)
        else:
            pool.append(candidate)
    return pool, below_floor, excluded


def _profile(pool: list[Candidate], ctx: ScoringContext, library: TypeLibrary) -> DampeningProfile:
    full = ctx.ranker == RANKER_FULL
    authority = SignalDampening.measure(
        SIGNAL_AUTHORITY,
        (ctx.tier_of(c.added_by) for c in pool),
        AUTHORITY_H_MAX,
        enabled=full and ctx.legacy_authority,
    )
    confidence = SignalDampening.measure(
        SIGNAL_CONFIDENCE,
        (confidence_level(_confidence_of(c, library)) for c in pool),
        CONFIDENCE_H_MAX,
        enabled=full,
    )
    # Unknown types are their own categories here: they are distinct values of the signal.
    memory_type = SignalDampening.measure(
        SIGNAL_TYPE, (c.memory_type for c in pool), library.h_max, enabled=full
    )
    return DampeningProfile(signals=(authority, confidence, memory_type), candidate_count=len(pool))


def _score_one(
    candidate: Candidate,
    ctx: ScoringContext,
    library: TypeLibrary,
    intent: str,
    profile: DampeningProfile,
) -> ScoredCandidate:
    full = ctx.ranker == RANKER_FULL
    salience = effective_salience(
        candidate.salience_base,
        candidate.last_activity,
        ctx.now,
        candidate.pin_status == PIN_PINNED,
    )
    # w_sal 0 outside the full ranker makes salience^w_sal exactly 1.0 with the same algebra.
    w_sal = salience_weight(intent) if full else 0.0
    salience_factor = salience**w_sal

    authority_raw = (
        AUTHORITY_TIER_BOOST[ctx.tier_of(candidate.added_by)] ** W_AUTH
        if ctx.legacy_authority
        else 1.0
    )
    confidence_raw = _confidence_of(candidate, library) ** W_CONF
    type_raw = library.multiplier(candidate.memory_type, intent)

    authority_factor = profile.get(SIGNAL_AUTHORITY).apply(authority_raw)
    confidence_factor = profile.get(SIGNAL_CONFIDENCE).apply(confidence_raw)
    type_factor = profile.get(SIGNAL_TYPE).apply(type_raw)
    diary_factor = (
        DIARY_PENALTY
        if full and is_diary_room(candidate.room) and intent not in DIARY_EXEMPT_INTENTS
        else 1.0
    )
    boosted = ctx.ranker in (RANKER_FULL, RANKER_HYBRID)
    keyword_boost = KEYWORD_BOOST if candidate.keyword_hit and boosted else 0.0

    if ctx.ranker == RANKER_KEYWORD:
        score = keyword_rank_score(candidate.keyword_rank)
    else:
        score = (
            candidate.similarity
            * salience_factor
            * authority_factor
            * confidence_factor
            * type_factor
            * diary_factor
        )
    final_score = score + keyword_boost
    breakdown = ScoreBreakdown(
        similarity=candidate.similarity,
        salience=salience,
        salience_weight=w_sal,
        salience_factor=salience_factor,
        authority_raw=authority_raw,
        authority_factor=authority_factor,
        confidence_raw=confidence_raw,
        confidence_factor=confidence_factor,
        type_multiplier_raw=type_raw,
        type_factor=type_factor,
        diary_factor=diary_factor,
        keyword_boost=keyword_boost,
        keyword_hit=candidate.keyword_hit,
        vector_hit=candidate.vector_hit,
        score=score,
        final_score=final_score,
        deprecated=candidate.pin_status == PIN_DEPRECATED,
    )
    return ScoredCandidate(
        candidate=candidate, score=score, final_score=final_score, breakdown=breakdown
    )


def rank(candidates: Iterable[Candidate], ctx: ScoringContext) -> Ranking:
    """Score and order the merged candidate set under `ctx`; pure, no I/O.

    Returns every eligible candidate sorted by final_score descending, ties by id ascending,
    with the dampening profile measured over exactly that set.
    """
    library = ctx.library
    intent = library.resolve_intent(ctx.intent)
    pool, below_floor, excluded = _eligible(candidates, ctx, intent)
    profile = _profile(pool, ctx, library)
    scored = [_score_one(c, ctx, library, intent, profile) for c in pool]
    scored.sort(key=lambda s: (-s.final_score, s.id))
    return Ranking(
        ranked=tuple(scored),
        dampening=profile,
        mode=ctx.mode,
        intent=intent,
        ranker=ctx.ranker,
        below_floor=tuple(below_floor),
        excluded_deprecated=tuple(excluded),
    )


def select(
    ranking: Ranking, n_results: int | None = None, min_score: float | None = None
) -> list[ScoredCandidate]:
    """The top `n_results` of `ranking` whose final_score is at least `min_score`.

    Unset values take the mode's defaults (companion: 5 results). An empty list means nothing
    cleared the floor: silence is the answer, not the loudest near-miss.
    """
    limit = default_n_results(ranking.mode) if n_results is None else n_results
    floor = default_min_score(ranking.mode) if min_score is None else min_score
    if limit < 0:
        raise ValueError(f"n_results must be 0 or more, got {limit}")
    if math.isnan(floor):
        raise ValueError("min_score is NaN: pass a number or leave it unset for the default")
    return [s for s in ranking.ranked if s.final_score >= floor][:limit]
