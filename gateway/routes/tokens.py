"""Tokens (admin): create (the token is shown once), list, revoke."""

from __future__ import annotations

from engram.v1 import gateway_pb2
from fastapi import APIRouter, Request, Response

from gateway.deps import CallerDep, IdPath
from gateway.routes._proto import ProtoOp

router = APIRouter(prefix="/v1/tokens", tags=["tokens"])

CREATE = ProtoOp(gateway_pb2.CreateTokenRequest, gateway_pb2.CreateTokenResponse, store_field=None)
LIST = ProtoOp(
    gateway_pb2.ListTokensRequest, gateway_pb2.ListTokensResponse, store_field=None, body=False
)
REVOKE = ProtoOp(
    gateway_pb2.RevokeTokenRequest,
    gateway_pb2.RevokeTokenResponse,
    store_field=None,
    body=False,
    path_fields=("id",),
)


@router.post("", **CREATE.route(status_code=201, summary="create a token (shown once)"))
async def create_token(request: Request, caller: CallerDep) -> Response:
    return await caller.run(CREATE, request, caller.gateway.create_token, status_code=201)


@router.get("", **LIST.route(summary="tokens (never the tokens themselves)"))
async def list_tokens(request: Request, caller: CallerDep) -> Response:
    return await caller.run(LIST, request, caller.gateway.list_tokens)


@router.delete("/{id}", **REVOKE.route(summary="revoke a token"))
async def revoke_token(id: IdPath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(REVOKE, request, caller.gateway.revoke_token, id=id)
