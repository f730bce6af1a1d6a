"""A real corpus tier in-process (embedded Qdrant Edge, FTS5, SQLite catalog, the real model via
the embedder tier over gRPC, the ingest worker on real Redis), on 127.0.0.1:0."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import redis
from engram.v1 import common_pb2, corpus_pb2, corpus_pb2_grpc

from services.corpus.__main__ import build_deps, build_worker
from services.corpus.deps import CorpusDeps
from services.corpus.server import create_server
from services.corpus.settings import CorpusSettings
from services.embedder.client import EmbedderClient
from services.runtime.grpc_server import TierServer
from services.runtime.jobs import JobWorker, is_terminal
from services.runtime.settings import StorageSettings

STORE = common_pb2.StoreContext(name="corpus-test")


@dataclass
class RunningCorpus:
    tier: TierServer
    deps: CorpusDeps
    worker: JobWorker
    worker_task: asyncio.Task[None]
    stub: corpus_pb2_grpc.CorpusServiceStub
    channel: grpc.aio.Channel

    async def upload(
        self, name: str, data: bytes, folder: str = "", piece: int = 64 * 1024
    ) -> corpus_pb2.CorpusFile:
        async def chunks() -> AsyncIterator[corpus_pb2.UploadFileChunk]:
            yield corpus_pb2.UploadFileChunk(
                header=corpus_pb2.UploadFileHeader(store=STORE, name=name, folder=folder)
            )
            for start in range(0, len(data), piece):
                yield corpus_pb2.UploadFileChunk(data=data[start : start + piece])

        return await self.stub.UploadFile(chunks())

    async def wait_job(self, job_id: str, timeout_s: float = 120) -> common_pb2.Job:
        """Poll the job until it ends (bounded)."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while True:
            record = await self.deps.jobs.get(job_id)
            if is_terminal(record):
                return record
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"job {job_id} still {record.state} after {timeout_s} s")
            await asyncio.sleep(0.1)


def corpus_settings(data_dir: Path, redis_url: str, queue: str, **extra: object) -> CorpusSettings:
    return CorpusSettings(
        host="127.0.0.1",
        port=0,
        data_dir=data_dir,
        redis_url=redis_url,
        job_queue=queue,
        **extra,  # type: ignore[arg-type]
    )


@pytest.fixture
async def corpus(
    tmp_path: Path, embedder_addr: str, redis_url: str
) -> AsyncIterator[RunningCorpus]:
    queue = f"test:corpus:{uuid.uuid4().hex[:8]}"
    settings = corpus_settings(tmp_path / "corpus", redis_url, queue, job_lease_s=5.0)
    embedder = EmbedderClient(embedder_addr)
    deps = build_deps(settings, StorageSettings(vector_backend="edge"), embedder)
    info = await embedder.info()
    deps.stores.set_embedding(info.model, info.fingerprint, info.dimension)
    await deps.jobs.connect()
    worker = build_worker(deps)
    worker_task = asyncio.create_task(worker.run())
    tier = create_server(settings, deps)
    await tier.start()
    await tier.set_serving(True)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{tier.port}")
    running = RunningCorpus(
        tier, deps, worker, worker_task, corpus_pb2_grpc.CorpusServiceStub(channel), channel
    )
    yield running
    await channel.close()
    await tier.stop(0.5)
    await worker.close()
    await asyncio.gather(worker_task, return_exceptions=True)
    await deps.jobs.close()
    deps.stores.close()
    await embedder.close()
    client = redis.Redis.from_url(redis_url)
    keys = list(client.scan_iter(f"*{queue}*"))
    if keys:
        client.delete(*keys)
    client.close()
