"""Run the retrieval tier: `engram-retrieval` or `python -m services.retrieval`."""

from __future__ import annotations

import asyncio

from services.embedder.client import EmbedderClient
from services.retrieval.deps import RetrievalDeps
from services.retrieval.pool import pool_registry
from services.retrieval.search import SearchEngine, SearchLimits
from services.retrieval.server import create_server
from services.retrieval.settings import RetrievalSettings
from services.retrieval.tokens import TokenCounter
from services.runtime.lifecycle import serve_until_signalled
from services.runtime.logs import configure_logging
from services.runtime.settings import StorageSettings
from services.runtime.tracing import configure_tracing


def build_deps(
    settings: RetrievalSettings, storage: StorageSettings, embedder: EmbedderClient
) -> RetrievalDeps:
    """Wire the retrieval tier's dependencies (shared with the tests). The pools learn the
    embedding dimension once the embedder answers (`pools.set_embedding`)."""
    pools = pool_registry(
        settings.data_dir,
        backend=storage.vector_backend,
        qdrant_url=storage.qdrant_url,
        qdrant_api_key=storage.qdrant_api_key,
        qdrant_topology=storage.qdrant_topology(),
        index_min_points=settings.index_min_points,
    )
    limits = SearchLimits(
        max_query_chars=settings.max_query_chars, default_depth=settings.default_depth
    )
    return RetrievalDeps(
        settings=settings,
        pools=pools,
        embedder=embedder,
        engine=SearchEngine(embedder, limits),
        tokens=TokenCounter.bundled(),
    )


async def _serve(settings: RetrievalSettings, storage: StorageSettings) -> None:
    embedder = EmbedderClient(settings.embedder_addr)
    deps = build_deps(settings, storage, embedder)
    tier = create_server(settings, deps)
    tier.metrics.serve(settings.metrics_port, settings.host)

    async def ready() -> None:
        info = await embedder.wait_until_ready(settings.embedder_addr)
        deps.pools.set_embedding(info.model, info.fingerprint, info.dimension)
        await tier.set_serving(True)

    async def close() -> None:
        await deps.reembeds.close()
        await deps.wait_for_builds()
        deps.pools.close()
        await embedder.close()

    await serve_until_signalled(
        tier, grace_s=settings.shutdown_grace_s, on_started=ready, on_stopping=close
    )


def main() -> None:
    settings = RetrievalSettings()
    storage = StorageSettings()
    configure_logging("retrieval", level=settings.log_level, fmt=settings.log_format)
    configure_tracing("retrieval")
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    asyncio.run(_serve(settings, storage))


if __name__ == "__main__":
    main()
