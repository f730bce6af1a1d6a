"""Run the authoring tier: `engram-authoring` or `python -m services.authoring`. The process
serves gRPC and runs the compose job worker; it keeps no drawers (they live in retrieval)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engram.v1 import corpus_pb2_grpc, retrieval_pb2_grpc

from services.authoring.compose import COMPOSE_KIND, compose_handler
from services.authoring.consolidate import CONSOLIDATE_KIND, consolidate_handler
from services.authoring.deps import AuthoringDeps
from services.authoring.invokers import ApiKeys
from services.authoring.server import create_server
from services.authoring.settings import AuthoringSettings
from services.authoring.state import AuthoringState
from services.embedder.client import EmbedderClient
from services.runtime.grpc_client import ClientPolicy
from services.runtime.jobs import JobQueue, JobWorker
from services.runtime.lifecycle import serve_until_signalled
from services.runtime.logs import configure_logging
from services.runtime.routing import parse_replicas
from services.runtime.store_router import StoreRouter
from services.runtime.stores import OpenStores
from services.runtime.tracing import configure_tracing

# Compose writes many drawers through retrieval (each embedded there): allow it time.
TIER_POLICY = ClientPolicy(deadline_s=60.0)


def build_deps(
    settings: AuthoringSettings,
    *,
    embedder: EmbedderClient,
    keys: ApiKeys | None = None,
) -> AuthoringDeps:
    """Wire the authoring tier (shared with the tests): routers to every replica of the
    retrieval and corpus tiers (a store's calls go to the replicas its placement names)."""
    return AuthoringDeps(
        settings=settings,
        states=OpenStores(Path(settings.data_dir), AuthoringState.open, needs_dimension=False),
        retrieval=StoreRouter(
            "retrieval",
            parse_replicas(settings.retrieval_addr, tier="retrieval"),
            retrieval_pb2_grpc.RetrievalServiceStub,
            TIER_POLICY,
        ),
        corpus=StoreRouter(
            "corpus",
            parse_replicas(settings.corpus_addr, tier="corpus"),
            corpus_pb2_grpc.CorpusServiceStub,
            TIER_POLICY,
        ),
        embedder=embedder,
        jobs=JobQueue(
            settings.redis_url,
            queue_name=settings.replica_queue,
            max_queued=settings.job_max_queued,
        ),
        keys=keys or ApiKeys.from_environ(settings.secrets_dir),
    )


def build_worker(deps: AuthoringDeps) -> JobWorker:
    """The compose worker of this process."""
    return JobWorker(
        deps.settings.redis_url,
        deps.settings.replica_queue,
        {
            COMPOSE_KIND: compose_handler(deps),
            CONSOLIDATE_KIND: consolidate_handler(deps),
        },
        max_jobs=deps.settings.compose_concurrency,
        lease_s=deps.settings.job_lease_s,
        max_tries=deps.settings.job_max_tries,
        retry_delay_s=deps.settings.job_retry_delay_s,
    )


async def _serve(settings: AuthoringSettings) -> None:
    embedder = EmbedderClient(settings.embedder_addr)
    deps = build_deps(settings, embedder=embedder)
    tier = create_server(settings, deps)
    tier.metrics.serve(settings.metrics_port, settings.host)
    worker = build_worker(deps)
    worker_task: asyncio.Task[None] | None = None

    async def ready() -> None:
        nonlocal worker_task
        await deps.jobs.connect()
        worker_task = asyncio.create_task(worker.run())
        await tier.set_serving(True)

    async def close() -> None:
        await worker.close()
        if worker_task is not None:
            await asyncio.gather(worker_task, return_exceptions=True)
        await deps.jobs.close()
        await deps.close()
        await embedder.close()

    await serve_until_signalled(
        tier, grace_s=settings.shutdown_grace_s, on_started=ready, on_stopping=close
    )


def main() -> None:
    settings = AuthoringSettings()
    configure_logging("authoring", level=settings.log_level, fmt=settings.log_format)
    configure_tracing("authoring")
    Path(settings.data_dir).mkdir(parents=True, exist_ok=True)
    asyncio.run(_serve(settings))


if __name__ == "__main__":
    main()
