"""Protobuf ↔ retrieval domain translations, used by the servicer and nothing else."""

from __future__ import annotations

import dataclasses
from datetime import datetime

from engram.v1 import common_pb2, retrieval_pb2

from services.retrieval.core import (
    DampeningProfile,
    ScoreBreakdown,
    default_min_relevance,
    default_n_results,
)
from services.retrieval.pool.mirror import FacetCounts, MetaFilter
from services.retrieval.pool.records import to_datetime
from services.retrieval.search import SearchSpec, StoreView
from services.runtime.stores import validate_store_name
from services.vocabulary import DEFAULT_MODE, library_for
from services.vocabulary.enums import AUTHORITY_TIER_NAMES, MODE_NAMES, PIN_NAMES
from services.vocabulary.names import AUTHORITY_WORKER

_RANKERS = {
    retrieval_pb2.RANKER_MODE_UNSPECIFIED: "full",
    retrieval_pb2.RANKER_MODE_FULL: "full",
    retrieval_pb2.RANKER_MODE_HYBRID: "hybrid",
    retrieval_pb2.RANKER_MODE_COSINE: "cosine",
    retrieval_pb2.RANKER_MODE_KEYWORD: "keyword",
    retrieval_pb2.RANKER_MODE_DENSE: "dense",
}


def store_view(store: common_pb2.StoreContext) -> StoreView:
    """The scoring-relevant settings of the store a request names."""
    validate_store_name(store.name)
    profile = store.authority_profile
    return StoreView(
        name=store.name,
        mode=MODE_NAMES.get(store.deployment_mode, DEFAULT_MODE),
        legacy_authority=store.legacy_authority,
        authority_profile={
            a: AUTHORITY_TIER_NAMES.get(t, AUTHORITY_WORKER)
            for a, t in profile.tiers_by_author.items()
        },
        default_tier=AUTHORITY_TIER_NAMES.get(profile.default_tier, AUTHORITY_WORKER),
        n_results=store.defaults.n_results if store.defaults.HasField("n_results") else None,
        min_score=store.defaults.min_score if store.defaults.HasField("min_score") else None,
    )


def search_defaults(view: StoreView) -> common_pb2.SearchDefaults:
    """What a search of this store does with the fields a request leaves unset."""
    library = library_for(view.mode)
    defaults = common_pb2.SearchDefaults(
        n_results=view.n_results if view.n_results is not None else default_n_results(view.mode),
        min_relevance=default_min_relevance(view.mode),
        library=library.name,
        memory_types=library.types,
        intents=library.intents,
    )
    if view.min_score is not None:
        defaults.min_score = view.min_score
    return defaults


def as_of(
    request: retrieval_pb2.SearchRequest
    | retrieval_pb2.ContextPackRequest
    | retrieval_pb2.PrimeRequest,
) -> datetime | None:
    return to_datetime(request.as_of) if request.HasField("as_of") else None


def search_spec(request: retrieval_pb2.SearchRequest) -> SearchSpec:
    """A SearchRequest in domain terms."""
    return SearchSpec(
        query=request.query,
        intent=request.intent,
        n_results=request.n_results if request.HasField("n_results") else None,
        min_score=request.min_score if request.HasField("min_score") else None,
        wing=request.wing,
        room=request.room,
        memory_types=frozenset(t for t in request.memory_types if t),
        depth=request.candidate_depth,
        include_deprecated=request.include_deprecated,
        as_of=as_of(request),
        ranker=_RANKERS.get(request.ranker, "full"),
    )


def meta_filter(flt: retrieval_pb2.DrawerFilter) -> MetaFilter:
    return MetaFilter(
        wing=flt.wing,
        room=flt.room,
        memory_types=frozenset(t for t in flt.memory_types if t),
        pin_statuses=frozenset(PIN_NAMES[p] for p in flt.pin_statuses),
        added_by=flt.added_by,
        topic=flt.topic,
        session=flt.derived_from_session,
        chunk=flt.derived_from_chunk,
    )


_BREAKDOWN_FIELDS = tuple(f.name for f in common_pb2.ScoreBreakdown.DESCRIPTOR.fields)


def breakdown(value: ScoreBreakdown) -> common_pb2.ScoreBreakdown:
    """The scorer's breakdown as the proto; field names are shared, so nothing is re-listed."""
    fields = dataclasses.asdict(value)
    return common_pb2.ScoreBreakdown(**{name: fields[name] for name in _BREAKDOWN_FIELDS})


_SIGNAL_FIELDS = tuple(f.name for f in common_pb2.SignalDampening.DESCRIPTOR.fields)


def dampening(profile: DampeningProfile) -> common_pb2.DampeningProfile:
    signals = []
    for signal in profile.signals:
        fields = dataclasses.asdict(signal)
        signals.append(common_pb2.SignalDampening(**{n: fields[n] for n in _SIGNAL_FIELDS}))
    return common_pb2.DampeningProfile(signals=signals, candidate_count=profile.candidate_count)


def facets(counts: FacetCounts) -> retrieval_pb2.Facets:
    return retrieval_pb2.Facets(
        wings=[
            retrieval_pb2.WingFacet(
                wing=wing,
                count=sum(rooms.values()),
                rooms=[retrieval_pb2.RoomFacet(room=r, count=c) for r, c in rooms.items()],
            )
            for wing, rooms in counts.wings.items()
        ],
        memory_types=[
            retrieval_pb2.FacetCount(value=v, count=c) for v, c in counts.memory_types.items()
        ],
        pin_statuses=[
            retrieval_pb2.FacetCount(value=v, count=c) for v, c in counts.pin_statuses.items()
        ],
    )
