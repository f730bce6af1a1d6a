"""Whole-store backups over REST: the archive `engram backup` writes, and a new store from one
(gateway/core/backup_ops.py). Both stream; the archive is never held whole in memory."""

from __future__ import annotations

from datetime import UTC, datetime

from engram.v1 import common_pb2, gateway_pb2
from fastapi import APIRouter, Request, Response
from fastapi.responses import StreamingResponse

from gateway.deps import CallerDep, StorePath
from gateway.routes._proto import ProtoOp, reply

# Before the declared routes: `GET /v1/stores/{store}` would read "x:backup" as a store name.
router = APIRouter(prefix="/v1/stores", tags=["stores"])

TAR = "application/x-tar"

BACKUP = ProtoOp(common_pb2.BackupStoreRequest, body=False)
RESTORE = ProtoOp(common_pb2.ArchiveChunk, gateway_pb2.StoreInfo, body=False)

_ARCHIVE = {"content": {TAR: {"schema": {"type": "string", "format": "binary"}}}}


@router.get(
    "/{store}:backup",
    **BACKUP.route(
        summary="back the store up: one archive of every tier's snapshot (admin)",
        responses={200: {"description": "the archive (`engram restore` reads it)", **_ARCHIVE}},
    ),
)
async def backup_store(store: StorePath, request: Request, caller: CallerDep) -> Response:
    message = await BACKUP.parse(request, limit=caller.body_limit, store=store)
    pieces = await caller.gateway.operation("backup_store")(caller.principal, message)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return StreamingResponse(
        pieces,
        media_type=TAR,
        headers={"Content-Disposition": f'attachment; filename="{store}-{stamp}.engram.tar"'},
    )


@router.post(
    "/{store}:restore",
    **RESTORE.route(
        summary="a new store from a backup archive (admin; the name must be free)",
        status_code=201,
        openapi_extra={"requestBody": {"required": True, **_ARCHIVE}},
    ),
)
async def restore_store(store: StorePath, request: Request, caller: CallerDep) -> Response:
    first = common_pb2.ArchiveChunk(store=common_pb2.StoreContext(name=store))
    restore = caller.gateway.operation("restore_store")
    info = await restore(caller.principal, first, request.stream())
    return reply(info, status_code=201)
