"""The embedder's gRPC server factory."""

from __future__ import annotations

import grpc
from engram.v1 import embedder_pb2, embedder_pb2_grpc

from services.embedder.core import EmbeddingModel
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


async def serve_loaded_model(
    model: EmbeddingModel, settings: EmbedderSettings
) -> tuple[TierServer, EmbedderDeps]:
    """Start an embedder tier that serves an already-loaded model (tests and in-process
    evaluation share one model load this way); the caller stops the tier and closes
    `deps.batcher`."""
    deps = EmbedderDeps(settings)
    tier = create_server(settings, deps)
    await tier.start()
    deps.attach(model).start()
    await tier.set_serving(True)
    return tier, deps
