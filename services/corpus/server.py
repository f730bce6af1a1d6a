"""The corpus tier's gRPC server factory."""

from __future__ import annotations

import grpc
from engram.v1 import corpus_pb2, corpus_pb2_grpc

from services.corpus.deps import CorpusDeps
from services.corpus.servicer import CorpusServicer
from services.corpus.settings import CorpusSettings
from services.runtime.grpc_server import TierServer, build_server

SERVICE_NAME = corpus_pb2.DESCRIPTOR.services_by_name["CorpusService"].full_name


def create_server(settings: CorpusSettings, deps: CorpusDeps) -> TierServer:
    """Build the corpus server (not started). `.port` is the bound port."""

    def register(server: grpc.aio.Server) -> None:
        corpus_pb2_grpc.add_CorpusServiceServicer_to_server(CorpusServicer(deps), server)

    return build_server(settings, tier="corpus", register=register, service_names=[SERVICE_NAME])
