"""Drawers: ambient and canonical writes, update, delete and provenance (authoring tier);
get, list with facets, stats, JSONL import and export (retrieval tier)."""

from __future__ import annotations

from engram.v1 import authoring_pb2, common_pb2, retrieval_pb2
from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse

from gateway.deps import CallerDep, IdPath, StorePath
from gateway.routes._proto import ProtoOp, reply

router = APIRouter(prefix="/v1/stores/{store}", tags=["drawers"])

JSONL = "application/x-ndjson"

ADD = ProtoOp(authoring_pb2.AddDrawerRequest, authoring_pb2.WriteDrawerResponse)
ADD_SIGNED = ProtoOp(authoring_pb2.AddDrawerSignedRequest, authoring_pb2.WriteDrawerResponse)
UPDATE = ProtoOp(
    authoring_pb2.UpdateDrawerRequest, authoring_pb2.WriteDrawerResponse, path_fields=("id",)
)
DELETE = ProtoOp(
    authoring_pb2.DeleteDrawerRequest,
    authoring_pb2.DeleteDrawerResponse,
    path_fields=("id",),
    body=False,
    query=("reason",),
)
PROVENANCE = ProtoOp(
    authoring_pb2.GetProvenanceRequest,
    authoring_pb2.GetProvenanceResponse,
    path_fields=("id",),
    body=False,
)
GET = ProtoOp(
    retrieval_pb2.GetDrawerRequest,
    common_pb2.Drawer,
    path_fields=("id",),
    body=False,
    query=("as_of",),
)
LIST = ProtoOp(
    retrieval_pb2.ListDrawersRequest,
    retrieval_pb2.ListDrawersResponse,
    body=False,
    query=(
        "filter.wing",
        "filter.room",
        "filter.memory_types",
        "filter.pin_statuses",
        "filter.added_by",
        "filter.topic",
        "filter.derived_from_session",
        "filter.derived_from_chunk",
        "page.page_size",
        "page.page_token",
        "include_facets",
    ),
)
STATS = ProtoOp(retrieval_pb2.StatsRequest, retrieval_pb2.StatsResponse, body=False)
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


@router.post("/drawers", **ADD.route(summary="ambient write (no signature)"))
async def add_drawer(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(ADD, request, caller.gateway.operation("add_drawer"), store=store)


@router.post("/drawers/signed", **ADD_SIGNED.route(summary="canonical write, signed"))
async def add_drawer_signed(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        ADD_SIGNED, request, caller.gateway.operation("add_drawer_signed"), store=store
    )


@router.get("/drawers", **LIST.route(summary="list drawers with filters and facets"))
async def list_drawers(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(LIST, request, caller.gateway.operation("list_drawers"), store=store)


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


@router.get("/drawers/{id}", **GET.route(summary="one drawer"))
async def get_drawer(store: StorePath, id: IdPath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        GET, request, caller.gateway.operation("get_drawer"), store=store, id=id
    )


@router.patch("/drawers/{id}", **UPDATE.route(summary="change a drawer (re-validated, logged)"))
async def update_drawer(
    store: StorePath, id: IdPath, request: Request, caller: CallerDep
) -> Response:
    return await caller.run(
        UPDATE, request, caller.gateway.operation("update_drawer"), store=store, id=id
    )


@router.delete("/drawers/{id}", **DELETE.route(summary="delete a drawer"))
async def delete_drawer(
    store: StorePath, id: IdPath, request: Request, caller: CallerDep
) -> Response:
    return await caller.run(
        DELETE, request, caller.gateway.operation("delete_drawer"), store=store, id=id
    )


@router.get("/drawers/{id}/provenance", **PROVENANCE.route(summary="who changed what, when"))
async def get_provenance(
    store: StorePath, id: IdPath, request: Request, caller: CallerDep
) -> Response:
    return await caller.run(
        PROVENANCE, request, caller.gateway.operation("get_provenance"), store=store, id=id
    )


@router.get("/stats", **STATS.route(summary="drawer counts, facets, salience"))
async def stats(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(STATS, request, caller.gateway.operation("stats"), store=store)
