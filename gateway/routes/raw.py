"""The raw tier: add memories and sessions, search, expand, list sessions and their chunks."""

from __future__ import annotations

from typing import Annotated

from engram.v1 import common_pb2, corpus_pb2
from fastapi import APIRouter, Path, Request, Response

from gateway.deps import CallerDep, StorePath
from gateway.routes._proto import ProtoOp

router = APIRouter(prefix="/v1/stores/{store}/raw", tags=["raw"])

SessionPath = Annotated[str, Path(description="the raw session's id")]

ADD_MEMORY = ProtoOp(corpus_pb2.AddRawMemoryRequest, common_pb2.RawChunk)
ADD_SESSION = ProtoOp(corpus_pb2.AddRawSessionRequest, corpus_pb2.AddRawSessionResponse)
SEARCH = ProtoOp(corpus_pb2.SearchRawRequest, corpus_pb2.SearchRawResponse)
EXPAND = ProtoOp(corpus_pb2.ExpandRawRequest, corpus_pb2.ExpandRawResponse)
SESSIONS = ProtoOp(
    corpus_pb2.ListSessionsRequest,
    corpus_pb2.ListSessionsResponse,
    body=False,
    query=("origin_kind", "file_id", "page.page_size", "page.page_token"),
)
CHUNKS = ProtoOp(
    corpus_pb2.GetSessionChunksRequest,
    corpus_pb2.GetSessionChunksResponse,
    body=False,
    path_fields=("session_id",),
)


@router.post("/memories", **ADD_MEMORY.route(summary="record one raw memory"))
async def add_raw_memory(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        ADD_MEMORY, request, caller.gateway.operation("add_raw_memory"), store=store
    )


@router.post("/sessions", **ADD_SESSION.route(summary="record a conversation"))
async def add_raw_session(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        ADD_SESSION, request, caller.gateway.operation("add_raw_session"), store=store
    )


@router.get("/sessions", **SESSIONS.route(summary="raw sessions"))
async def list_sessions(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        SESSIONS, request, caller.gateway.operation("list_sessions"), store=store
    )


@router.get("/sessions/{session_id}/chunks", **CHUNKS.route(summary="a session's chunks"))
async def get_session_chunks(
    store: StorePath, session_id: SessionPath, request: Request, caller: CallerDep
) -> Response:
    return await caller.run(
        CHUNKS,
        request,
        caller.gateway.operation("get_session_chunks"),
        store=store,
        session_id=session_id,
    )


@router.post("/search", **SEARCH.route(summary="verbatim raw chunks for a query"))
async def search_raw(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(SEARCH, request, caller.gateway.operation("search_raw"), store=store)


@router.post("/expand", **EXPAND.route(summary="a raw chunk with its neighbours"))
async def expand_raw(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(EXPAND, request, caller.gateway.operation("expand_raw"), store=store)
