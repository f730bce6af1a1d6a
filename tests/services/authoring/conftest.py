"""The authoring tier in-process over real gRPC, with the tiers it writes through: a real
retrieval tier (Qdrant Edge + FTS5), a real corpus tier with its ingest worker, the compose
worker on real Redis, and the real model behind the embedder tier."""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import grpc
import pytest
import redis
from engram.v1 import (
    authoring_pb2,
    authoring_pb2_grpc,
    common_pb2,
    corpus_pb2,
    corpus_pb2_grpc,
    retrieval_pb2,
    retrieval_pb2_grpc,
)

from services.authoring.__main__ import build_deps, build_worker
from services.authoring.deps import AuthoringDeps
from services.authoring.invokers import ApiKeys
from services.authoring.server import create_server
from services.authoring.settings import AuthoringSettings
from services.corpus.__main__ import build_deps as build_corpus_deps
from services.corpus.__main__ import build_worker as build_corpus_worker
from services.corpus.server import create_server as create_corpus_server
from services.embedder.client import EmbedderClient
from services.runtime.jobs import JobQueue, is_terminal
from services.runtime.settings import StorageSettings
from tests.services.corpus.conftest import corpus_settings
from tests.services.retrieval.conftest import start_retrieval, stop_retrieval

STORE = "authoring-test"
TIERS = {
    "read": common_pb2.CALLER_TIER_READ,
    "write": common_pb2.CALLER_TIER_WRITE,
    "admin": common_pb2.CALLER_TIER_ADMIN,
}


@dataclass
class Stack:
    authoring: authoring_pb2_grpc.AuthoringServiceStub
    retrieval: retrieval_pb2_grpc.RetrievalServiceStub
    corpus: corpus_pb2_grpc.CorpusServiceStub
    deps: AuthoringDeps
    corpus_jobs: JobQueue
    # Where each tier listens (host:port by tier name) and the job queues, for a gateway
    # pointed at this stack.
    addresses: dict[str, str] = field(default_factory=dict)
    corpus_queue: str = ""
    authoring_queue: str = ""

    def store(
        self, tier: str = "write", *, mode: str = "default", name: str = STORE
    ) -> common_pb2.StoreContext:
        return common_pb2.StoreContext(
            name=name,
            deployment_mode=common_pb2.DEPLOYMENT_MODE_COMPANION
            if mode == "companion"
            else common_pb2.DEPLOYMENT_MODE_DEFAULT,
            caller_tier=TIERS[tier],
            caller_id=f"{tier}-token",
        )

    async def count(self, name: str = STORE) -> int:
        answer = await self.retrieval.ListDrawers(
            retrieval_pb2.ListDrawersRequest(store=self.store(name=name))
        )
        return int(answer.page.total)

    async def upload(self, name: str, data: bytes) -> corpus_pb2.CorpusFile:
        async def chunks() -> AsyncIterator[corpus_pb2.UploadFileChunk]:
            yield corpus_pb2.UploadFileChunk(
                header=corpus_pb2.UploadFileHeader(store=self.store(), name=name)
            )
            yield corpus_pb2.UploadFileChunk(data=data)

        return await self.corpus.UploadFile(chunks())

    async def wait(self, jobs: JobQueue, job_id: str, timeout_s: float = 120) -> common_pb2.Job:
        deadline = asyncio.get_running_loop().time() + timeout_s
        while True:
            record = await jobs.get(job_id)
            if is_terminal(record):
                return record
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"job {job_id} still {record.state} after {timeout_s} s")
            await asyncio.sleep(0.1)

    async def ingest(self, name: str, data: bytes) -> corpus_pb2.CorpusFile:
        uploaded = await self.upload(name, data)
        job = await self.corpus.IngestFiles(
            corpus_pb2.IngestFilesRequest(store=self.store(), file_ids=[uploaded.id])
        )
        record = await self.wait(self.corpus_jobs, job.id)
        assert record.state == common_pb2.JOB_STATE_DONE, record
        return uploaded

    async def compose(self, **fields: object) -> common_pb2.Job:
        tier = str(fields.pop("tier", "write"))
        job = await self.authoring.Compose(
            authoring_pb2.ComposeRequest(store=self.store(tier), **fields)  # type: ignore[arg-type]
        )
        return await self.wait(self.deps.jobs, job.id)


