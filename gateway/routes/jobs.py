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
        # One event's shape (OpenAPI 3.1 reads `schema` as the per-event schema of an event
        # stream): `event: job`, an `id` counting up, and the Job as JSON in `data`.
        "content": {
            "text/event-stream": {
                "schema": {
                    "type": "object",
                    "required": ["event", "data"],
                    "properties": {
                        "event": {"type": "string", "enum": ["job"]},
                        "id": {"type": "string"},
                        "data": {
                            "type": "string",
                            "contentMediaType": "application/json",
                            "description": "the Job (as GET /v1/jobs/{id} answers it)",
                        },
                    },
                }
            }
        },
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
