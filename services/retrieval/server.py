"""The retrieval tier's gRPC server factory."""

from __future__ import annotations

import grpc
from engram.v1 import retrieval_pb2, retrieval_pb2_grpc

from services.retrieval.deps import RetrievalDeps
from services.retrieval.servicer import RetrievalServicer
from services.retrieval.settings import RetrievalSettings
from services.runtime.grpc_server import TierServer, build_server

SERVICE_NAME = retrieval_pb2.DESCRIPTOR.services_by_name["RetrievalService"].full_name


def create_server(settings: RetrievalSettings, deps: RetrievalDeps) -> TierServer:
    """Build the retrieval server (not started). `.port` is the bound port."""

    def register(server: grpc.aio.Server) -> None:
        retrieval_pb2_grpc.add_RetrievalServiceServicer_to_server(RetrievalServicer(deps), server)

    return build_server(settings, tier="retrieval", register=register, service_names=[SERVICE_NAME])
