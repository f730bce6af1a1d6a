"""The scorer: a pure function from a merged candidate set to a ranked, explained list.

    relevance   = cosine + 0.4 × keyword_evidence                  (services.runtime.fusion)
    evidence    = relevance × salience^w_sal
    provenance  = auth_factor × conf_factor × effective_type_mult × diary_factor × pin_factor
    shared      = max(evidence, evidence of a less authoritative topical neighbour)
    score       = shared × provenance
    final_score = score + keyword_boost                             (additive, never multiplied)

With `shared = evidence` this is the seed's 6-signal formula, with a fused relevance as its
similarity and pin status as a signal. `rank` does, in order: drop candidates with cosine
below −0.3; bind pin status (deprecated drawers leave the set unless the intent is history or
the request includes them, and those included are flagged); measure dampening over the
remaining set; compute each candidate's parts; let topical authority share evidence inside
neighbourhoods; sort by final_score, ties broken by id. `select` then applies the floor and
cuts to n_results; nothing clearing the floor is an empty result, which is a valid answer.

Decisions:

- Ranker modes exist for evaluation: "full" is everything above; "hybrid" is the fused
  relevance plus the keyword boost with every other factor 1.0; "cosine" is the cosine alone.
  "keyword" and "dense" are single-retriever baselines (BEIR-style): keyword keeps only the
  FTS5 hits and orders them by their BM25 rank (score 1 / (1 + keyword_rank)); dense keeps
  only the vector hits, scored by cosine. The floor and pin-status binding apply in every mode.
  Raw values stay in the breakdown in every mode so rankings can be compared cell by cell.
- Topical authority (docs/decisions/0012-topical-authority.md): evidence flows inside a
  neighbourhood only from a candidate of lower provenance to one of strictly higher
  provenance, and only within the override window (own relevance at least 1/2 of the
  neighbour's; 1/4 where the candidate binds over the neighbour: a pin over an unpinned
  drawer, a ruling type — directive, architecture, decision — over discussion that is
  neither). So the decision on a topic can stand on the evidence of the discussion that
  echoes the query better, and provenance decides between them; when nothing distinguishes
  the neighbours (uniform metadata: every provenance equal) nothing flows and the ranking is
  the seed's exactly.
- The relevance override window: metadata reorders the candidates that answer the query, but
  a candidate whose relevance (its own, or the neighbour's it stands on) is under half the
  best candidate's is ranked after every one inside the window (`Ranking.outside_window`).
  With a uniform metadata multiplier nothing is set apart.
- Pin status is a signal: pinned ×1.1, undampened (a pin is a deliberate act); a deprecated
  drawer shown outside history scores ×0.2 so it is seen but never wins.
- Authority is off unless the store has legacy_authority; then the author's tier comes from
  the injected profile (authors it does not name get the default tier), raised to W_AUTH and
  dampened over the tiers present. Same author, or different authors in one tier, is entropy
  0: the factor is exactly 1.0.
- Confidence is the drawer's own value when set, else the library's per-type default,
  clamped to [0, 1] (the stored range), raised to W_CONF and dampened over confidence levels.
- The diary penalty is never dampened: on a diary-heavy store dampening would erase it exactly
  where it must fire. The room test is case-insensitive.
- A soft intent (`ScoringContext.intent_weights`, from an unsure classifier) mixes the matrix
  columns, the salience exponents and the diary exemption by its weights; pin binding follows
  the most likely intent.
- Salience is clamped and decayed at `ctx.now` (see `salience`); pinned drawers do not decay.
- Factors scale a relevance's magnitude; a candidate between −0.3 and 0 sinks further when
  amplified. That is accepted: such candidates sit under any useful floor anyway.
- Invalid inputs (unknown mode, ranker, pin status or tier; NaN similarity) raise ValueError
  naming the value and what was expected; the servicer maps it to InvalidInput.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from types import MappingProxyType
from typing import Literal

import numpy as np
import numpy.typing as npt

from services.retrieval.core.constants import (
    AUTHORITY_H_MAX,
    AUTHORITY_TIER_BOOST,
    BINDING_OVERRIDE_WINDOW,
    CONFIDENCE_H_MAX,
    DEFAULT_AUTHORITY_TIER,
    DEFAULT_MIN_RELEVANCE,
    DEFAULT_N_RESULTS_BY_MODE,
    DEPRECATED_FACTOR,
    DIARY_PENALTY,
    KEYWORD_BOOST,
    NARRATIVE_GATHER_SHARE,
    NARRATIVE_REPEAT_FACTOR,
    PINNED_FACTOR,
    RANKER_COSINE,
    RANKER_DENSE,
    RANKER_FULL,
    RANKER_HYBRID,
    RANKER_KEYWORD,
    RANKERS,
    RELEVANCE_OVERRIDE_WINDOW,
    RESULT_RELEVANCE_MARGIN,
    SIMILARITY_FLOOR,
    TOPICAL_OVERRIDE_WINDOW,
    W_AUTH,
    W_CONF,
)
from services.retrieval.core.dampening import DampeningProfile, SignalDampening, confidence_level
from services.retrieval.core.salience import effective_salience, salience_weight
from services.retrieval.core.topical import TopicalMember, neighbourhoods, topic_mates
from services.runtime.fusion import (
    fused_relevance,
    keyword_coverage,
    keyword_evidence,
    keyword_scale,
)
from services.vocabulary import PIN_DEPRECATED, PIN_PINNED, PIN_STATUSES, TypeLibrary, library_for
from services.vocabulary.libraries import (
    DEPRECATED_VISIBLE_INTENTS,
    DIARY_EXEMPT_INTENTS,
    DIARY_ROOM_MARKER,
)

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
    # The hit's BM25 score (higher is better); None when not a keyword hit.
    keyword_score: float | None = None
    topic: str = ""
    wing: str = ""

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
    # The query's absolute BM25 scale (FtsIndex.reference_score); 0 when unknown.
    keyword_reference: float = 0.0
    # A soft intent: weights over the library's intents (they are normalised); None = `intent`.
    intent_weights: Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        library_for(self.mode)  # raises for an unknown mode
        if self.intent_weights is not None:
            weights = self.intent_weights
            if any(not math.isfinite(w) or w < 0.0 for w in weights.values()):
                raise ValueError(f"intent weights must be finite and non-negative: {weights}")
            if sum(weights.values()) <= 0.0:
                raise ValueError("intent weights must not all be zero")
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

    def intent_mixture(self, intent: str) -> dict[str, float]:
        """The (normalised) intent weights scoring uses: the soft intent, or `intent` alone."""
        library = self.library
        if self.intent_weights is None:
            return {intent: 1.0}
        weights: dict[str, float] = {}
        for name, weight in self.intent_weights.items():
            resolved = library.resolve_intent(name)
            weights[resolved] = weights.get(resolved, 0.0) + weight
        total = sum(weights.values())
        return {name: weight / total for name, weight in weights.items() if weight > 0.0}

    def tier_of(self, added_by: str) -> str:
        """The authority tier of an author under the injected profile."""
        return self.authority_profile.get(added_by, self.default_tier)


@dataclass(frozen=True, slots=True)
class ScoreBreakdown:
    """Every factor of one candidate's score, so a ranking can be explained cell by cell."""

    similarity: float
    keyword_evidence: float
    relevance: float
    keyword_coverage: float
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
    pin_factor: float
    provenance: float
    evidence: float
    shared_evidence: float
    lifted_by: str  # the neighbour whose evidence this drawer stands on; "" if its own
    # The relevance the result answers on: its own, or its lifting neighbour's if higher.
    standing_relevance: float
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
    intent_weights: tuple[tuple[str, float], ...] = ()  # the mixture scored with, if soft
    # Each candidate's topic mates (same topic tag; full ranker only): what a
    # narrative set gathers (core.topical.topic_mates).
    topic_mates: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # Candidates ranked after every candidate inside the relevance override window (full
    # ranker only): metadata did not carry them over the query's best answers.
    outside_window: frozenset[str] = frozenset()

    @property
    def lifted(self) -> int:
        """How many candidates stand on a neighbour's evidence (topical authority fired)."""
        return sum(1 for s in self.ranked if s.breakdown.lifted_by)


