"""A job's progress as Server-Sent Events (its status, the list and cancelling are declared
routes: `gateway.routes.declared`)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from engram.v1 import gateway_pb2
from fastapi import APIRouter, Request, Response
from sse_starlette import EventSourceResponse, ServerSentEvent

from gateway.deps import CallerDep, IdPath
from gateway.protojson import to_json
from gateway.routes._proto import ProtoOp

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])

EVENTS = ProtoOp(gateway_pb2.GetJobRequest, body=False, path_fields=("id",), store_field=None)

_SSE_ANSWER = {
    200: {
        "description": "`job` events, each the Job as JSON, until it is done, failed or cancelled",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}


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
