"""The search pipeline: embed the query, gather hybrid candidates, score them, cut.

1. Embed the query (the embedder client keeps an LRU cache of recent query vectors).
2. Candidates: Qdrant top-k and FTS5 top-k under the same filters, merged. The FTS5 query
   needs no vector, so it runs while step 1 does; the pin exclusions the intent decides are
   applied to its hits after. Keyword-only hits get their true cosine from their stored
   vectors, keyword hits their BM25 position (the keyword ranker's order; the keyword and
   dense rankers keep one retriever's hits only).
3-6. The pure scorer (`services.retrieval.core`) drops similarity < -0.3, applies pin status,
   the 6 signals with dampening and the keyword boost; `select` applies min_score and the cut.
7. Without an intent, the intent is inferred by the library's trained classifier (a mixture
   when it is unsure); an explicit intent always wins.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt
from engram.v1 import common_pb2

from services.embedder.client import EmbedderClient
from services.retrieval.core import (
    Candidate,
    IntentGuess,
    Ranking,
    ScoredCandidate,
    ScoringContext,
    default_min_relevance,
    load_intent_model,
    rank,
    select,
)
from services.retrieval.core.constants import (
    RANKER_FULL,
    RANKER_KEYWORD,
    RESULT_RELEVANCE_MARGIN,
)
from services.retrieval.core.links import MAX_DEPTH
from services.retrieval.core.supersession import (
    Supersession,
    in_chain_order,
    inherit,
    supersession_of,
)
from services.retrieval.pool import DrawerPool
from services.retrieval.pool.mirror import MetaFilter
from services.retrieval.pool.pool import KeywordPrefetch
from services.runtime.embedding import reembedding_notice
from services.runtime.errors import InvalidInput
from services.runtime.fts import KeywordHits
from services.runtime.queries import check_query_text
from services.runtime.tracing import stage
from services.vocabulary import DEFAULT_MODE, TypeLibrary, library_for
from services.vocabulary.libraries import DEPRECATED_VISIBLE_INTENTS


@dataclass(frozen=True)
class StoreView:
    """What scoring needs to know about the store (from the request's StoreContext)."""

    name: str
    mode: str  # default | companion
    legacy_authority: bool = False
    authority_profile: Mapping[str, str] = field(default_factory=dict)
    default_tier: str = "worker"
    n_results: int | None = None
    min_score: float | None = None


@dataclass(frozen=True)
class SearchSpec:
    """One search, in domain terms."""

    query: str
    intent: str = ""
    n_results: int | None = None
    min_score: float | None = None
    wing: str = ""
    room: str = ""
    memory_types: frozenset[str] = frozenset()
    depth: int = 0
    include_deprecated: bool = False
    as_of: datetime | None = None
    ranker: str = "full"


@dataclass(frozen=True)
class CandidateSet:
    """The merged candidates of one query, with what scoring reads beside them."""

    candidates: list[Candidate]
    keyword_reference: float
    vectors: Mapping[str, npt.NDArray[np.float32]] | None


@dataclass(frozen=True)
class SearchHitResult:
    scored: ScoredCandidate
    drawer: common_pb2.Drawer


@dataclass(frozen=True)
class Timings:
    embed_ms: float
    candidates_ms: float
    scoring_ms: float
    total_ms: float


@dataclass(frozen=True)
class SearchOutcome:
    intent: str
    intent_inferred: bool
    intent_confidence: float
    intent_reasons: tuple[str, ...]
    ranking: Ranking
    hits: list[SearchHitResult]
    candidates_considered: int
    timings: Timings
    # Supersedes links holding at the search's time, among the candidates (results say so).
    supersession: Supersession = field(default_factory=Supersession)
    # Said to the caller when the answer is not the usual one (a store being re-embedded).
    notice: str = ""


@dataclass(frozen=True)
class SearchLimits:
    max_query_chars: int = 8192
    default_depth: int = 50
    max_depth: int = 500
    max_n_results: int = 200


def bind_supersession(
    pool: DrawerPool,
    gathered: CandidateSet,
    vector: npt.NDArray[np.float32],
    flt: MetaFilter,
    *,
    at: datetime,
    withhold: bool,
    mode: str = DEFAULT_MODE,
) -> tuple[CandidateSet, Supersession]:
    """Apply explicit supersession to the candidates. Withholding (every intent but history):
    a drawer superseded by a link holding at `at` leaves the candidates and its latest
    successor joins them (scored by its own cosine) when the filter admits it. Otherwise the
    candidates stay; either way the answer carries who supersedes whom."""
    candidates = {c.id: c for c in gathered.candidates}
    least = default_min_relevance(mode) - RESULT_RELEVANCE_MARGIN
    at_s = at.timestamp()
    binding = supersession_of(pool.links.touching(list(candidates)), at_s)
    if not withhold or not binding.superseded_by:
        return gathered, binding
    # Successors outside the candidates may be superseded in turn: read their links too.
    known = set(candidates)
    for _ in range(MAX_DEPTH):
        fresh = {s for ids in binding.superseded_by.values() for s in ids} - known
        if not fresh:
            break
        known |= fresh
        binding = supersession_of(pool.links.touching(list(known)), at_s)
    kept = {i: c for i, c in candidates.items() if i not in binding.superseded_by}
    vectors = dict(gathered.vectors) if gathered.vectors is not None else None
    # Each withheld drawer's latest successors stand in for it (core.supersession.inherit).
    replacing = [
        (candidates[superseded], successor)
        for superseded in candidates
        if superseded in binding.superseded_by
        for successor in binding.latest(superseded)
    ]
    offered = list(dict.fromkeys(s for _, s in replacing if s not in kept))
    stored = pool.vectors_of(offered)
    for successor in offered:
        meta = pool.meta(successor)
        if meta is None or successor not in stored or not flt.matches(meta):
            continue
        kept[successor] = meta.candidate(
            float(np.dot(stored[successor], vector)), keyword_hit=False, vector_hit=True
        )
        if vectors is not None:
            vectors[successor] = stored[successor]
    for withheld, successor in replacing:
        if successor in kept:
            kept[successor] = inherit(kept[successor], withheld, least=least)
    bound = CandidateSet(list(kept.values()), gathered.keyword_reference, vectors)
    return bound, binding


class SearchEngine:
    """Runs searches against pools, with the embedder for query vectors."""

    def __init__(self, embedder: EmbedderClient, limits: SearchLimits | None = None) -> None:
        self.embedder = embedder
        self.limits = limits or SearchLimits()

    def validate(self, spec: SearchSpec) -> None:
        """Refuse what cannot be searched, with a message that says what to change."""
        limits = self.limits
        check_query_text(spec.query, limits.max_query_chars)
        if spec.n_results is not None and not 0 <= spec.n_results <= limits.max_n_results:
            raise InvalidInput(
                f"n_results must be between 0 and {limits.max_n_results}, got {spec.n_results}",
                field="n_results",
            )
        if spec.min_score is not None and not np.isfinite(spec.min_score):
            raise InvalidInput("min_score must be a finite number", field="min_score")
        if spec.depth > limits.max_depth:
            raise InvalidInput(
                f"candidate_depth is {spec.depth}; the limit is {limits.max_depth}",
                field="candidate_depth",
            )

    async def search(self, pool: DrawerPool, store: StoreView, spec: SearchSpec) -> SearchOutcome:
        """Run one search end to end."""
        self.validate(spec)
        started = time.perf_counter()
        depth = spec.depth or self.limits.default_depth
        # The keyword query needs no vector: it runs while the query is embedded. It reads
        # only the selecting filters; the pin exclusions, which the inferred intent decides,
        # are applied once that is known (DrawerPool.keyword_prefetch / keyword_narrow).
        selecting = MetaFilter(wing=spec.wing, room=spec.room, memory_types=spec.memory_types)
        keyword = asyncio.ensure_future(
            asyncio.to_thread(pool.keyword_prefetch, spec.query, selecting, depth)
        )
        try:
            return await self._search(pool, store, spec, depth, selecting, keyword, started)
        finally:
            if not keyword.done():  # the search failed before it needed the keyword hits
                keyword.cancel()
                await asyncio.gather(keyword, return_exceptions=True)

    async def _search(
        self,
        pool: DrawerPool,
        store: StoreView,
        spec: SearchSpec,
        depth: int,
        selecting: MetaFilter,
        keyword: asyncio.Future[KeywordPrefetch],
        started: float,
    ) -> SearchOutcome:
        library = library_for(store.mode)
        with stage("search.embed"):
            vector = await self.embedder.embed_query(spec.query)
        embedded = time.perf_counter()

        guess = self._intent(spec, library, vector)
        intent = guess.intent
        notice = ""
        if pool.reembedding_to is not None:
            # Its vectors are of two models until the rebuild ends: keyword matches only.
            spec = replace(
                spec,
                ranker=RANKER_KEYWORD,
                min_score=spec.min_score if spec.min_score is not None else 0.0,
            )
            notice = reembedding_notice(pool.reembedding_to)
        flt = replace(
            selecting,
            exclude_pin_statuses=frozenset()
            if spec.include_deprecated or intent == "history"
            else frozenset({"deprecated"}),
        )
        now = spec.as_of or datetime.now(UTC)

        with stage("search.keyword_wait"):
            prefetched = await keyword

        def gather() -> tuple[CandidateSet, Supersession]:
            # One trip off the event loop for both steps (each hop costs a thread handoff).
            found = self._candidates(
                pool,
                vector,
                pool.keyword_narrow(prefetched, flt),
                flt,
                depth,
                spec.ranker == RANKER_FULL,
                pool.reembedding_to is None,
            )
            return bind_supersession(
                pool,
                found,
                vector,
                flt,
                at=now,
                withhold=intent not in DEPRECATED_VISIBLE_INTENTS,
                mode=store.mode,
            )

        with stage("search.candidates", depth=depth):
            gathered_set, binding = await asyncio.to_thread(gather)
        candidates = gathered_set.candidates
        gathered = time.perf_counter()

        ctx = ScoringContext(
            mode=store.mode,
            intent=intent,
            now=now,
            legacy_authority=store.legacy_authority,
            authority_profile=store.authority_profile,
            default_tier=store.default_tier,
            ranker=spec.ranker,  # type: ignore[arg-type]
            include_deprecated=spec.include_deprecated,
            keyword_reference=gathered_set.keyword_reference,
            intent_weights=guess.weights,
        )
        with stage("search.scoring", candidates=len(candidates)):
            ranking = rank(candidates, ctx, gathered_set.vectors)
            n_results = spec.n_results if spec.n_results is not None else store.n_results
            min_score = spec.min_score if spec.min_score is not None else store.min_score
            chosen = select(ranking, n_results, min_score)
        scored = time.perf_counter()

        if intent in DEPRECATED_VISIBLE_INTENTS and binding.superseded_by:
            # A history answer tells each chain in the order it happened.
            by_candidate = {s.candidate.id: s for s in chosen}
            told = in_chain_order([s.candidate.id for s in chosen], binding)
            chosen = [by_candidate[i] for i in told]
        with stage("search.fetch", results=len(chosen)):
            drawers = await asyncio.to_thread(pool.get_many, [s.candidate.id for s in chosen])
        by_id = {d.id: d for d in drawers}
        hits = [
            SearchHitResult(s, by_id[s.candidate.id]) for s in chosen if s.candidate.id in by_id
        ]
        done = time.perf_counter()
        return SearchOutcome(
            notice=notice,
            supersession=binding,
            intent=ranking.intent,
            intent_inferred=not spec.intent.strip(),
            intent_confidence=guess.confidence,
            intent_reasons=tuple(guess.reasons),
            ranking=ranking,
            hits=hits,
            candidates_considered=len(candidates),
            timings=Timings(
                embed_ms=(embedded - started) * 1000,
                candidates_ms=(gathered - embedded) * 1000,
                scoring_ms=(scored - gathered) * 1000,
                total_ms=(done - started) * 1000,
            ),
        )

    def _intent(
        self, spec: SearchSpec, library: TypeLibrary, vector: npt.NDArray[np.float32]
    ) -> IntentGuess:
        explicit = spec.intent.strip().lower()
        if explicit:
            if explicit not in library.intents:
                raise InvalidInput(
                    f"intent {spec.intent!r} is not one of this store's intents "
                    f"{list(library.intents)}; leave it empty to have it inferred",
                    field="intent",
                )
            return IntentGuess(explicit, 1.0, None, [])
        return load_intent_model(library.name).classify(
            spec.query, vector, fingerprint=self.embedder.fingerprint
        )

    def _candidates(
        self,
        pool: DrawerPool,
        vector: npt.NDArray[np.float32],
        keyword: KeywordHits,
        flt: MetaFilter,
        depth: int,
        with_vectors: bool,
        dense: bool = True,
    ) -> CandidateSet:
        # Topical neighbourhoods compare candidates with each other, so the full ranker reads
        # every candidate's stored vector: the vector hits' come with the search itself, the
        # keyword-only hits' are read anyway (they need them for a cosine).
        stored: dict[str, npt.NDArray[np.float32]] = {}
        if not dense:
            return _keyword_candidates(pool, keyword)
        if with_vectors:
            found = pool.vector_search_with_vectors(vector, flt, depth)
            vector_hits = {drawer_id: score for drawer_id, score, _ in found}
            stored = {drawer_id: row for drawer_id, _, row in found}
        else:
            vector_hits = dict(pool.vector_search(vector, flt, depth))
        keyword_only = [hit.id for hit in keyword.hits if hit.id not in vector_hits]
        if keyword_only:
            stored.update(pool.vectors_of(keyword_only))
        for drawer_id in keyword_only:
            if drawer_id in stored:
                vector_hits.setdefault(drawer_id, float(np.dot(stored[drawer_id], vector)))
        # FTS5 answers in BM25 order: the position is the keyword ranker's order.
        keyword_rank = {hit.id: (position, hit.score) for position, hit in enumerate(keyword.hits)}
        candidates = []
        for drawer_id, similarity in vector_hits.items():
            meta = pool.meta(drawer_id)
            if meta is None:  # deleted between the search and now
                continue
            position, bm25 = keyword_rank.get(drawer_id, (None, None))
            candidates.append(
                meta.candidate(
                    similarity,
                    keyword_hit=drawer_id in keyword_rank,
                    vector_hit=drawer_id not in keyword_only,
                    keyword_rank=position,
                    keyword_score=bm25,
                )
            )
        return CandidateSet(
            candidates=candidates,
            keyword_reference=keyword.reference,
            vectors=stored if with_vectors else None,
        )


def _keyword_candidates(pool: DrawerPool, keyword: KeywordHits) -> CandidateSet:
    """The keyword hits alone, without a cosine: what a pool whose vectors are being rebuilt
    for another model can answer (its vectors are not comparable with the query's)."""
    candidates = []
    for position, hit in enumerate(keyword.hits):
        meta = pool.meta(hit.id)
        if meta is not None:
            candidates.append(
                meta.candidate(
                    0.0,
                    keyword_hit=True,
                    vector_hit=False,
                    keyword_rank=position,
                    keyword_score=hit.score,
                )
            )
    return CandidateSet(candidates, keyword.reference, None)