def is_diary_room(room: str) -> bool:
    """Whether a room holds diary notes: its name contains "diary", in any case."""
    return DIARY_ROOM_MARKER in room.lower()


def default_n_results(mode: str) -> int:
    """n_results when a request leaves it unset (companion: 5)."""
    library_for(mode)
    return DEFAULT_N_RESULTS_BY_MODE[mode]


def default_min_relevance(mode: str) -> float:
    """The relevance floor when neither the request nor the store sets a min_score."""
    library_for(mode)
    return DEFAULT_MIN_RELEVANCE[mode]


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


def _mixed(weights: Mapping[str, float], value: Callable[[str], float]) -> float:
    return sum(weight * value(intent) for intent, weight in weights.items())


def _relevance(candidate: Candidate, ctx: ScoringContext, scale: float) -> tuple[float, float]:
    """(keyword evidence, relevance) of one candidate under the ranker."""
    evidence = keyword_evidence(candidate.keyword_score, scale)
    if ctx.ranker in (RANKER_COSINE, RANKER_DENSE):
        return evidence, candidate.similarity
    return evidence, fused_relevance(candidate.similarity, evidence)


def _pin_factor(candidate: Candidate, intent: str) -> float:
    if candidate.pin_status == PIN_PINNED:
        return PINNED_FACTOR
    if candidate.pin_status == PIN_DEPRECATED and intent not in DEPRECATED_VISIBLE_INTENTS:
        return DEPRECATED_FACTOR
    return 1.0


