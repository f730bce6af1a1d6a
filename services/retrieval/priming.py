"""prime: session-start recollection. Gathers the candidates (a search for the context, the
pool's pinned and signed drawers), withholds what is superseded at the moment asked about,
lets `core/priming.py` choose, and packs the choice like a context pack."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt
from engram.v1 import retrieval_pb2

from services.retrieval import convert
from services.retrieval.context_pack import budget_for, pack_candidate, session_proto
from services.retrieval.core.packing import build_pack
from services.retrieval.core.priming import (
    DEFAULT_PRIME_RESULTS,
    MAX_PRIME_RESULTS,
    PrimeCandidate,
    Standing,
    choose,
    standing_of,
)
from services.retrieval.core.salience import effective_salience_many
from services.retrieval.core.supersession import supersession_of
from services.retrieval.deps import RetrievalDeps
from services.retrieval.pool import DrawerPool
from services.retrieval.pool.mirror import DrawerMeta, MetaFilter, StandingTable
from services.retrieval.search import SearchSpec, StoreView
from services.runtime.errors import InvalidInput

# Drawers a context's search offers (more than are ever chosen, so diversity has room).
CONTEXT_CANDIDATES = 30
# Standing drawers read per source (pinned, canonical, ambient): this many per place asked.
CANDIDATES_PER_RESULT = 4
MIN_CANDIDATES = 20


def _by_salience(metas: list[DrawerMeta], now: datetime, limit: int) -> list[DrawerMeta]:
    """The `limit` most salient drawers now (ties: the newer first)."""
    if not metas:
        return []
    return most_salient(
        StandingTable.of(metas), np.ones(len(metas), dtype=np.bool_), now, limit, frozenset()
    )


def most_salient(
    table: StandingTable,
    rows: npt.NDArray[np.bool_],
    now: datetime,
    limit: int,
    skip: frozenset[str],
) -> list[DrawerMeta]:
    """The `limit` most salient of `rows` now, newest first on ties, leaving out `skip`."""
    index = np.flatnonzero(rows)
    if not len(index) or limit <= 0:
        return []
    salience = effective_salience_many(
        table.salience[index], table.last_activity_s[index], now.timestamp(), table.pinned[index]
    )
    wanted = min(len(index), limit + len(skip))
    if wanted < len(index):
        best = np.argpartition(-salience, wanted - 1)[:wanted]
        index, salience = index[best], salience[best]
    order = index[np.lexsort((-table.created_at[index], -salience))]
    picked = [table.metas[i] for i in order if table.metas[i].id not in skip]
    return picked[:limit]


def _standing_ranked(
    pool: DrawerPool, flt: MetaFilter, now: datetime, limit: int, skip: frozenset[str]
) -> list[DrawerMeta]:
    """The `limit` most salient pinned drawers in scope, then as many signed ones."""
    table = pool.standing_table()
    scope = table.where(wing=flt.wing, room=flt.room)
    return most_salient(table, scope & table.pinned, now, limit, skip) + most_salient(
        table, scope & ~table.pinned, now, limit, skip
    )


def _standing(meta: DrawerMeta) -> Standing:
    return standing_of(pinned=meta.pin_status == "pinned", signed=meta.signed)


async def prime(
    deps: RetrievalDeps, pool: DrawerPool, view: StoreView, request: retrieval_pb2.PrimeRequest
) -> retrieval_pb2.PrimeResponse:
    n = request.n_results or DEFAULT_PRIME_RESULTS
    if n > MAX_PRIME_RESULTS:
        raise InvalidInput(
            f"n_results is {n}; a session start takes at most {MAX_PRIME_RESULTS}",
            field="n_results",
        )
    budget = budget_for(
        deps, request.store, request.token_budget, default=deps.settings.prime_budget
    )
    # Enough per source for diversity to choose from; a pool of thousands of pinned or signed
    # drawers is never read whole.
    limit = max(CANDIDATES_PER_RESULT * n, MIN_CANDIDATES)
    as_of = convert.as_of(request)
    now = as_of or datetime.now(UTC)
    flt = MetaFilter(
        wing=request.wing, room=request.room, exclude_pin_statuses=frozenset({"deprecated"})
    )
    candidates: list[PrimeCandidate] = []
    if request.context.strip():
        outcome = await deps.engine.search(
            pool,
            view,
            SearchSpec(
                query=request.context,
                n_results=CONTEXT_CANDIDATES,
                wing=request.wing,
                room=request.room,
                as_of=as_of,
            ),
        )
        for hit in outcome.hits:
            meta = pool.meta(hit.drawer.id)
            if meta is not None:
                candidates.append(
                    PrimeCandidate(meta.id, _standing(meta), True, hit.scored.candidate.similarity)
                )
        # Pinned and canonical drawers the context did not reach fill the remaining places,
        # nearest to the context first (the search's order, floor or not), then by salience.
        reached = frozenset(c.id for c in candidates)
        near = [
            meta
            for scored in outcome.ranking.ranked
            if scored.candidate.id not in reached
            and (meta := pool.meta(scored.candidate.id)) is not None
            and meta.standing
            and flt.matches(meta)
        ][:limit]
        skip = reached | {m.id for m in near}
        rest = near + _standing_ranked(pool, flt, now, limit, skip)
    else:
        rest = _standing_ranked(pool, flt, now, limit, frozenset())
        if len(rest) < n:
            ambient = [m for m in pool.metas(flt) if not m.standing]
            rest += _by_salience(ambient, now, limit)
    candidates += [PrimeCandidate(m.id, _standing(m), False, 0.0) for m in rest]
    candidates = await asyncio.to_thread(_current, pool, candidates, now)
    vectors = await asyncio.to_thread(pool.vectors_of, [c.id for c in candidates])
    chosen = choose(candidates, vectors, n)
    drawers = {d.id: d for d in await asyncio.to_thread(pool.get_many, [p.id for p in chosen])}
    chosen = [p for p in chosen if p.id in drawers]
    pack = build_pack(
        [pack_candidate(drawers[p.id], p.relevance) for p in chosen],
        token_budget=budget,
        count_tokens=deps.tokens.count,
        truncate=deps.tokens.truncate,
    )
    by_id = {p.id: p for p in chosen}
    return retrieval_pb2.PrimeResponse(
        items=[
            retrieval_pb2.PrimedDrawer(
                drawer_id=item.drawer_id,
                header=item.header,
                content=item.content,
                tokens=item.tokens,
                reason=by_id[item.drawer_id].reason,
                relevance=by_id[item.drawer_id].relevance,
                sessions=[session_proto(s) for s in item.sessions],
            )
            for item in pack.items
        ],
        text=pack.text,
        tokens_used=pack.tokens_used,
        token_budget=pack.token_budget,
        omitted=pack.omitted,
        candidates=len(candidates),
    )


def _current(
    pool: DrawerPool, candidates: list[PrimeCandidate], now: datetime
) -> list[PrimeCandidate]:
    """The candidates no supersedes link holding at `now` replaces (a session starts from what
    is current; history is a search away)."""
    binding = supersession_of(pool.links.touching([c.id for c in candidates]), now.timestamp())
    return [c for c in candidates if c.id not in binding.superseded_by]