@asynccontextmanager
async def running_stack(
    root: Path,
    embedder_addr: str,
    redis_url: str,
    suffix: str,
    *,
    keys: ApiKeys | None = None,
) -> AsyncIterator[Stack]:
    """Every tier of the stack over `root` and the job queues named by `suffix`; started
    again over the same `root` and `suffix`, it is the same stack after a restart. `keys`
    are the authoring tier's provider keys (default: a test OpenAI key)."""
    corpus_queue, authoring_queue = f"test:corpus:{suffix}", f"test:authoring:{suffix}"
    retrieval = await start_retrieval(root / "retrieval", embedder_addr)

    corpus_embedder = EmbedderClient(embedder_addr)
    corpus_deps = build_corpus_deps(
        corpus_settings(root / "corpus", redis_url, corpus_queue, job_lease_s=5.0),
        StorageSettings(vector_backend="edge"),
        corpus_embedder,
    )
    info = await corpus_embedder.info()
    corpus_deps.stores.set_embedding(info.model, info.fingerprint, info.dimension)
    await corpus_deps.jobs.connect()
    corpus_worker = build_corpus_worker(corpus_deps)
    corpus_task = asyncio.create_task(corpus_worker.run())
    corpus_tier = create_corpus_server(corpus_deps.settings, corpus_deps)
    await corpus_tier.start()
    await corpus_tier.set_serving(True)

    settings = AuthoringSettings(
        host="127.0.0.1",
        port=0,
        data_dir=root / "authoring",
        redis_url=redis_url,
        job_queue=authoring_queue,
        job_lease_s=10.0,
        retrieval_addr=f"127.0.0.1:{retrieval.tier.port}",
        corpus_addr=f"127.0.0.1:{corpus_tier.port}",
    )
    to_corpus = grpc.aio.insecure_channel(f"127.0.0.1:{corpus_tier.port}")
    authoring_embedder = EmbedderClient(embedder_addr)
    deps = build_deps(
        settings,
        embedder=authoring_embedder,
        keys=keys if keys is not None else ApiKeys({"OPENAI_API_KEY": "sk-test-authoring-key"}),
    )
    await deps.jobs.connect()
    worker = build_worker(deps)
    worker_task = asyncio.create_task(worker.run())
    tier = create_server(settings, deps)
    await tier.start()
    await tier.set_serving(True)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{tier.port}")
    try:
        yield Stack(
            authoring_pb2_grpc.AuthoringServiceStub(channel),
            retrieval.stub,
            corpus_pb2_grpc.CorpusServiceStub(to_corpus),
            deps,
            corpus_deps.jobs,
            addresses={
                "retrieval": f"127.0.0.1:{retrieval.tier.port}",
                "corpus": f"127.0.0.1:{corpus_tier.port}",
                "authoring": f"127.0.0.1:{tier.port}",
            },
            corpus_queue=corpus_queue,
            authoring_queue=authoring_queue,
        )
    finally:
        await channel.close()
        await tier.stop(0.5)
        await worker.close()
        await asyncio.gather(worker_task, return_exceptions=True)
        await deps.jobs.close()
        await deps.close()
        await to_corpus.close()
        await authoring_embedder.close()
        await corpus_tier.stop(0.5)
        await corpus_worker.close()
        await asyncio.gather(corpus_task, return_exceptions=True)
        await corpus_deps.jobs.close()
        corpus_deps.stores.close()
        await corpus_embedder.close()
        await stop_retrieval(retrieval)


def clean_queues(redis_url: str, suffix: str) -> None:
    """Remove the job queues `running_stack` made for `suffix` from Redis."""
    client = redis.Redis.from_url(redis_url)
    for queue in (f"test:corpus:{suffix}", f"test:authoring:{suffix}"):
        keys = list(client.scan_iter(f"*{queue}*"))
        if keys:
            client.delete(*keys)
    client.close()


@pytest.fixture
async def stack(tmp_path: Path, embedder_addr: str, redis_url: str) -> AsyncIterator[Stack]:
    suffix = uuid.uuid4().hex[:8]
    try:
        async with running_stack(tmp_path, embedder_addr, redis_url, suffix) as running:
            yield running
    finally:
        clean_queues(redis_url, suffix)


class FakeProvider(BaseHTTPRequestHandler):
    """The far end of an OpenAI-compatible chat API answering with a fixed message."""

    answer = ""
    asked = 0  # requests answered

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        type(self).asked += 1
        body = json.dumps(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 1,
                "model": "test-model",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": type(self).answer},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def provider() -> Iterator[tuple[str, type[FakeProvider]]]:
    handler = type("Provider", (FakeProvider,), {})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", handler
    server.shutdown()
    server.server_close()
