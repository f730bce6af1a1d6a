"""Re-embedding a corpus store when the embedding model changed (decision 0018): its raw
chunks' and source chunks' vectors are rebuilt in place with the model in force, as a job.

`ReembedStore` records the model in force as the store's target (which opens a store made
with another model) and queues the job; until it is done, raw and source searches answer
from their keyword indexes with a notice, and new ingests embed with the new model. A chunk
rewritten meanwhile keeps the vector its write gave it. The job ends by making the new model
the store's; a job cut short is retried by the queue (it is idempotent).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Final

from engram.v1 import common_pb2

from services.corpus.store import CorpusStore
from services.embedder.client import EmbedderClient
from services.runtime.embedding import begin_reembed, finish_reembed
from services.runtime.errors import FailedPrecondition
from services.runtime.hybrid import HybridCollection, Payload
from services.runtime.job_proto import job_payload
from services.runtime.jobs import JobContext, JobQueue
from services.runtime.stores import OpenStores

REEMBED_KIND: Final = "reembed_raw"
BATCH: Final = 256


def _raw_text(payload: Payload) -> str:
    return str(payload.get("chunk", {}).get("content", ""))


def _source_text(payload: Payload) -> str:
    return str(payload.get("content", ""))


async def start(
    stores: OpenStores[CorpusStore], jobs: JobQueue, request: common_pb2.ReembedStoreRequest
) -> common_pb2.Job:
    """Point the store at the model in force and queue the job that rebuilds its vectors."""
    identity = stores.embedding
    if identity is None:
        raise FailedPrecondition(
            "this tier does not know which model its embedder serves (the embedder gave no "
            "fingerprint), so its stores record no model and there is nothing to re-embed for"
        )
    name = request.store.name
    moving = await asyncio.to_thread(begin_reembed, stores.folder(name), identity)
    store = await asyncio.to_thread(stores.get, name)
    if moving:
        store.reembedding_to = identity
    return await jobs.enqueue(REEMBED_KIND, name, job_payload(request))


def reembed_handler(stores: OpenStores[CorpusStore], embedder: EmbedderClient) -> Any:
    async def handle(ctx: JobContext, queued: dict[str, Any]) -> common_pb2.ReembedResult:
        store = await asyncio.to_thread(stores.get, ctx.store)
        target = store.reembedding_to
        if target is None:  # its vectors are of the model in force already
            model = stores.embedding.model if stores.embedding else ""
            return common_pb2.ReembedResult(model=model)
        raw_ids, source_ids = store.raw.ids(), store.source.ids()
        total = len(raw_ids) + len(source_ids)
        done = 0

        async def rebuild(
            collection: HybridCollection, ids: Sequence[str], text_of: Callable[[Payload], str]
        ) -> int:
            nonlocal done
            replaced = 0
            for start_at in range(0, len(ids), BATCH):
                batch = ids[start_at : start_at + BATCH]
                texts = {
                    i: text_of(p) for i, p in await asyncio.to_thread(collection.retrieve, batch)
                }
                if texts:
                    order = list(texts)
                    vectors = await embedder.embed([texts[i] for i in order])
                    replaced += await asyncio.to_thread(
                        collection.replace_vectors,
                        {i: (texts[i], vectors[n]) for n, i in enumerate(order)},
                        text_of,
                    )
                done += len(batch)
                await ctx.report(items_done=done, items_total=total, units_done=done, unit="chunks")
            return replaced

        await ctx.report(items_done=0, items_total=total, units_done=0, unit="chunks")
        raw = await rebuild(store.raw.collection, raw_ids, _raw_text)
        source = await rebuild(store.source.collection, source_ids, _source_text)
        await asyncio.to_thread(finish_reembed, stores.folder(ctx.store), target)
        store.reembedding_to = None
        return common_pb2.ReembedResult(model=target.model, raw_chunks=raw, source_chunks=source)

    return handle
