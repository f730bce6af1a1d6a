"""Drawers: ambient and canonical writes, update, delete and provenance (authoring tier);
get, list with facets, stats, JSONL import and export (retrieval tier)."""

from __future__ import annotations

from engram.v1 import retrieval_pb2
from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse

from gateway.deps import CallerDep, StorePath
from gateway.routes._proto import ProtoOp, reply

router = APIRouter(prefix="/v1/stores/{store}", tags=["drawers"])

JSONL = "application/x-ndjson"

EXPORT = ProtoOp(retrieval_pb2.ExportDrawersRequest, body=False)
IMPORT = ProtoOp(
    retrieval_pb2.ImportDrawersChunk,
    retrieval_pb2.ImportDrawersResponse,
    body=False,
    query=("replace_existing",),
)

_JSONL_BODY = {
    "requestBody": {
        "required": True,
        "content": {JSONL: {"schema": {"type": "string", "description": "one drawer a line"}}},
    }
}
_JSONL_ANSWER = {
    200: {
        "description": "every drawer of the store, one JSON object a line",
        "content": {JSONL: {"schema": {"type": "string"}}},
    }
}


@router.post(
    "/drawers:import",
    **IMPORT.route(summary="import JSONL drawers (admin)", openapi_extra=_JSONL_BODY),
)
async def import_drawers(store: StorePath, request: Request, caller: CallerDep) -> Response:
    caller.gateway.authorize(caller.principal, "import_drawers", store)
    header = await IMPORT.parse(request, limit=caller.body_limit, store=store)
    return reply(await caller.gateway.import_drawers(caller.principal, header, request.stream()))


@router.get(
    "/drawers:export",
    **EXPORT.route(summary="export every drawer as JSONL (admin)", responses=_JSONL_ANSWER),
)
async def export_drawers(store: StorePath, request: Request, caller: CallerDep) -> Response:
    message = await EXPORT.parse(request, limit=caller.body_limit, store=store)
    lines = await caller.gateway.export_drawers(caller.principal, message)
    return StreamingResponse(
        lines,
        media_type=JSONL,
        headers={"Content-Disposition": f'attachment; filename="{store}-drawers.jsonl"'},
    )
