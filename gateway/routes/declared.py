"""The REST routes the protos declare: one per operation whose RPC carries an `http` option
(`(engram.v1.operation).http`, protos/engram/v1/options.proto). Each is the same thin
translation the hand-written routes make — path, query or body → request proto → the gateway
operation → JSON — built from the operation table, so such an operation is added by
annotating its RPC and nothing here (decision 0016)."""

import inspect
import re
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Path, Request, Response

from gateway.core.operations import OPERATIONS, HttpRoute, Operation, message_class
from gateway.deps import PATH_DESCRIPTIONS, CallerDep
from gateway.routes._proto import ProtoOp

Endpoint = Callable[..., Awaitable[Response]]


def proto_op(op: Operation, http: HttpRoute) -> ProtoOp[Any]:
    """Where the operation's request comes from and what it answers, for parsing and OpenAPI."""
    request = message_class(op.request)
    return ProtoOp(
        request,
        message_class(op.response),
        path_fields=http.path_fields,
        query=http.query,
        body=http.body,
        store_field=op.store_field,
    )


def _endpoint(op: Operation, http: HttpRoute, proto: ProtoOp[Any]) -> Endpoint:
    async def endpoint(request: Request, caller: Any, **path: str) -> Response:
        store = path.pop("store", None)  # where it goes: `proto.store_field`
        operation = caller.gateway.operation(op.name)
        answer: Response = await caller.run(
            proto, request, operation, store=store, status_code=http.status, **path
        )
        return answer

    parameters = []
    for name in re.findall(r"{(\w+)}", http.path):
        if name not in PATH_DESCRIPTIONS:
            raise ValueError(f"{op.name}: path parameter {name!r} has no description")
        annotation = Annotated[str, Path(description=PATH_DESCRIPTIONS[name])]
        parameters.append(
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation)
        )
    parameters += [
        inspect.Parameter("request", inspect.Parameter.KEYWORD_ONLY, annotation=Request),
        inspect.Parameter("caller", inspect.Parameter.KEYWORD_ONLY, annotation=CallerDep),
    ]
    endpoint.__signature__ = inspect.Signature(parameters, return_annotation=Response)  # type: ignore[attr-defined]
    endpoint.__name__ = endpoint.__qualname__ = op.name
    endpoint.__doc__ = http.summary
    return endpoint


def _order(op: Operation) -> tuple[int, str]:
    """Literal paths before parameterised ones, so `/drawers/signed` is never read as an id."""
    assert op.http is not None
    return (len(op.http.path_fields), op.http.path)


def declared_router() -> APIRouter:
    """Every declared route, under /v1."""
    router = APIRouter(prefix="/v1")
    for op in sorted((o for o in OPERATIONS.values() if o.http is not None), key=_order):
        http = op.http
        assert http is not None
        proto = proto_op(op, http)
        router.add_api_route(
            http.path,
            _endpoint(op, http, proto),
            methods=[http.method],
            tags=[http.tag],
            name=op.name,
            **proto.route(summary=http.summary, status_code=http.status),
        )
    return router


router = declared_router()