@dataclass
class _QueryFactors:
    """What every candidate of one query shares, computed once per query: the salience
    exponent, the diary factor and (per memory type, as met) the raw type multiplier, each
    mixed over the intent weights."""

    library: TypeLibrary
    weights: Mapping[str, float]
    full: bool
    w_sal: float = field(init=False)
    diary: float = field(init=False)
    _type_raw: dict[str, float] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self.w_sal = _mixed(self.weights, salience_weight) if self.full else 0.0
        self.diary = _mixed(
            self.weights, lambda i: 1.0 if i in DIARY_EXEMPT_INTENTS else DIARY_PENALTY
        )

    def type_raw(self, memory_type: str) -> float:
        raw = self._type_raw.get(memory_type)
        if raw is None:
            raw = _mixed(self.weights, lambda i: self.library.multiplier(memory_type, i))
            self._type_raw[memory_type] = raw
        return raw


def _score_one(
    candidate: Candidate,
    ctx: ScoringContext,
    factors: _QueryFactors,
    intent: str,
    profile: DampeningProfile,
    scale: float,
) -> ScoredCandidate:
    """One candidate's parts and score on its own evidence (topical sharing comes after)."""
    full = factors.full
    library = factors.library
    salience = effective_salience(
        candidate.salience_base,
        candidate.last_activity,
        ctx.now,
        candidate.pin_status == PIN_PINNED,
    )
    # w_sal 0 outside the full ranker makes salience^w_sal exactly 1.0 with the same algebra.
    w_sal = factors.w_sal
    salience_factor = salience**w_sal

    authority_raw = (
        AUTHORITY_TIER_BOOST[ctx.tier_of(candidate.added_by)] ** W_AUTH
        if ctx.legacy_authority
        else 1.0
    )
    confidence_raw = _confidence_of(candidate, library) ** W_CONF
    type_raw = factors.type_raw(candidate.memory_type)

    authority_factor = profile.get(SIGNAL_AUTHORITY).apply(authority_raw)
    confidence_factor = profile.get(SIGNAL_CONFIDENCE).apply(confidence_raw)
    type_factor = profile.get(SIGNAL_TYPE).apply(type_raw)
    diary_factor = 1.0
    if full and is_diary_room(candidate.room):
        diary_factor = factors.diary
    pin_factor = _pin_factor(candidate, intent) if full else 1.0
    boosted = ctx.ranker in (RANKER_FULL, RANKER_HYBRID)
    keyword_boost = KEYWORD_BOOST if candidate.keyword_hit and boosted else 0.0

    kw_evidence, relevance = _relevance(candidate, ctx, scale)
    coverage = keyword_coverage(candidate.keyword_score, ctx.keyword_reference)
    standing = (
        relevance
        if ctx.ranker in (RANKER_COSINE, RANKER_DENSE)
        else fused_relevance(candidate.similarity, coverage)
    )
    provenance = authority_factor * confidence_factor * type_factor * diary_factor * pin_factor
    if ctx.ranker == RANKER_KEYWORD:
        evidence, provenance = keyword_rank_score(candidate.keyword_rank), 1.0
    else:
        evidence = relevance * salience_factor
    score = evidence * provenance
    breakdown = ScoreBreakdown(
        similarity=candidate.similarity,
        keyword_evidence=kw_evidence,
        relevance=relevance,
        keyword_coverage=coverage,
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
        pin_factor=pin_factor,
        provenance=provenance,
        evidence=evidence,
        shared_evidence=evidence,
        lifted_by="",
        standing_relevance=standing,
        keyword_boost=keyword_boost,
        keyword_hit=candidate.keyword_hit,
        vector_hit=candidate.vector_hit,
        score=score,
        final_score=score + keyword_boost,
        deprecated=candidate.pin_status == PIN_DEPRECATED,
    )
    return ScoredCandidate(
        candidate=candidate, score=score, final_score=score + keyword_boost, breakdown=breakdown
    )


