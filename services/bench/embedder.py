"""Embedder throughput: in-process `encode` vs through gRPC, batch sizes, concurrency, batching
on vs off, and the CPU thread-count choice."""

from __future__ import annotations

import asyncio
import os
import random
import socket
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from engram.v1 import embedder_pb2, embedder_pb2_grpc

from services.bench.report import markdown_table
from services.embedder.core import EmbeddingModel, load_model, resolve_model_path
from services.launcher.supervisor import spawn_tier, stop_process_group, wait_until_serving
from services.launcher.tiers import TIERS
from services.runtime.grpc_client import ClientPolicy, create_channel

_SUBJECTS = ["The architect", "The engineer", "Kyle", "The foreman", "The on-call agent", "Marco"]
_VERBS = ["decided that", "noticed that", "prefers that", "wants to confirm that", "recorded that"]
_OBJECTS = [
    "the retrieval tier keeps its FTS5 sidecar next to the Qdrant shard",
    "uploads over fifty megabytes are rejected before anything is written",
    "the nightly compaction job should run after the backup finishes",
    "warm tomatoes are not welcome in any dinner suggestion",
    "deprecated drawers must not outrank the decision that replaced them",
    "the embedder batches concurrent requests into a single model call",
]


def sentences(n: int, seed: int = 7) -> list[str]:
    """Realistic drawer-length sentences (15-25 words), deterministic."""
    rng = random.Random(seed)
    return [
        f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)} (note {i})."
        for i in range(n)
    ]


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("nan")


def in_process(model: EmbeddingModel, batch: int, total: int) -> float:
    """Sentences/s of `model.encode` called directly with batches of `batch`."""
    texts = sentences(total)
    model.encode(texts[:batch], batch_size=batch)  # warm this shape
    started = time.perf_counter()
    for offset in range(0, total, batch):
        model.encode(texts[offset : offset + batch], batch_size=batch)
    return _rate(total, time.perf_counter() - started)


async def _timed(work: Callable[[], Awaitable[int]], warmup: Callable[[], Awaitable[int]]) -> float:
    await warmup()
    started = time.perf_counter()
    done = await work()
    return _rate(done, time.perf_counter() - started)


async def through_grpc_batches(target: str, batch: int, total: int) -> float:
    """Sentences/s when one client sends batches of `batch` through gRPC."""
    channel = create_channel(target, ClientPolicy(deadline_s=120))
    stub = embedder_pb2_grpc.EmbedderServiceStub(channel)
    texts = sentences(total)

    async def work() -> int:
        for offset in range(0, total, batch):
            await stub.Embed(embedder_pb2.EmbedRequest(texts=texts[offset : offset + batch]))
        return total

    async def warmup() -> int:
        await stub.Embed(embedder_pb2.EmbedRequest(texts=texts[:batch]))
        return batch

    try:
        return await _timed(work, warmup)
    finally:
        await channel.close()


async def concurrent_singles(target: str, clients: int, per_client: int) -> float:
    """Sentences/s when `clients` callers each send single sentences back to back."""
    channel = create_channel(target, ClientPolicy(deadline_s=120))
    stub = embedder_pb2_grpc.EmbedderServiceStub(channel)
    texts = sentences(clients * per_client)

    async def client(index: int) -> int:
        for j in range(per_client):
            text = texts[index * per_client + j]
            await stub.Embed(embedder_pb2.EmbedRequest(texts=[text]))
        return per_client

    async def work() -> int:
        return sum(await asyncio.gather(*(client(i) for i in range(clients))))

    async def warmup() -> int:
        await stub.Embed(embedder_pb2.EmbedRequest(texts=texts[:1]))
        return 1

    try:
        return await _timed(work, warmup)
    finally:
        await channel.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class EmbedderProcess:
    """A real embedder tier process for the through-gRPC figures."""

    def __init__(self, *, batching: bool, threads: int, log_dir: Path) -> None:
        self.spec = next(t for t in TIERS if t.name == "embedder")
        self.port = _free_port()
        env = dict(os.environ)
        env.update(
            ENGRAM_EMBEDDER_PORT=str(self.port),
            ENGRAM_EMBEDDER_ALLOW_CPU="1",
            ENGRAM_EMBEDDER_DYNAMIC_BATCHING="1" if batching else "0",
            ENGRAM_EMBEDDER_TORCH_THREADS=str(threads),
            ENGRAM_EMBEDDER_MAX_TEXTS="1024",
        )
        self.log = log_dir / f"embedder-batching-{batching}.log"
        self.process = spawn_tier(self.spec, env, self.log)
        wait_until_serving(self.process, self.spec, "127.0.0.1", self.port, self.log, 180)

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        stop_process_group(self.process, 10)


def run(quick: bool, threads: int = 1) -> dict[str, Any]:
    """Every embedder figure; returns rows plus a markdown rendering."""
    total = 256 if quick else 1024
    per_client = 4 if quick else 16
    batches = [1, 16, 64, 256]
    path = resolve_model_path("")
    results: dict[str, Any] = {"threads": threads, "in_process": {}, "grpc": {}, "concurrent": {}}

    thread_rows = []
    for candidate in sorted({1, 2, os.cpu_count() or 2}):
        model = load_model(path, device="cpu", fp16=False, torch_threads=candidate)
        single = in_process(model, 1, 64 if quick else 256)
        batch64 = in_process(model, 64, total)
        thread_rows.append([candidate, single, batch64])
        results.setdefault("threads_choice", {})[candidate] = {"single": single, "batch64": batch64}
    model = load_model(path, device="cpu", fp16=False, torch_threads=threads)
    for batch in batches:
        count = total if batch > 1 else min(total, 256)
        results["in_process"][batch] = in_process(model, batch, count)

    with tempfile.TemporaryDirectory() as logs:
        for batching in (True, False):
            server = EmbedderProcess(batching=batching, threads=threads, log_dir=Path(logs))
            try:
                if batching:
                    for batch in batches:
                        count = total if batch > 1 else min(total, 256)
                        results["grpc"][batch] = asyncio.run(
                            through_grpc_batches(server.target, batch, count)
                        )
                for clients in (1, 8, 32):
                    key = f"{clients}:{'on' if batching else 'off'}"
                    results["concurrent"][key] = asyncio.run(
                        concurrent_singles(server.target, clients, per_client)
                    )
            finally:
                server.stop()

    rows = [
        [
            b,
            results["in_process"][b],
            results["grpc"][b],
            results["grpc"][b] / results["in_process"][b],
        ]
        for b in batches
    ]
    conc = [
        [
            c,
            results["concurrent"][f"{c}:off"],
            results["concurrent"][f"{c}:on"],
            results["concurrent"][f"{c}:on"] / results["concurrent"]["1:off"],
        ]
        for c in (1, 8, 32)
    ]
    results["markdown"] = "\n\n".join(
        [
            f"### Embedder throughput (sentences/s, CPU, torch threads = {threads})",
            markdown_table(
                ["batch", "in-process encode", "through gRPC", "gRPC / in-process"], rows
            ),
            markdown_table(
                [
                    "concurrent single-text clients",
                    "batching off",
                    "batching on",
                    "on / unbatched single client",
                ],
                conc,
            ),
            "### torch thread count (in-process, sentences/s)",
            markdown_table(["threads", "batch 1", "batch 64"], thread_rows),
        ]
    )
    return results
