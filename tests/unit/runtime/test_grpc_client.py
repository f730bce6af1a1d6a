"""The gRPC client factory: retries UNAVAILABLE with backoff, honours deadlines, and turns
statuses back into domain errors. Runs against a real in-process server built by our factory."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc
import pytest
from engram.v1 import common_pb2, corpus_pb2, corpus_pb2_grpc, embedder_pb2, embedder_pb2_grpc

from services.runtime.errors import InvalidInput, Unavailable
from services.runtime.grpc_client import (
    ClientPolicy,
    call,
    create_channel,
    replay_unsafe_methods,
)
from services.runtime.grpc_server import TierServer, build_server
from services.runtime.settings import TierSettings


class ScriptedEmbedder(embedder_pb2_grpc.EmbedderServiceServicer):
    """A server whose Info fails a set number of times, or stalls, or raises."""

    def __init__(self) -> None:
        self.failures_left = 0
        self.calls = 0
        self.stall_s = 0.0
        self.crash = False

    async def Info(self, request: Any, context: Any) -> embedder_pb2.InfoResponse:
        self.calls += 1
        if self.failures_left > 0:
            self.failures_left -= 1
            raise Unavailable("warming up")
        if self.stall_s:
            await asyncio.sleep(self.stall_s)
        if self.crash:
            raise KeyError("a bug")
        return embedder_pb2.InfoResponse(model="scripted", dimension=3)

    async def Embed(self, request: Any, context: Any) -> embedder_pb2.EmbedResponse:
        raise InvalidInput("texts is empty", field="texts")


async def _serving(register: Callable[[grpc.aio.Server], None]) -> TierServer:
    """A started tier server on a free port, built by our factory around `register`."""
    tier = build_server(
        TierSettings(host="127.0.0.1", port=0), tier="t", register=register, service_names=["x"]
    )
    await tier.start()
    return tier


@pytest.fixture
async def scripted() -> AsyncIterator[tuple[ScriptedEmbedder, TierServer]]:
    servicer = ScriptedEmbedder()
    tier = await _serving(
        lambda server: embedder_pb2_grpc.add_EmbedderServiceServicer_to_server(servicer, server)
    )
    yield servicer, tier
    await tier.stop(0.1)


def _stub(tier: TierServer, policy: ClientPolicy) -> embedder_pb2_grpc.EmbedderServiceStub:
    return embedder_pb2_grpc.EmbedderServiceStub(create_channel(f"127.0.0.1:{tier.port}", policy))


async def test_unavailable_is_retried_until_it_succeeds(
    scripted: tuple[ScriptedEmbedder, TierServer],
) -> None:
    servicer, tier = scripted
    servicer.failures_left = 2
    stub = _stub(tier, ClientPolicy(max_attempts=4, initial_backoff_s=0.01))
    info = await call(stub.Info, embedder_pb2.InfoRequest())
    assert info.model == "scripted"
    assert servicer.calls == 3, f"expected 2 failures + 1 success, server saw {servicer.calls}"


async def test_retries_stop_at_max_attempts_and_raise_unavailable(
    scripted: tuple[ScriptedEmbedder, TierServer],
) -> None:
    servicer, tier = scripted
    servicer.failures_left = 10
    stub = _stub(tier, ClientPolicy(max_attempts=3, initial_backoff_s=0.01))
    with pytest.raises(Unavailable) as caught:
        await call(stub.Info, embedder_pb2.InfoRequest())
    assert servicer.calls == 3, f"expected exactly 3 attempts, server saw {servicer.calls}"
    assert "warming up" in caught.value.message


async def test_default_deadline_cuts_a_stalled_call(
    scripted: tuple[ScriptedEmbedder, TierServer],
) -> None:
    servicer, tier = scripted
    servicer.stall_s = 5.0
    stub = _stub(tier, ClientPolicy(deadline_s=0.2))
    with pytest.raises(Unavailable) as caught:
        await call(stub.Info, embedder_pb2.InfoRequest())
    assert "deadline exceeded" in caught.value.message


async def test_an_explicit_timeout_wins_over_the_default(
    scripted: tuple[ScriptedEmbedder, TierServer],
) -> None:
    servicer, tier = scripted
    servicer.stall_s = 0.5
    stub = _stub(tier, ClientPolicy(deadline_s=0.05))
    info = await call(stub.Info, embedder_pb2.InfoRequest(), timeout=5.0)
    assert info.model == "scripted"


async def test_domain_error_crosses_the_wire_with_code_and_field(
    scripted: tuple[ScriptedEmbedder, TierServer],
) -> None:
    _, tier = scripted
    stub = _stub(tier, ClientPolicy())
    with pytest.raises(InvalidInput) as caught:
        await call(stub.Embed, embedder_pb2.EmbedRequest())
    assert caught.value.message == "texts is empty"
    assert caught.value.field == "texts"


async def test_unknown_failure_is_internal_with_an_incident_id(
    scripted: tuple[ScriptedEmbedder, TierServer],
) -> None:
    servicer, tier = scripted
    servicer.crash = True
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{tier.port}")
    stub = embedder_pb2_grpc.EmbedderServiceStub(channel)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stub.Info(embedder_pb2.InfoRequest())
    assert caught.value.code() is grpc.StatusCode.INTERNAL
    assert "incident" in (caught.value.details() or "")
    counted = tier.metrics.requests.labels("t", "Info", "INTERNAL")._value.get()
    assert counted == 1, f"the INTERNAL call should be counted once in metrics, got {counted}"


class ScriptedCorpus(corpus_pb2_grpc.CorpusServiceServicer):
    """A corpus peer that answers UNAVAILABLE to the first call of every method."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def _once_unavailable(self, method: str) -> None:
        self.calls[method] = self.calls.get(method, 0) + 1
        if self.calls[method] == 1:
            raise Unavailable("committed, then the answer was lost")

    async def AddRawMemory(self, request: Any, context: Any) -> common_pb2.RawChunk:
        self._once_unavailable("AddRawMemory")
        return common_pb2.RawChunk(id="c1")

    async def ListSessions(self, request: Any, context: Any) -> corpus_pb2.ListSessionsResponse:
        self._once_unavailable("ListSessions")
        return corpus_pb2.ListSessionsResponse()


async def test_a_replay_unsafe_method_is_never_retried_and_the_rest_are() -> None:
    servicer = ScriptedCorpus()
    tier = await _serving(
        lambda server: corpus_pb2_grpc.add_CorpusServiceServicer_to_server(servicer, server)
    )
    try:
        channel = create_channel(f"127.0.0.1:{tier.port}", ClientPolicy(initial_backoff_s=0.01))
        stub = corpus_pb2_grpc.CorpusServiceStub(channel)
        with pytest.raises(Unavailable):
            await call(stub.AddRawMemory, corpus_pb2.AddRawMemoryRequest(content="x"))
        assert servicer.calls["AddRawMemory"] == 1, "an append was sent twice"
        await call(stub.ListSessions, corpus_pb2.ListSessionsRequest())
        assert servicer.calls["ListSessions"] == 2, "a read was not retried"
        await channel.close()
    finally:
        await tier.stop(0.1)


def test_the_replay_unsafe_methods_come_from_the_protos() -> None:
    assert set(replay_unsafe_methods()) == {
        ("engram.v1.CorpusService", "AddRawMemory"),
        ("engram.v1.CorpusService", "AddRawSession"),
        ("engram.v1.RetrievalService", "RecordRetrieval"),
        ("engram.v1.AuthoringService", "CreatePromptVersion"),
    }