def topical_authority(breakdown: ScoreBreakdown, library: TypeLibrary) -> float:
    """How authoritative a candidate is among its topical neighbours: its whole provenance
    where types rank claims (default library), else only what pins and authors say."""
    if library.types_carry_authority:
        return breakdown.provenance
    return breakdown.pin_factor * breakdown.authority_factor


def _share_evidence(
    scored: list[ScoredCandidate], links: Mapping[str, frozenset[str]], library: TypeLibrary
) -> list[ScoredCandidate]:
    """Topical authority: each candidate stands on the best evidence of a neighbour of
    strictly lower authority, if its own relevance is inside the override window (the wider
    binding window when it binds over that neighbour: `_binds_over`)."""
    # Plain lists read once: the loop below visits every neighbour pair.
    index = {s.id: k for k, s in enumerate(scored)}
    relevance = [s.breakdown.relevance for s in scored]
    evidence = [s.breakdown.evidence for s in scored]
    standing = [s.breakdown.standing_relevance for s in scored]
    authority = [topical_authority(s.breakdown, library) for s in scored]
    pinned = [s.candidate.pin_status == PIN_PINNED for s in scored]
    ruling = [s.candidate.memory_type in library.ruling_types for s in scored]
    shared: list[ScoredCandidate] = []
    for k, item in enumerate(scored):
        best, source, standing_k = evidence[k], "", standing[k]
        reach = relevance[k] * TOPICAL_OVERRIDE_WINDOW
        binding_reach = relevance[k] * BINDING_OVERRIDE_WINDOW
        for neighbour_id in sorted(links.get(item.id, ())):
            j = index.get(neighbour_id)
            if j is None:
                continue
            outranked = authority[j] < authority[k]
            binds = _binds_over(pinned[k], ruling[k], pinned[j], ruling[j])
            window = binding_reach if binds else reach
            if outranked and window >= relevance[j] and evidence[j] > best:
                best, source = evidence[j], neighbour_id
                standing_k = max(standing[k], standing[j])
        if not source:
            shared.append(item)
            continue
        mine = item.breakdown
        score = best * mine.provenance
        final = score + mine.keyword_boost
        breakdown = replace(
            mine,
            shared_evidence=best,
            lifted_by=source,
            standing_relevance=standing_k,
            score=score,
            final_score=final,
        )
        shared.append(replace(item, score=score, final_score=final, breakdown=breakdown))
    return shared


