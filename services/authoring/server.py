"""The authoring tier's gRPC server factory."""

from __future__ import annotations

import grpc
from engram.v1 import authoring_pb2, authoring_pb2_grpc

from services.authoring.deps import AuthoringDeps
from services.authoring.servicer import AuthoringServicer
from services.authoring.settings import AuthoringSettings
from services.runtime.grpc_server import TierServer, build_server

SERVICE_NAME = authoring_pb2.DESCRIPTOR.services_by_name["AuthoringService"].full_name


def create_server(settings: AuthoringSettings, deps: AuthoringDeps) -> TierServer:
    """Build the authoring server (not started). `.port` is the bound port."""

    def register(server: grpc.aio.Server) -> None:
        authoring_pb2_grpc.add_AuthoringServiceServicer_to_server(AuthoringServicer(deps), server)

    return build_server(settings, tier="authoring", register=register, service_names=[SERVICE_NAME])
