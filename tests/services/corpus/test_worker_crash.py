"""A corpus process killed in the middle of an ingest job: another one picks the job up, and the
end state is exactly that of a single run (no duplicate or orphan chunks)."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import uuid
from pathlib import Path

import grpc
import pytest
import redis
from engram.v1 import common_pb2, corpus_pb2, corpus_pb2_grpc

from services.corpus.core import ChunkOptions, chunk_file, detect_type
from services.corpus.settings import CorpusSettings
from services.corpus.store import CorpusStore
from services.launcher.supervisor import spawn_tier, stop_process_group, wait_until_serving
from services.launcher.tiers import TIERS
from services.runtime.jobs import JobQueue, is_terminal
from tests.ports import free_port
from tests.services.corpus.conftest import STORE

SPEC = next(t for t in TIERS if t.name == "corpus")


def _document(n: int) -> bytes:
    paragraphs = [
        f"Paragraph {i} of document {n}: the team discussed shard {i % 7} placement, "
        f"backup window {i % 5} and the retention of snapshot {i}. " * 3
        for i in range(60)
    ]
    return "\n\n".join(paragraphs).encode()


@pytest.mark.slow
async def test_killed_worker_job_is_retried_and_ends_as_if_run_once(
    tmp_path: Path, embedder_addr: str, redis_url: str
) -> None:
    queue = f"test:crash:{uuid.uuid4().hex[:8]}"
    port = free_port()
    env = dict(os.environ)
    env.update(
        ENGRAM_CORPUS_PORT=str(port),
        ENGRAM_CORPUS_HOST="127.0.0.1",
        ENGRAM_CORPUS_DATA_DIR=str(tmp_path / "corpus"),
        ENGRAM_CORPUS_REDIS_URL=redis_url,
        ENGRAM_CORPUS_JOB_QUEUE=queue,
        ENGRAM_CORPUS_JOB_LEASE_S="2",
        ENGRAM_CORPUS_INGEST_CONCURRENCY="1",
        ENGRAM_CORPUS_EMBEDDER_ADDR=embedder_addr,
        ENGRAM_CORPUS_LOG_FORMAT="text",
    )

    async def start(tag: str) -> object:
        process = spawn_tier(SPEC, env, tmp_path / f"corpus-{tag}.log")
        await asyncio.to_thread(
            wait_until_serving,
            process,
            SPEC,
            "127.0.0.1",
            port,
            tmp_path / f"corpus-{tag}.log",
            120,
        )
        return process

    documents = {f"doc{n}.txt": _document(n) for n in range(4)}
    first = await start("a")
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stub = corpus_pb2_grpc.CorpusServiceStub(channel)
    jobs = JobQueue(redis_url, queue_name=queue)
    await jobs.connect()
    try:
        ids = []
        for name, data in documents.items():

            async def chunks(data: bytes = data, name: str = name):  # type: ignore[no-untyped-def]
                yield corpus_pb2.UploadFileChunk(
                    header=corpus_pb2.UploadFileHeader(store=STORE, name=name)
                )
                yield corpus_pb2.UploadFileChunk(data=data)

            ids.append((await stub.UploadFile(chunks())).id)
        job = await stub.IngestFiles(corpus_pb2.IngestFilesRequest(store=STORE, file_ids=ids))

        deadline = asyncio.get_running_loop().time() + 120
        while True:  # kill it once it is inside the job, past the first file
            record = await jobs.get(job.id)
            if record.state == common_pb2.JOB_STATE_RUNNING and record.progress.items_done >= 1:
                break
            assert record.state in (common_pb2.JOB_STATE_QUEUED, common_pb2.JOB_STATE_RUNNING), (
                f"job ended early: {record}"
            )
            assert asyncio.get_running_loop().time() < deadline, "job never got going"
            await asyncio.sleep(0.05)
        os.killpg(first.pid, signal.SIGKILL)  # type: ignore[attr-defined]
        await asyncio.to_thread(first.wait)  # type: ignore[attr-defined]
        await channel.close()

        second = await start("b")
        try:
            deadline = asyncio.get_running_loop().time() + 120
            while not is_terminal(record := await jobs.get(job.id)):
                assert asyncio.get_running_loop().time() < deadline, f"job stuck: {record}"
                await asyncio.sleep(0.1)
            assert record.state == common_pb2.JOB_STATE_DONE, f"{record.state}: {record.error}"
            assert record.attempts == 2, f"expected one retry, saw {record.attempts} attempts"
        finally:
            stop_process_group(second, 10)  # type: ignore[arg-type]
    finally:
        await jobs.close()
        if first.poll() is None:  # type: ignore[attr-defined]
            stop_process_group(first, 5)  # type: ignore[arg-type]
        client = redis.Redis.from_url(redis_url)
        keys = list(client.scan_iter(f"*{queue}*"))
        if keys:
            client.delete(*keys)
        client.close()

    defaults = CorpusSettings()
    options = ChunkOptions(
        window_chars=defaults.text_window_chars,
        overlap_chars=defaults.text_overlap_chars,
        max_chunk_chars=defaults.max_chunk_chars,
    )
    expected = {
        name: len(
            list(
                chunk_file(detect_type(name, data[:8192]), io.BytesIO(data), options=options).chunks
            )
        )
        for name, data in documents.items()
    }
    store = CorpusStore.open(tmp_path / "corpus" / STORE.name, 384)
    try:
        by_name = {r.name: r for r in store.catalog.files()}
        for name, count in expected.items():
            record_ = by_name[name]
            assert record_.state == "ingested", f"{name} is {record_.state}"
            stored = store.raw.of_file(record_.id)
            assert len(stored) == count == record_.chunk_count, (
                f"{name}: {len(stored)} chunks stored, catalog says {record_.chunk_count}, "
                f"a single run makes {count}"
            )
        assert store.raw.count() == sum(expected.values()), "no duplicate or orphan chunks"
    finally:
        store.close()
