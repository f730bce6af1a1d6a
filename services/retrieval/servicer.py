"""RetrievalService: protobuf → retrieval domain → protobuf, nothing else."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any, TypeAlias

import grpc
from engram.v1 import common_pb2, embedder_pb2, retrieval_pb2, retrieval_pb2_grpc

from services.retrieval import convert, links
from services.retrieval.context_pack import build_context_pack, pack_candidate
from services.retrieval.core import effective_salience
from services.retrieval.core.log_entry import LogEntry, Op
from services.retrieval.core.packing import render_header
from services.retrieval.core.usage import usage_by_day
from services.retrieval.deps import RetrievalDeps
from services.retrieval.duplicates import find_similar
from services.retrieval.pool import DrawerPool
from services.retrieval.pool.mirror import facets, salience_summary
from services.retrieval.pool.pool import CHECKED_PARTS
from services.retrieval.pool.records import to_datetime
from services.retrieval.priming import prime
from services.retrieval.search import SearchOutcome, StoreView
from services.retrieval.transfer import export_lines, import_drawers
from services.retrieval.writes import index_drawers, record_retrieval, update_metadata
from services.runtime.drift import store_check
from services.runtime.errors import InvalidInput, NotFound
from services.runtime.paging import page_offset, page_token
from services.runtime.queries import parse_day
from services.runtime.store_backup import BackupRpcs, Snapshots

Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]


def _now() -> datetime:
    return datetime.now(UTC)


class RetrievalServicer(BackupRpcs, retrieval_pb2_grpc.RetrievalServiceServicer):
    def __init__(self, deps: RetrievalDeps) -> None:
        self._deps = deps

    async def _pool(self, store: common_pb2.StoreContext) -> tuple[DrawerPool, StoreView]:
        view = convert.store_view(store)
        return await asyncio.to_thread(self._deps.pools.get, view.name), view

    # ------------------------------------------------------------------ writes

    async def IndexDrawers(
        self, request: retrieval_pb2.IndexDrawersRequest, context: Context
    ) -> retrieval_pb2.IndexDrawersResponse:
        pool, _ = await self._pool(request.store)
        written, forgotten = await index_drawers(
            pool,
            self._deps.embedder,
            list(request.drawers),
            _now(),
            self._deps.settings.initial_salience,
            revive=request.revive,
        )
        self._deps.schedule_index_build(pool)
        now = _now()
        for drawer in written:
            _with_effective_salience(drawer, now)
        return retrieval_pb2.IndexDrawersResponse(
            indexed=len(written), ids=[d.id for d in written], drawers=written, forgotten=forgotten
        )

    async def UpdateDrawerMetadata(
        self, request: retrieval_pb2.UpdateDrawerMetadataRequest, context: Context
    ) -> common_pb2.Drawer:
        pool, _ = await self._pool(request.store)
        return await asyncio.to_thread(update_metadata, pool, request, _now())

    async def DeleteDrawers(
        self, request: retrieval_pb2.DeleteDrawersRequest, context: Context
    ) -> retrieval_pb2.DeleteDrawersResponse:
        pool, _ = await self._pool(request.store)
        if not request.ids:
            raise InvalidInput("ids is empty", field="ids")
        deleted = await asyncio.to_thread(pool.delete, list(request.ids))
        return retrieval_pb2.DeleteDrawersResponse(deleted=deleted)

    async def FindSimilarDrawers(
        self, request: retrieval_pb2.FindSimilarDrawersRequest, context: Context
    ) -> retrieval_pb2.FindSimilarDrawersResponse:
        pool, _ = await self._pool(request.store)
        if not request.content.strip():
            raise InvalidInput("content is empty", field="content")
        matches = await find_similar(
            pool,
            self._deps.embedder,
            content=request.content,
            content_hash=request.content_hash,
            room=request.room,
            memory_type=request.memory_type,
            min_similarity=request.min_similarity,
            limit=request.limit or 5,
        )
        return retrieval_pb2.FindSimilarDrawersResponse(
            matches=[
                retrieval_pb2.SimilarDrawer(
                    drawer=m.drawer, similarity=m.similarity, same_hash=m.same_hash
                )
                for m in matches
            ]
        )

    async def DropStore(
        self, request: common_pb2.DropStoreRequest, context: Context
    ) -> common_pb2.DropStoreResponse:
        view = convert.store_view(request.store)
        dropped = await asyncio.to_thread(
            self._deps.pools.drop, view.name, keep_shared=request.keep_shared
        )
        return common_pb2.DropStoreResponse(dropped=dropped)

    async def CheckStore(
        self, request: common_pb2.CheckStoreRequest, context: Context
    ) -> common_pb2.StoreCheck:
        """`engram doctor` for the drawer pool (DrawerPool.check)."""
        pool, _ = await self._pool(request.store)
        checked, drifts = await asyncio.to_thread(pool.check, repair=request.repair)
        return store_check("retrieval", checked, CHECKED_PARTS, drifts)

    def snapshots(self) -> Snapshots[DrawerPool]:
        return Snapshots("retrieval", self._deps.pools, DrawerPool.snapshot_parts)

    # ------------------------------------------------------------------ reads

    async def GetDrawer(
        self, request: retrieval_pb2.GetDrawerRequest, context: Context
    ) -> common_pb2.Drawer:
        pool, _ = await self._pool(request.store)
        drawer = await asyncio.to_thread(pool.get, request.id)
        now = to_datetime(request.as_of) if request.HasField("as_of") else _now()
        _with_effective_salience(drawer, now)
        return drawer

    async def ListDrawers(
        self, request: retrieval_pb2.ListDrawersRequest, context: Context
    ) -> retrieval_pb2.ListDrawersResponse:
        pool, _ = await self._pool(request.store)
        metas = pool.metas(convert.meta_filter(request.filter))
        metas.sort(key=lambda m: (-m.created_at, m.id))  # newest first, stable
        size = request.page.page_size or 50
        if size > 500:
            raise InvalidInput("page_size must be at most 500", field="page.page_size")
        offset = page_offset(request.page.page_token)
        page = metas[offset : offset + size]
        drawers = await asyncio.to_thread(pool.get_many, [m.id for m in page])
        now = _now()
        for drawer in drawers:
            _with_effective_salience(drawer, now)
        following = offset + size
        response = retrieval_pb2.ListDrawersResponse(
            drawers=drawers,
            page=common_pb2.PageResponse(
                next_page_token=page_token(following) if following < len(metas) else "",
                total=len(metas),
            ),
        )
        if request.include_facets:
            response.facets.CopyFrom(convert.facets(facets(metas)))
        return response

    async def DescribeEmbedder(
        self, request: embedder_pb2.InfoRequest, context: Context
    ) -> embedder_pb2.InfoResponse:
        return await self._deps.embedder.info()

    async def Stats(
        self, request: retrieval_pb2.StatsRequest, context: Context
    ) -> retrieval_pb2.StatsResponse:
        pool, view = await self._pool(request.store)
        if request.counts_only:
            return retrieval_pb2.StatsResponse(
                drawers=pool.count(), vector_backend=pool.vector_backend
            )
        metas = pool.metas()
        summary = salience_summary(metas, _now())
        return retrieval_pb2.StatsResponse(
            drawers=len(metas),
            facets=convert.facets(facets(metas)),
            salience=retrieval_pb2.SalienceStats(
                min=summary.min,
                max=summary.max,
                median=summary.median,
                p90=summary.p90,
                mean=summary.mean,
                histogram=summary.histogram,
            ),
            retrievals_recorded=sum(m.retrieval_count for m in metas),
            vector_backend=pool.vector_backend,
            ann_indexed=await asyncio.to_thread(lambda: pool.index.indexed),
            search_defaults=convert.search_defaults(view),
            reembed=self._deps.reembeds.status(view.name, pool),
        )

    async def ReembedStore(
        self, request: common_pb2.ReembedStoreRequest, context: Context
    ) -> retrieval_pb2.ReembedStatus:
        # Admin only: the gateway's operation table says so (as for every tier operation).
        view = convert.store_view(request.store)
        deps = self._deps
        return await deps.reembeds.start(
            view.name, pools=deps.pools, embedder=deps.embedder, on_done=deps.schedule_index_build
        )

    # ------------------------------------------------------------------ search

    async def Search(
        self, request: retrieval_pb2.SearchRequest, context: Context
    ) -> retrieval_pb2.SearchResponse:
        pool, view = await self._pool(request.store)
        outcome = await self._deps.engine.search(pool, view, convert.search_spec(request))
        await self._log(pool, view, request.store.caller_id, "search", request.query, outcome)
        return _search_response(outcome, request.include_breakdown)

    async def SearchBatch(
        self, request: retrieval_pb2.SearchBatchRequest, context: Context
    ) -> retrieval_pb2.SearchBatchResponse:
        pool, view = await self._pool(request.store)
        limit = self._deps.settings.max_batch_queries
        if not request.searches:
            raise InvalidInput("searches is empty", field="searches")
        if len(request.searches) > limit:
            raise InvalidInput(
                f"{len(request.searches)} searches in one batch; the limit is {limit}",
                field="searches",
            )
        specs = [convert.search_spec(s) for s in request.searches]
        for index, spec in enumerate(specs):
            try:
                self._deps.engine.validate(spec)
            except InvalidInput as error:
                raise InvalidInput(
                    f"searches[{index}]: {error.message}", field=error.field
                ) from error
        outcomes = await asyncio.gather(
            *(self._deps.engine.search(pool, view, spec) for spec in specs)
        )
        for search, outcome in zip(request.searches, outcomes, strict=True):
            caller = request.store.caller_id
            await self._log(pool, view, caller, "search_batch", search.query, outcome)
        return retrieval_pb2.SearchBatchResponse(
            responses=[
                _search_response(o, s.include_breakdown)
                for o, s in zip(outcomes, request.searches, strict=True)
            ]
        )

    async def BuildContextPack(
        self, request: retrieval_pb2.ContextPackRequest, context: Context
    ) -> retrieval_pb2.ContextPackResponse:
        pool, view = await self._pool(request.store)
        started = time.perf_counter()
        response, outcome = await build_context_pack(self._deps, pool, view, request)
        # Only what made it into the pack was handed to the agent.
        handed = tuple((item.drawer_id, item.score) for item in response.items)
        await self._log(
            pool,
            view,
            request.store.caller_id,
            "build_context_pack",
            request.query,
            outcome,
            started=started,
            results=handed,
        )
        return response

    async def Prime(
        self, request: retrieval_pb2.PrimeRequest, context: Context
    ) -> retrieval_pb2.PrimeResponse:
        pool, view = await self._pool(request.store)
        primed = await prime(self._deps, pool, view, request)
        await self._hand_over(pool, request.store.caller_id, [i.drawer_id for i in primed.items])
        return primed

    async def RecordRetrieval(
        self, request: retrieval_pb2.RecordRetrievalRequest, context: Context
    ) -> retrieval_pb2.RecordRetrievalResponse:
        pool, view = await self._pool(request.store)
        started = time.perf_counter()
        if not request.drawer_ids:
            raise InvalidInput("drawer_ids is empty", field="drawer_ids")
        missing = sorted({i for i in request.drawer_ids if pool.meta(i) is None})
        if missing:
            raise NotFound(f"no such drawers: {missing}", field="drawer_ids")
        # Only a use that follows a handover to this caller counts (pool/handovers.py).
        earned = await asyncio.to_thread(
            pool.handovers.redeem,
            request.store.caller_id,
            list(request.drawer_ids),
            time.time(),
        )
        refused = [
            retrieval_pb2.RefusedRecord(drawer_id=drawer_id, reason=reason)
            for drawer_id, reason in earned.refused
        ]
        if not earned.credited:
            return retrieval_pb2.RecordRetrievalResponse(refused=refused)
        drawers = await asyncio.to_thread(record_retrieval, pool, list(earned.credited), _now())
        await self._append(
            view.name,
            LogEntry(
                at=_now(),
                op="record_retrieval",
                query=request.query,
                intent="",
                intent_inferred=False,
                results=tuple((d.id, None) for d in drawers),
                latency_ms=(time.perf_counter() - started) * 1000,
            ),
        )
        now = _now()
        for drawer in drawers:
            _with_effective_salience(drawer, now)
        return retrieval_pb2.RecordRetrievalResponse(drawers=drawers, refused=refused)

    # ------------------------------------------------------------------ links

    async def CreateLink(
        self, request: retrieval_pb2.CreateLinkRequest, context: Context
    ) -> retrieval_pb2.DrawerLink:
        pool, _ = await self._pool(request.store)
        return await asyncio.to_thread(links.create_link, pool, request, now=time.time())

    async def EndLink(
        self, request: retrieval_pb2.EndLinkRequest, context: Context
    ) -> retrieval_pb2.DrawerLink:
        pool, _ = await self._pool(request.store)
        return await asyncio.to_thread(links.end_link, pool, request, now=time.time())

    async def DeleteLink(
        self, request: retrieval_pb2.DeleteLinkRequest, context: Context
    ) -> retrieval_pb2.DeleteLinkResponse:
        pool, _ = await self._pool(request.store)
        return await asyncio.to_thread(links.delete_link, pool, request)

    async def ListLinks(
        self, request: retrieval_pb2.ListLinksRequest, context: Context
    ) -> retrieval_pb2.ListLinksResponse:
        pool, _ = await self._pool(request.store)
        return await asyncio.to_thread(links.list_links, pool, request)

    async def TraverseLinks(
        self, request: retrieval_pb2.TraverseLinksRequest, context: Context
    ) -> retrieval_pb2.TraverseLinksResponse:
        pool, _ = await self._pool(request.store)
        return await asyncio.to_thread(links.traverse_links, pool, request)

    async def RetrievalUsage(
        self, request: retrieval_pb2.RetrievalUsageRequest, context: Context
    ) -> retrieval_pb2.RetrievalUsageResponse:
        view = convert.store_view(request.store)
        today = _now().date()
        since = parse_day(request.since, "since") or today - timedelta(days=30)
        until = parse_day(request.until, "until") or today
        if since > until:
            raise InvalidInput("since is after until", field="since")
        log = self._deps.log_for(view.name)
        window = timedelta(hours=self._deps.settings.usage_window_h)
        entries = await asyncio.to_thread(
            lambda: list(log.read(since, until + window_days(window)))
        )
        report = usage_by_day(entries, window=window, since=since, until=until)
        days = report.days
        return retrieval_pb2.RetrievalUsageResponse(
            days=[
                retrieval_pb2.UsageDay(
                    day=d.day.isoformat(),
                    searches=d.searches,
                    searches_with_use=d.searches_with_use,
                    usage_rate=d.usage_rate,
                    retrievals_recorded=d.retrievals_recorded,
                )
                for d in days
            ],
            overall_usage_rate=report.overall_usage_rate,
        )

    # ------------------------------------------------------------------ export / import

    async def ExportDrawers(
        self, request: retrieval_pb2.ExportDrawersRequest, context: Context
    ) -> AsyncIterator[retrieval_pb2.ExportDrawersChunk]:
        pool, _ = await self._pool(request.store)
        async for chunk in export_lines(pool):
            yield retrieval_pb2.ExportDrawersChunk(jsonl=chunk)

    async def ImportDrawers(
        self, request_iterator: AsyncIterator[retrieval_pb2.ImportDrawersChunk], context: Context
    ) -> retrieval_pb2.ImportDrawersResponse:
        first: retrieval_pb2.ImportDrawersChunk | None = None
        parts: list[bytes] = []
        size = 0
        limit = self._deps.settings.max_import_bytes
        async for chunk in request_iterator:
            if first is None:
                first = chunk
            size += len(chunk.jsonl)
            if size > limit:
                raise InvalidInput(
                    f"import is over {limit} bytes: split the file into several imports",
                    field="jsonl",
                )
            parts.append(chunk.jsonl)
        if first is None:
            raise InvalidInput("the import stream was empty", field="jsonl")
        pool, _ = await self._pool(first.store)
        imported = await import_drawers(
            pool,
            self._deps.embedder,
            b"".join(parts),
            replace_existing=first.replace_existing,
            initial_salience=self._deps.settings.initial_salience,
        )
        self._deps.schedule_index_build(pool)
        return retrieval_pb2.ImportDrawersResponse(imported=imported)

    # ------------------------------------------------------------------ log

    async def _append(self, store: str, entry: LogEntry) -> None:
        """Append to the store's retrieval log off the event loop (it is a file write)."""
        await asyncio.to_thread(self._deps.log_for(store).append, entry)

    async def _hand_over(self, pool: DrawerPool, caller: str, drawer_ids: list[str]) -> None:
        """`drawer_ids` went to `caller`: each may now be recorded as used, once."""
        if drawer_ids:
            await asyncio.to_thread(pool.handovers.hand_over, caller, drawer_ids, time.time())

    async def _log(
        self,
        pool: DrawerPool,
        view: StoreView,
        caller: str,
        op: Op,
        query: str,
        outcome: SearchOutcome,
        *,
        started: float | None = None,
        results: tuple[tuple[str, float | None], ...] | None = None,
    ) -> None:
        """Log what a search handed over, and hand it over to the caller."""
        latency = (time.perf_counter() - started) * 1000 if started else outcome.timings.total_ms
        handed = (
            results
            if results is not None
            else tuple((h.drawer.id, h.scored.final_score) for h in outcome.hits)
        )
        entry = LogEntry(
            at=_now(),
            op=op,
            query=query,
            intent=outcome.intent,
            intent_inferred=outcome.intent_inferred,
            results=handed,
            latency_ms=latency,
        )
        ids = [drawer_id for drawer_id, _ in handed]
        log = self._deps.log_for(view.name)

        def record() -> None:
            # One trip off the event loop: the handover rows, then the log line.
            if ids:
                pool.handovers.hand_over(caller, ids, time.time())
            log.append(entry)

        await asyncio.to_thread(record)