def rank(
    candidates: Iterable[Candidate],
    ctx: ScoringContext,
    vectors: Mapping[str, npt.NDArray[np.floating]] | None = None,
) -> Ranking:
    """Score and order the merged candidate set under `ctx`; pure, no I/O.

    `vectors` (the candidates' own embeddings, optional) let topical neighbourhoods form
    between drawers without a shared topic tag. Returns every eligible candidate sorted by
    final_score descending; an exact tie (two drawers standing on one neighbour's evidence
    with one provenance) goes to the larger own evidence, then to the smaller id. The
    dampening profile is measured over exactly that set.
    """
    library = ctx.library
    intent = library.resolve_intent(ctx.intent)
    weights = ctx.intent_mixture(intent)
    pool, below_floor, excluded = _eligible(candidates, ctx, intent)
    profile = _profile(pool, ctx, library)
    scale = keyword_scale(
        (c.keyword_score for c in pool if c.keyword_score is not None), ctx.keyword_reference
    )
    factors = _QueryFactors(library, weights, ctx.ranker == RANKER_FULL)
    scored = [_score_one(c, ctx, factors, intent, profile, scale) for c in pool]
    mates: Mapping[str, frozenset[str]] = {}
    if ctx.ranker == RANKER_FULL:
        members = [TopicalMember(c.id, c.topic, c.wing) for c in pool]
        mates = topic_mates(members)
        scored = _share_evidence(scored, neighbourhoods(members, vectors, mates=mates), library)
    behind = _outside_relevance_window(scored) if ctx.ranker == RANKER_FULL else frozenset()
    scored.sort(key=lambda s: (s.id in behind, -s.final_score, -s.breakdown.evidence, s.id))
    return Ranking(
        ranked=tuple(scored),
        dampening=profile,
        mode=ctx.mode,
        intent=intent,
        ranker=ctx.ranker,
        below_floor=tuple(below_floor),
        excluded_deprecated=tuple(excluded),
        intent_weights=tuple(sorted(weights.items(), key=lambda kv: -kv[1]))
        if ctx.intent_weights is not None
        else (),
        topic_mates=mates,
        outside_window=behind,
    )


def _binds_over(pinned: bool, ruling: bool, other_pinned: bool, other_ruling: bool) -> bool:
    """Whether a drawer binds over a topical neighbour (BINDING_OVERRIDE_WINDOW): a pin over
    an unpinned one, a ruling type over discussion that is neither ruling nor pinned."""
    if other_pinned:
        return False
    return pinned or (ruling and not other_ruling)


def _outside_relevance_window(scored: Sequence[ScoredCandidate]) -> frozenset[str]:
    """The candidates metadata may not lift over the query's best answers: those whose
    relevance (their own, or the neighbour's they stand on) is under 1/window of the best.
    Empty when every candidate carries the same metadata multiplier (salience × provenance):
    then the order is relevance's already, and nothing moves (the no-op guarantee)."""
    if not scored:
        return frozenset()
    multipliers = [s.breakdown.salience_factor * s.breakdown.provenance for s in scored]
    if max(multipliers) - min(multipliers) <= 1e-12 * max(1.0, abs(max(multipliers))):
        return frozenset()
    own = {s.id: s.breakdown.relevance for s in scored}
    answering = {s.id: max(own[s.id], own.get(s.breakdown.lifted_by, own[s.id])) for s in scored}
    reach = max(answering.values()) / RELEVANCE_OVERRIDE_WINDOW
    return frozenset(k for k, value in answering.items() if value < reach)


