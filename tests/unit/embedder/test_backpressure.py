"""Backpressure: the embedder's batcher turns a request away at once when the queue is full,
saying when to come back; the refusal (and its wait) crosses gRPC to the next tier."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from services.embedder.core import EmbeddingModel
from services.embedder.core.batcher import DynamicBatcher
from services.runtime.errors import Overloaded
from services.runtime.grpc_client import domain_error
from services.runtime.grpc_server import STATUS_DETAILS_KEY, status_details


async def test_a_full_queue_refuses_with_a_wait_and_an_empty_one_takes_anything(
    embedding_model: EmbeddingModel,
) -> None:
    batcher = DynamicBatcher(
        lambda texts: embedding_model.encode(texts, batch_size=64),
        max_batch=64,
        max_wait_s=0.0,
        max_queued_texts=16,
    )
    try:
        big = [f"sentence number {n} about queues" for n in range(40)]
        small = ["one more sentence"] * 8
        # The first request meets an empty queue: taken although over the bound. The second
        # arrives while 40 texts wait: refused without waiting.
        outcomes = await asyncio.gather(
            batcher.embed(big), batcher.embed(small), return_exceptions=True
        )
        vectors, refused = outcomes
        assert not isinstance(vectors, BaseException) and len(vectors) == 40
        assert isinstance(refused, Overloaded), refused
        assert refused.retry_after_s >= 0.5 and "40 texts waiting" in refused.message
        assert batcher.stats.refused == 1
        assert len(await batcher.embed(small)) == 8, "once drained, requests are taken again"
    finally:
        await batcher.close()


def test_the_wait_crosses_grpc_as_retry_info() -> None:
    error = Overloaded("the embedder is full; retry in about 3 s", retry_after_s=2.5)
    code = grpc.StatusCode.RESOURCE_EXHAUSTED
    trailing = grpc.aio.Metadata((STATUS_DETAILS_KEY, status_details(error, code)))
    received = domain_error(
        grpc.aio.AioRpcError(code, grpc.aio.Metadata(), trailing, details=error.message)
    )
    assert isinstance(received, Overloaded)
    assert received.retry_after_s == pytest.approx(2.5)
    assert received.message == error.message
