"""A real retrieval tier in-process (embedded Qdrant Edge, FTS5, the real model via the embedder
tier over gRPC), on 127.0.0.1:0."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from engram.v1 import common_pb2, retrieval_pb2_grpc

from services.embedder.client import EmbedderClient
from services.retrieval.__main__ import build_deps
from services.retrieval.deps import RetrievalDeps
from services.retrieval.server import create_server
from services.retrieval.settings import RetrievalSettings
from services.runtime.grpc_server import TierServer
from services.runtime.settings import StorageSettings


@dataclass
class RunningRetrieval:
    tier: TierServer
    deps: RetrievalDeps
    stub: retrieval_pb2_grpc.RetrievalServiceStub
    channel: grpc.aio.Channel

    def store(
        self, name: str = "test", mode: str = "default", **kw: object
    ) -> common_pb2.StoreContext:
        deployment = (
            common_pb2.DEPLOYMENT_MODE_COMPANION
            if mode == "companion"
            else common_pb2.DEPLOYMENT_MODE_DEFAULT
        )
        return common_pb2.StoreContext(name=name, deployment_mode=deployment, **kw)  # type: ignore[arg-type]


async def start_retrieval(
    data_dir: Path, embedder_addr: str, **settings_overrides: object
) -> RunningRetrieval:
    settings = RetrievalSettings(
        host="127.0.0.1",
        port=0,
        data_dir=data_dir,
        **settings_overrides,  # type: ignore[arg-type]
    )
    embedder = EmbedderClient(embedder_addr)
    deps = build_deps(settings, StorageSettings(vector_backend="edge"), embedder)
    info = await embedder.info()
    deps.pools.set_embedding(info.model, info.fingerprint, info.dimension)
    tier = create_server(settings, deps)
    await tier.start()
    await tier.set_serving(True)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{tier.port}")
    return RunningRetrieval(tier, deps, retrieval_pb2_grpc.RetrievalServiceStub(channel), channel)


async def stop_retrieval(running: RunningRetrieval) -> None:
    await running.channel.close()
    await running.tier.stop(0.5)
    running.deps.pools.close()
    await running.deps.embedder.close()


@pytest.fixture
async def retrieval(tmp_path: Path, embedder_addr: str) -> AsyncIterator[RunningRetrieval]:
    running = await start_retrieval(tmp_path / "retrieval", embedder_addr)
    yield running
    await stop_retrieval(running)
