"""Typed FastAPI dependencies of the routes: the gateway core, the caller, the settings.

Every dependency is `async def`: FastAPI runs a plain `def` dependency in its thread pool,
and that hand-off cost more per request than the work (attribute reads, and one indexed
SQLite read for the token, which the MCP and gRPC faces also do on the loop)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, Any, Final, TypeVar

from fastapi import Depends, Path, Request
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from google.protobuf.message import Message

from gateway.core.principal import Principal
from gateway.core.service import Gateway
from gateway.routes._proto import ProtoOp, reply
from gateway.settings import GatewaySettings
from services.runtime.errors import Unauthenticated

Req = TypeVar("Req", bound=Message)

_bearer = HTTPBearer(auto_error=False, description="a token from `engram token create`")


async def get_settings(request: Request) -> GatewaySettings:
    settings: GatewaySettings = request.app.state.settings
    return settings


async def get_gateway(request: Request) -> Gateway:
    gateway: Gateway = request.app.state.gateway
    return gateway


SettingsDep = Annotated[GatewaySettings, Depends(get_settings)]
GatewayDep = Annotated[Gateway, Depends(get_gateway)]
Credentials = Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]


async def get_principal(gateway: GatewayDep, credentials: Credentials) -> Principal:
    """The caller of this request, from `Authorization: Bearer <token>`."""
    if credentials is None or not credentials.credentials:
        raise Unauthenticated(
            "this route needs Authorization: Bearer <token> (create one with engram token create)"
        )
    return gateway.authenticate(credentials.credentials)


PrincipalDep = Annotated[Principal, Depends(get_principal)]

# What each path parameter of a route is, for the OpenAPI document (declared routes take
# their parameters from here; a route whose path names another field does not start).
PATH_DESCRIPTIONS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "store": "the store's name (a slug)",
        "id": "the id",
        "drawer_id": "the drawer's id",
        "session_id": "the raw session's id",
        "file_id": "the file's id",
        "version": "a prompt version",
    }
)

StorePath = Annotated[str, Path(description=PATH_DESCRIPTIONS["store"])]
IdPath = Annotated[str, Path(description=PATH_DESCRIPTIONS["id"])]


@dataclass(frozen=True)
class Caller:
    """A route's view of one request: who calls, the core, the body limit."""

    gateway: Gateway
    principal: Principal
    body_limit: int
    upload_limit: int

    async def run(
        self,
        op: ProtoOp[Req],
        request: Request,
        operation: Callable[[Principal, Req], Awaitable[Message]],
        *,
        store: str | None = None,
        status_code: int = 200,
        **path: Any,
    ) -> JSONResponse:
        """Parse the request of `op`, run the gateway operation, answer its JSON."""
        message = await op.parse(request, limit=self.body_limit, store=store, **path)
        return reply(await operation(self.principal, message), status_code)


async def get_caller(gateway: GatewayDep, principal: PrincipalDep, settings: SettingsDep) -> Caller:
    return Caller(gateway, principal, settings.max_body_bytes, settings.max_upload_bytes)


CallerDep = Annotated[Caller, Depends(get_caller)]