def select(
    ranking: Ranking, n_results: int | None = None, min_score: float | None = None
) -> list[ScoredCandidate]:
    """The top `n_results` of `ranking` that clear the floor.

    `min_score` set: a floor on final_score. Unset: silence unless the best standing
    relevance reaches the mode's floor (`DEFAULT_MIN_RELEVANCE`); then every result standing
    within `RESULT_RELEVANCE_MARGIN` of it, or, where the answer is a narrative set (companion,
    full ranker), the set filled from the whole ranking. Unset n_results takes the
    mode's default (companion: 5). An empty list means nothing cleared the floor: silence is
    the answer, not the loudest near-miss.
    """
    limit = default_n_results(ranking.mode) if n_results is None else n_results
    if limit < 0:
        raise ValueError(f"n_results must be 0 or more, got {limit}")
    narrative = library_for(ranking.mode).narrative and ranking.ranker == RANKER_FULL
    if min_score is None:
        floor = default_min_relevance(ranking.mode)
        best = max((s.breakdown.standing_relevance for s in ranking.ranked), default=-math.inf)
        if best < floor:
            return []
        if narrative:
            kept = list(ranking.ranked)
        else:
            lowest = floor - RESULT_RELEVANCE_MARGIN
            kept = [s for s in ranking.ranked if s.breakdown.standing_relevance >= lowest]
    elif math.isnan(min_score):
        raise ValueError("min_score is NaN: pass a number or leave it unset for the default")
    else:
        kept = [s for s in ranking.ranked if s.final_score >= min_score]
    if narrative:
        return narrative_set(kept, limit, ranking.topic_mates, ranking.outside_window)
    return kept[:limit]


def narrative_set(
    ranked: list[ScoredCandidate],
    limit: int,
    topic_mates: Mapping[str, frozenset[str]] | None = None,
    outside_window: frozenset[str] = frozenset(),
) -> list[ScoredCandidate]:
    """A set spanning the speech acts, filled greedily; the first pick is the best.

    Each drawer of a type already chosen scales a candidate's score by
    NARRATIVE_REPEAT_FACTOR. A candidate that shares the topic tag (`topic_mates`) with
    a chosen drawer of another speech act is gathered with it: it stands on at least
    NARRATIVE_GATHER_SHARE of that drawer's score, so the set tells the chosen memory's
    story (the date, the want and the worry of one event) before it reaches for other
    topics. Mates of one speech act are not gathered: with uniform types nothing moves.
    Candidates `outside_window` (`Ranking.outside_window`) come after the rest unless a
    chosen drawer gathers them.
    """
    links = topic_mates or {}
    chosen: list[ScoredCandidate] = []
    remaining = list(ranked)
    counts: dict[str, int] = {}
    gathered: dict[str, float] = {}  # candidate id -> the score it stands on
    while remaining and len(chosen) < limit:

        def adjusted(item: ScoredCandidate) -> tuple[bool, float]:
            score = max(item.final_score, gathered.get(item.id, -math.inf))
            shrink = NARRATIVE_REPEAT_FACTOR ** counts.get(item.candidate.memory_type, 0)
            ahead = item.id not in outside_window or item.id in gathered
            return ahead, score - (1.0 - shrink) * abs(score)

        best = max(remaining, key=adjusted)  # max keeps the first of equals: ranked order
        remaining.remove(best)
        chosen.append(best)
        counts[best.candidate.memory_type] = counts.get(best.candidate.memory_type, 0) + 1
        lent = NARRATIVE_GATHER_SHARE * max(best.final_score, gathered.get(best.id, -math.inf))
        for item in remaining:
            if (
                item.id in links.get(best.id, ())
                and item.candidate.memory_type != best.candidate.memory_type
                and lent > gathered.get(item.id, -math.inf)
            ):
                gathered[item.id] = lent
    return chosen
