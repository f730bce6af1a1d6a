"""The embedder's gRPC contract, against an in-process server on 127.0.0.1:0 with the real model."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import numpy as np
import numpy.typing as npt
import pytest
from engram.v1 import embedder_pb2, embedder_pb2_grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.embedder.client import EmbedderClient
from services.embedder.core import EmbeddingModel, choose_device
from services.embedder.deps import EmbedderDeps
from services.embedder.server import SERVICE_NAME, create_server
from services.embedder.settings import EmbedderSettings
from services.runtime.errors import FailedPrecondition
from services.runtime.grpc_server import TierServer


@dataclass
class RunningEmbedder:
    tier: TierServer
    deps: EmbedderDeps
    stub: embedder_pb2_grpc.EmbedderServiceStub
    health: health_pb2_grpc.HealthStub


async def _start(settings: EmbedderSettings, model: EmbeddingModel | None) -> RunningEmbedder:
    deps = EmbedderDeps(settings)
    tier = create_server(settings, deps)
    await tier.start()
    if model is not None:
        deps.attach(model).start()
        await tier.set_serving(True)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{tier.port}")
    return RunningEmbedder(
        tier,
        deps,
        embedder_pb2_grpc.EmbedderServiceStub(channel),
        health_pb2_grpc.HealthStub(channel),
    )


@pytest.fixture
async def embedder(embedding_model: EmbeddingModel) -> AsyncIterator[RunningEmbedder]:
    settings = EmbedderSettings(
        host="127.0.0.1", port=0, allow_cpu=True, max_texts=64, max_text_chars=2000, max_wait_ms=5
    )
    running = await _start(settings, embedding_model)
    yield running
    assert running.deps.batcher is not None
    await running.deps.batcher.close()
    await running.tier.stop(0.5)


def _vectors(response: embedder_pb2.EmbedResponse) -> npt.NDArray[np.float32]:
    return np.frombuffer(response.vectors, dtype="<f4").reshape(response.count, response.dimension)


SENTENCES = [
    "The architect decided to store vectors in Qdrant.",
    "A diary note about a long debugging session.",
    "Kyle prefers warm soup over salad in winter.",
    "Retry the upload when the gateway answers 503.",
]


async def test_embed_returns_unit_norm_vectors_of_the_model_dimension(
    embedder: RunningEmbedder,
) -> None:
    response = await embedder.stub.Embed(embedder_pb2.EmbedRequest(texts=SENTENCES))
    vectors = _vectors(response)
    assert response.dimension == 384, f"expected MiniLM's 384 dimensions, got {response.dimension}"
    assert vectors.shape == (4, 384)
    norms = np.linalg.norm(vectors, axis=1)
    assert np.allclose(norms, 1.0, atol=1e-4), f"vectors must be unit norm, norms were {norms}"
    assert list(response.truncated) == [False] * 4
    assert response.truncation_policy


async def test_each_batch_item_equals_its_single_input_result(embedder: RunningEmbedder) -> None:
    batch = _vectors(await embedder.stub.Embed(embedder_pb2.EmbedRequest(texts=SENTENCES)))
    for index, text in enumerate(SENTENCES):
        single = _vectors(await embedder.stub.Embed(embedder_pb2.EmbedRequest(texts=[text])))[0]
        cosine = float(np.dot(batch[index], single))
        assert cosine >= 0.9999, f"batch item {index} differs from its single result: {cosine}"


async def test_concurrent_single_text_callers_are_batched(embedder: RunningEmbedder) -> None:
    assert embedder.deps.batcher is not None
    stats = embedder.deps.batcher.stats
    calls_before, requests_before = stats.model_calls, stats.requests
    texts = [f"Concurrent caller number {i} asks about memory {i * 7}." for i in range(32)]

    async def one(text: str) -> npt.NDArray[np.float32]:
        response = await embedder.stub.Embed(embedder_pb2.EmbedRequest(texts=[text]))
        return _vectors(response)[0]

    results = await asyncio.gather(*(one(text) for text in texts))
    expected = _vectors(await embedder.stub.Embed(embedder_pb2.EmbedRequest(texts=texts)))
    for index, vector in enumerate(results):
        cosine = float(np.dot(vector, expected[index]))
        assert cosine >= 0.9999, f"caller {index} got someone else's vector (cosine {cosine})"
    calls = stats.model_calls - calls_before - 1  # minus the reference call above
    served = stats.requests - requests_before - 1
    assert served == 32
    assert calls < 32, f"32 concurrent requests took {calls} model calls: no batching happened"


async def test_the_client_embeds_a_just_queried_text_once(embedder: RunningEmbedder) -> None:
    client = EmbedderClient(f"127.0.0.1:{embedder.tier.port}")
    requests: list[list[str]] = []
    send = client._embed_request

    async def counted(texts: list[str]) -> npt.NDArray[np.float32]:
        requests.append(texts)
        return await send(texts)

    client._embed_request = counted  # type: ignore[method-assign]  # a spy: calls through
    try:
        queried = await client.embed_query(SENTENCES[0])
        written = await client.embed([SENTENCES[0]])
        assert np.array_equal(written[0], queried), "the cached vector is the same vector"
        assert requests == [[SENTENCES[0]]], "a write after its duplicate check re-embedded"
        await client.embed(SENTENCES[:2])
        assert requests[-1] == SENTENCES[:2], "bulk embeddings always ask the model"
    finally:
        await client.close()


async def test_info_reports_model_device_and_limits(embedder: RunningEmbedder) -> None:
    info = await embedder.stub.Info(embedder_pb2.InfoRequest())
    assert info.dimension == 384
    assert info.device == "cpu"
    assert info.max_seq_tokens == 256
    assert info.max_batch == 64
    assert info.max_texts == 64
    assert info.max_text_chars == 2000
    assert info.dynamic_batching is True


@pytest.mark.parametrize(
    ("texts", "fragment"),
    [
        ([], "texts is empty"),
        (["   "], "texts[0] is empty"),
        (["x" * 2001], "the limit is 2000"),
        (["a"] * 65, "the limit is 64"),
    ],
    ids=["empty-list", "blank-text", "text-too-long", "too-many-texts"],
)
async def test_bad_input_is_invalid_argument_with_a_readable_message(
    embedder: RunningEmbedder, texts: list[str], fragment: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await embedder.stub.Embed(embedder_pb2.EmbedRequest(texts=texts))
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert fragment in (caught.value.details() or ""), caught.value.details()


async def test_text_over_the_token_limit_is_flagged_truncated(embedder: RunningEmbedder) -> None:
    long_text = " ".join(["memo"] * 350)  # ~350 tokens, under the 2000-char cap
    response = await embedder.stub.Embed(embedder_pb2.EmbedRequest(texts=[long_text, "short"]))
    assert list(response.truncated) == [True, False]


async def test_health_is_not_serving_until_the_model_is_attached(
    embedding_model: EmbeddingModel,
) -> None:
    settings = EmbedderSettings(host="127.0.0.1", port=0, allow_cpu=True)
    running = await _start(settings, None)
    try:
        check = health_pb2.HealthCheckRequest(service=SERVICE_NAME)
        before = await running.health.Check(check)
        assert before.status == health_pb2.HealthCheckResponse.NOT_SERVING
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await running.stub.Embed(embedder_pb2.EmbedRequest(texts=["hello"]))
        assert caught.value.code() is grpc.StatusCode.UNAVAILABLE
        running.deps.attach(embedding_model).start()
        await running.tier.set_serving(True)
        after = await running.health.Check(check)
        assert after.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        if running.deps.batcher is not None:
            await running.deps.batcher.close()
        await running.tier.stop(0.5)


def test_cpu_is_refused_without_the_opt_in() -> None:
    with pytest.raises(FailedPrecondition) as caught:
        choose_device("auto", allow_cpu=False, cuda_available=False)
    assert "ENGRAM_EMBEDDER_ALLOW_CPU=1" in caught.value.message
    assert choose_device("auto", allow_cpu=True, cuda_available=False) == "cpu"
    assert choose_device("auto", allow_cpu=False, cuda_available=True) == "cuda"
    with pytest.raises(FailedPrecondition):
        choose_device("cuda", allow_cpu=True, cuda_available=False)
