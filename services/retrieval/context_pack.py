"""build_context_pack: a full search, then the best drawers packed under the caller's token
budget with compact provenance headers (core/packing.py does the packing)."""

from __future__ import annotations

from engram.v1 import common_pb2, retrieval_pb2

from services.retrieval import convert
from services.retrieval.core.packing import PackCandidate, SessionInfo, build_pack
from services.retrieval.deps import RetrievalDeps
from services.retrieval.pool import DrawerPool
from services.retrieval.pool.records import to_datetime
from services.retrieval.search import SearchOutcome, SearchSpec, StoreView
from services.runtime.errors import InvalidInput
from services.vocabulary.enums import PIN_NAMES

# More candidates than fit in any budget, so the pack can skip a long drawer for shorter ones.
PACK_CANDIDATES = 50


def budget_for(
    deps: RetrievalDeps, store: common_pb2.StoreContext, asked: int, default: int | None = None
) -> int:
    """The caller's token budget: asked for (within the limit), else `default`, else the
    tier's context-pack budget. Tiers govern context budget."""
    settings = deps.settings
    if asked:
        if asked > settings.max_pack_budget:
            raise InvalidInput(
                f"token_budget {asked} is over the limit of {settings.max_pack_budget}",
                field="token_budget",
            )
        return asked
    if default is not None:
        return default
    return {
        common_pb2.CALLER_TIER_ADMIN: settings.pack_budget_admin,
        common_pb2.CALLER_TIER_WRITE: settings.pack_budget_write,
    }.get(store.caller_tier, settings.pack_budget_read)


def _sessions(drawer: common_pb2.Drawer) -> tuple[SessionInfo, ...]:
    described = {
        s.session_id: SessionInfo(
            session_id=s.session_id,
            raw_chunk_count=s.raw_chunk_count,
            span_start=to_datetime(s.span_start) if s.HasField("span_start") else None,
            span_end=to_datetime(s.span_end) if s.HasField("span_end") else None,
            origin_kind=s.origin_kind,
        )
        for s in drawer.sessions
    }
    # Drawers written without descriptors still name their sessions (counted from the arcs).
    counts: dict[str, int] = {}
    for arc in drawer.derived_from:
        if arc.session_id and arc.session_id not in described:
            counts[arc.session_id] = counts.get(arc.session_id, 0) + 1
    for session_id, count in counts.items():
        described[session_id] = SessionInfo(session_id, count, None, None)
    return tuple(described.values())


def session_proto(info: SessionInfo) -> common_pb2.SessionDescriptor:
    proto = common_pb2.SessionDescriptor(
        session_id=info.session_id,
        raw_chunk_count=info.raw_chunk_count,
        origin_kind=info.origin_kind,
    )
    if info.span_start is not None:
        proto.span_start.FromDatetime(info.span_start)
    if info.span_end is not None:
        proto.span_end.FromDatetime(info.span_end)
    return proto


def pack_candidate(drawer: common_pb2.Drawer, score: float) -> PackCandidate:
    """A drawer offered to a pack (context pack, session start) with its provenance."""
    return PackCandidate(
        drawer_id=drawer.id,
        content=drawer.content,
        memory_type=drawer.memory_type,
        pin_status=PIN_NAMES[drawer.pin_status],
        room=drawer.room,
        date=to_datetime(drawer.created_at),
        signature=drawer.signature if drawer.HasField("signature") else None,
        score=score,
        sessions=_sessions(drawer),
    )


async def build_context_pack(
    deps: RetrievalDeps,
    pool: DrawerPool,
    view: StoreView,
    request: retrieval_pb2.ContextPackRequest,
) -> tuple[retrieval_pb2.ContextPackResponse, SearchOutcome]:
    """Search, then pack best-first under the budget. Returns the response and the search."""
    budget = budget_for(deps, request.store, request.token_budget)
    spec = SearchSpec(
        query=request.query,
        intent=request.intent,
        n_results=PACK_CANDIDATES,
        min_score=request.min_score if request.HasField("min_score") else None,
        wing=request.wing,
        room=request.room,
        as_of=convert.as_of(request),
    )
    outcome = await deps.engine.search(pool, view, spec)
    candidates = [pack_candidate(hit.drawer, hit.scored.final_score) for hit in outcome.hits]
    pack = build_pack(
        candidates,
        token_budget=budget,
        count_tokens=deps.tokens.count,
        truncate=deps.tokens.truncate,
    )
    response = retrieval_pb2.ContextPackResponse(
        intent=outcome.intent,
        intent_inferred=outcome.intent_inferred,
        items=[
            retrieval_pb2.ContextPackItem(
                drawer_id=item.drawer_id,
                header=item.header,
                content=item.content,
                score=item.score,
                tokens=item.tokens,
                sessions=[session_proto(s) for s in item.sessions],
            )
            for item in pack.items
        ],
        text=pack.text,
        tokens_used=pack.tokens_used,
        token_budget=pack.token_budget,
        omitted=pack.omitted,
    )
    return response, outcome