def window_days(window: timedelta) -> timedelta:
    """Whole days to read past `until` so uses recorded after a late search are seen."""
    return timedelta(days=max(1, -(-window // timedelta(days=1))))


def _with_effective_salience(drawer: common_pb2.Drawer, now: datetime) -> None:
    drawer.effective_salience = effective_salience(
        drawer.salience,
        to_datetime(drawer.last_activity_at),
        now,
        pinned=drawer.pin_status == common_pb2.PIN_STATUS_PINNED,
    )


def _search_response(
    outcome: SearchOutcome, include_breakdown: bool
) -> retrieval_pb2.SearchResponse:
    results = []
    for rank_index, hit in enumerate(outcome.hits, start=1):
        drawer = hit.drawer
        drawer.effective_salience = hit.scored.breakdown.salience
        result = retrieval_pb2.SearchHit(
            drawer=drawer,
            score=hit.scored.final_score,
            deprecated=hit.scored.breakdown.deprecated,
            rank=rank_index,
            superseded_by=outcome.supersession.superseded_by.get(drawer.id, ()),
            supersedes=outcome.supersession.supersedes.get(drawer.id, ()),
            header=render_header(pack_candidate(drawer, hit.scored.final_score)),
        )
        if include_breakdown:
            result.breakdown.CopyFrom(convert.breakdown(hit.scored.breakdown))
        results.append(result)
    timings = outcome.timings
    return retrieval_pb2.SearchResponse(
        notice=outcome.notice,
        intent=outcome.intent,
        intent_inferred=outcome.intent_inferred,
        intent_confidence=outcome.intent_confidence,
        intent_mixture=[
            retrieval_pb2.IntentShare(intent=intent, weight=weight)
            for intent, weight in outcome.ranking.intent_weights
        ],
        intent_reasons=outcome.intent_reasons,
        topically_lifted=sum(1 for hit in outcome.hits if hit.scored.breakdown.lifted_by),
        outside_relevance_window=sum(
            1 for hit in outcome.hits if hit.scored.id in outcome.ranking.outside_window
        ),
        results=results,
        dampening=convert.dampening(outcome.ranking.dampening),
        candidates_considered=outcome.candidates_considered,
        timings=retrieval_pb2.SearchTimings(
            embed_ms=timings.embed_ms,
            candidates_ms=timings.candidates_ms,
            scoring_ms=timings.scoring_ms,
            total_ms=timings.total_ms,
        ),
    )
