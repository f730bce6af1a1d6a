"""`create_app(settings, deps)`: the gateway's HTTP face (REST /v1, OpenAPI at /openapi.json,
docs at /docs, MCP at /mcp, /healthz, /readyz, /metrics)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI

from gateway.core.service import gateway_version
from gateway.core.wiring import GatewayDeps
from gateway.errors import install_error_handlers
from gateway.mcp.server import install_mcp
from gateway.mcp.tools import parse_toolsets
from gateway.metrics import HttpMetrics, MetricsMiddleware
from gateway.openapi import build_openapi
from gateway.routes import ROUTERS
from gateway.rpc.server import serving_grpc
from gateway.settings import GatewaySettings
from gateway.tracing import TracingMiddleware

DESCRIPTION = """Engram's REST face. Authenticate with `Authorization: Bearer <token>`.
Bodies and answers are the proto3 JSON form of the `engram.v1` messages (proto field
names, enum value names); the store always comes from the path. Errors are
`{"error": {"code", "message", "details"}}`."""


def create_app(settings: GatewaySettings, deps: GatewayDeps | None = None) -> FastAPI:
    """The ASGI app. Its lifespan starts `deps` (lock, tokens, registry replay, channels),
    then the public gRPC server on the same event loop (`app.state.grpc_port`, its RPC metrics
    on `app.state.grpc_metrics`)."""
    deps = deps or GatewayDeps(settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.gateway = await deps.start()
        try:
            async with serving_grpc(settings, app.state.gateway) as grpc_server:
                app.state.grpc_port = grpc_server.port if grpc_server else None
                app.state.grpc_metrics = grpc_server.metrics if grpc_server else None
                yield
        finally:
            await deps.close()

    app = FastAPI(
        title="Engram",
        version=gateway_version(),
        description=DESCRIPTION,
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.deps = deps
    app.state.metrics = HttpMetrics()
    install_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    app.add_middleware(MetricsMiddleware, metrics=app.state.metrics)
    app.add_middleware(TracingMiddleware)  # outermost: the span covers the whole request
    # MCP authenticates its own requests (bearer token) and runs inside the app's lifespan,
    # after the core exists; it stays out of the OpenAPI document.
    install_mcp(app, lambda: app.state.gateway, toolsets=parse_toolsets(settings.mcp_tools))

    def openapi() -> dict[str, Any]:
        return build_openapi(app)

    app.openapi = openapi  # type: ignore[method-assign]
    return app
