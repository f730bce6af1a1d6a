"""Search, batch search, context packs, recording a retrieval, retrieval usage."""

from __future__ import annotations

from engram.v1 import retrieval_pb2
from fastapi import APIRouter, Request, Response

from gateway.deps import CallerDep, IdPath, StorePath
from gateway.routes._proto import ProtoOp, reply

router = APIRouter(prefix="/v1/stores/{store}", tags=["search"])

SEARCH = ProtoOp(retrieval_pb2.SearchRequest, retrieval_pb2.SearchResponse)
BATCH = ProtoOp(retrieval_pb2.SearchBatchRequest, retrieval_pb2.SearchBatchResponse)
PACK = ProtoOp(retrieval_pb2.ContextPackRequest, retrieval_pb2.ContextPackResponse)
RECORD = ProtoOp(
    retrieval_pb2.RecordRetrievalRequest,
    retrieval_pb2.RecordRetrievalResponse,
    path_fields=("drawer_ids",),
)
USAGE = ProtoOp(
    retrieval_pb2.RetrievalUsageRequest,
    retrieval_pb2.RetrievalUsageResponse,
    body=False,
    query=("since", "until"),
)


@router.post("/search", **SEARCH.route(summary="ranked drawers for a question"))
async def search(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(SEARCH, request, caller.gateway.operation("search"), store=store)


@router.post("/search:batch", **BATCH.route(summary="several searches in one call"))
async def search_batch(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(BATCH, request, caller.gateway.search_batch, store=store)


@router.post("/context-pack", **PACK.route(summary="best drawers for a goal, sized to a budget"))
async def build_context_pack(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        PACK, request, caller.gateway.operation("build_context_pack"), store=store
    )


@router.post("/drawers/{id}:record-retrieval", **RECORD.route(summary="report a drawer as used"))
async def record_retrieval(
    store: StorePath, id: IdPath, request: Request, caller: CallerDep
) -> Response:
    message = await RECORD.parse(request, limit=caller.body_limit, store=store)
    message.drawer_ids[:] = [id]
    record = caller.gateway.operation("record_retrieval")
    return reply(await record(caller.principal, message))


@router.get("/usage", **USAGE.route(summary="how often searches led to a used drawer"))
async def retrieval_usage(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        USAGE, request, caller.gateway.operation("retrieval_usage"), store=store
    )
