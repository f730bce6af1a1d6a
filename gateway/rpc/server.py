"""The public gRPC server of the gateway process, built by the shared tier factory (error →
status interceptor, metrics, health, reflection) and run on the app's event loop."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Final

import grpc

from gateway.core.service import Gateway
from gateway.rpc.servicer import SERVICE, EngramServicer
from gateway.settings import GatewaySettings
from services.runtime.grpc_server import TierServer, build_server
from services.runtime.settings import TierSettings
from services.runtime.tls import TlsSettings

logger = logging.getLogger(__name__)

# In-flight RPCs (a job being watched, an upload) get this long to finish on shutdown.
STOP_GRACE_S: Final = 5.0


def create_server(settings: GatewaySettings, gateway: Gateway) -> TierServer:
    """The `engram.v1.Engram` server on `settings.host:settings.grpc_port`, not started."""

    def register(server: grpc.aio.Server) -> None:
        server.add_generic_rpc_handlers((EngramServicer(gateway).handler(),))

    # model_construct: the gateway's own settings say where to bind; a TierSettings built
    # normally would also read the tiers' ENGRAM_* variables.
    where = TierSettings.model_construct(host=settings.host, port=settings.grpc_port)
    # TLS as every tier serves it, but never asking public callers for a client certificate:
    # they authenticate with their token.
    tls = TlsSettings().model_copy(update={"require_client_cert": False})
    return build_server(
        where, tier="gateway", register=register, service_names=[SERVICE.full_name], tls=tls
    )


@contextlib.asynccontextmanager
async def serving_grpc(
    settings: GatewaySettings, gateway: Gateway
) -> AsyncIterator[TierServer | None]:
    """Serve the public gRPC API while the block runs; yields the running server (its `port`
    and `metrics`), or None when `grpc_enabled` is off. Health says SERVING once started,
    NOT_SERVING on the way out."""
    if not settings.grpc_enabled:
        yield None
        return
    server = create_server(settings, gateway)
    await server.start()
    await server.set_serving(True)
    logger.info("public gRPC (engram.v1.Engram) on %s:%d", settings.host, server.port)
    try:
        yield server
    finally:
        await server.stop(STOP_GRACE_S)
