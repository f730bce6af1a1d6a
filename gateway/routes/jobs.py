"""Jobs (ingest and compose): status, list, cancel, and progress as Server-Sent Events."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from engram.v1 import common_pb2, gateway_pb2
from fastapi import APIRouter, Request, Response
from sse_starlette import EventSourceResponse, ServerSentEvent

from gateway.deps import CallerDep, IdPath
from gateway.protojson import to_json
from gateway.routes._proto import ProtoOp

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])

GET = ProtoOp(
    gateway_pb2.GetJobRequest, common_pb2.Job, body=False, path_fields=("id",), store_field=None
)
LIST = ProtoOp(
    gateway_pb2.ListJobsRequest,
    gateway_pb2.ListJobsResponse,
    body=False,
    query=("store", "limit"),
    store_field=None,
)
CANCEL = ProtoOp(
    gateway_pb2.CancelJobRequest, common_pb2.Job, body=False, path_fields=("id",), store_field=None
)
EVENTS = ProtoOp(gateway_pb2.GetJobRequest, body=False, path_fields=("id",), store_field=None)

_SSE_ANSWER = {
    200: {
        "description": "`job` events, each the Job as JSON, until it is done, failed or cancelled",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}


@router.get("", **LIST.route(summary="the newest jobs (of a store, or of every store in scope)"))
async def list_jobs(request: Request, caller: CallerDep) -> Response:
    return await caller.run(LIST, request, caller.gateway.list_jobs)


@router.get("/{id}", **GET.route(summary="a job's state and progress"))
async def get_job(id: IdPath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(GET, request, caller.gateway.get_job, id=id)


@router.post("/{id}:cancel", **CANCEL.route(summary="cancel a job"))
async def cancel_job(id: IdPath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(CANCEL, request, caller.gateway.cancel_job, id=id)


@router.get("/{id}/events", **EVENTS.route(summary="job progress (SSE)", responses=_SSE_ANSWER))
async def watch_job(id: IdPath, request: Request, caller: CallerDep) -> Response:
    message = await EVENTS.parse(request, limit=caller.body_limit, id=id)
    jobs = await caller.gateway.watch_job(caller.principal, message)

    async def events() -> AsyncIterator[ServerSentEvent]:
        sequence = 0
        async for job in jobs:
            sequence += 1
            yield ServerSentEvent(data=json.dumps(to_json(job)), event="job", id=str(sequence))

    return EventSourceResponse(events())
