"""Recording a retrieval: the drawer named by the path fills a repeated field, which no
declared route does (the other search operations are declared, `gateway.routes.declared`)."""

from __future__ import annotations

from engram.v1 import retrieval_pb2
from fastapi import APIRouter, Request, Response

from gateway.deps import CallerDep, IdPath, StorePath
from gateway.routes._proto import ProtoOp, reply

router = APIRouter(prefix="/v1/stores/{store}", tags=["search"])

RECORD = ProtoOp(
    retrieval_pb2.RecordRetrievalRequest,
    retrieval_pb2.RecordRetrievalResponse,
    path_fields=("drawer_ids",),
)


@router.post("/drawers/{id}:record-retrieval", **RECORD.route(summary="report a drawer as used"))
async def record_retrieval(
    store: StorePath, id: IdPath, request: Request, caller: CallerDep
) -> Response:
    message = await RECORD.parse(request, limit=caller.body_limit, store=store)
    message.drawer_ids[:] = [id]
    record = caller.gateway.operation("record_retrieval")
    return reply(await record(caller.principal, message))
