"""Run the corpus tier: `engram-corpus` or `python -m services.corpus`. The process serves gRPC
and runs the ingest job worker (it owns the stores' shards, so ingests run where they live)."""

from __future__ import annotations

import asyncio

from services.corpus.deps import CorpusDeps
from services.corpus.ingest import INGEST_KIND, ingest_handler
from services.corpus.reembed import REEMBED_KIND, reembed_handler
from services.corpus.server import create_server
from services.corpus.settings import CorpusSettings
from services.corpus.store import corpus_registry
from services.embedder.client import EmbedderClient
from services.runtime.jobs import JobQueue, JobWorker
from services.runtime.lifecycle import serve_until_signalled
from services.runtime.logs import configure_logging
from services.runtime.settings import StorageSettings
from services.runtime.tracing import configure_tracing


def build_deps(
    settings: CorpusSettings, storage: StorageSettings, embedder: EmbedderClient
) -> CorpusDeps:
    """Wire the corpus tier (shared with the tests); stores open once the dimension is known."""
    stores = corpus_registry(
        settings.data_dir,
        backend=storage.vector_backend,
        qdrant_url=storage.qdrant_url,
        qdrant_api_key=storage.qdrant_api_key,
        qdrant_topology=storage.qdrant_topology(),
    )
    jobs = JobQueue(
        settings.redis_url, queue_name=settings.replica_queue, max_queued=settings.job_max_queued
    )
    return CorpusDeps(settings=settings, stores=stores, embedder=embedder, jobs=jobs)


def build_worker(deps: CorpusDeps) -> JobWorker:
    """The ingest worker of this process."""
    return JobWorker(
        deps.settings.redis_url,
        deps.settings.replica_queue,
        {
            INGEST_KIND: ingest_handler(deps.stores, deps.embedder, deps.chunk_options),
            REEMBED_KIND: reembed_handler(deps.stores, deps.embedder),
        },
        max_jobs=deps.settings.ingest_concurrency,
        lease_s=deps.settings.job_lease_s,
        max_tries=deps.settings.job_max_tries,
        retry_delay_s=deps.settings.job_retry_delay_s,
    )


async def _serve(settings: CorpusSettings, storage: StorageSettings) -> None:
    embedder = EmbedderClient(settings.embedder_addr)
    deps = build_deps(settings, storage, embedder)
    tier = create_server(settings, deps)
    tier.metrics.serve(settings.metrics_port, settings.host)
    worker = build_worker(deps)
    worker_task: asyncio.Task[None] | None = None

    async def ready() -> None:
        nonlocal worker_task
        info = await embedder.wait_until_ready(settings.embedder_addr)
        deps.stores.set_embedding(info.model, info.fingerprint, info.dimension)
        await deps.jobs.connect()
        worker_task = asyncio.create_task(worker.run())
        await tier.set_serving(True)

    async def close() -> None:
        await worker.close()
        if worker_task is not None:
            await asyncio.gather(worker_task, return_exceptions=True)
        await deps.jobs.close()
        deps.stores.close()
        await embedder.close()

    await serve_until_signalled(
        tier, grace_s=settings.shutdown_grace_s, on_started=ready, on_stopping=close
    )


def main() -> None:
    settings = CorpusSettings()
    storage = StorageSettings()
    configure_logging("corpus", level=settings.log_level, fmt=settings.log_format)
    configure_tracing("corpus")
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    asyncio.run(_serve(settings, storage))


if __name__ == "__main__":
    main()
