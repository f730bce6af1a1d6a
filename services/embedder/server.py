"""The embedder's gRPC server factory."""

from __future__ import annotations

import grpc
from engram.v1 import embedder_pb2, embedder_pb2_grpc

from services.embedder.deps import EmbedderDeps
from services.embedder.servicer import EmbedderServicer
from services.embedder.settings import EmbedderSettings
from services.runtime.grpc_server import TierServer, build_server

SERVICE_NAME = embedder_pb2.DESCRIPTOR.services_by_name["EmbedderService"].full_name


def create_server(settings: EmbedderSettings, deps: EmbedderDeps) -> TierServer:
    """Build the embedder server (not started). `.port` is the bound port."""

    def register(server: grpc.aio.Server) -> None:
        embedder_pb2_grpc.add_EmbedderServiceServicer_to_server(EmbedderServicer(deps), server)

    return build_server(settings, tier="embedder", register=register, service_names=[SERVICE_NAME])
