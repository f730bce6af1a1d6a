"""What every gateway operation does before it calls a tier: the tier each operation needs
(`REQUIRED_TIER`, from the operation table), the token's store scope, and the StoreContext
filled in from the registry.

Order of refusals: the tier, then the store scope, then whether the store exists and is
open — so a token learns nothing about stores outside its scope.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, Final, TypeVar

import grpc
from engram.v1 import authoring_pb2_grpc, common_pb2, corpus_pb2_grpc, retrieval_pb2_grpc
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc

from gateway.core.operations import REQUIRED_TIER, Operation
from gateway.core.principal import Principal
from gateway.core.registry import StoreRegistry
from services.runtime.errors import InvalidInput, TooLarge
from services.runtime.grpc_client import ClientPolicy, call, domain_error
from services.runtime.routing import Replica, place
from services.runtime.store_router import PlacementLookup, StoreRouter

R = TypeVar("R", bound=Message)
HEALTH_TIMEOUT_S: Final = 2.0


class Tiers:
    """Store-routing stubs of the tiers the gateway calls: one router per tier over its
    replicas (`services.runtime.store_router`); `tiers.retrieval.Search(request)` reaches the
    replica that holds `request.store`."""

    def __init__(self, retrieval: StoreRouter, corpus: StoreRouter, authoring: StoreRouter) -> None:
        self.retrieval, self.corpus, self.authoring = retrieval, corpus, authoring
        self.routers = {"retrieval": retrieval, "corpus": corpus, "authoring": authoring}

    @classmethod
    def connect(
        cls,
        replicas: Mapping[str, tuple[Replica, ...]],
        policy: ClientPolicy,
        placement_of: PlacementLookup,
    ) -> Tiers:
        """Channels to every replica of each tier; a request that names only its store is
        routed by `placement_of` (the registry)."""
        stubs = {
            "retrieval": retrieval_pb2_grpc.RetrievalServiceStub,
            "corpus": corpus_pb2_grpc.CorpusServiceStub,
            "authoring": authoring_pb2_grpc.AuthoringServiceStub,
        }
        routers = {
            tier: StoreRouter(tier, replicas[tier], stubs[tier], policy, placement_of=placement_of)
            for tier in stubs
        }
        return cls(**routers)

    def place(self, store: str) -> dict[str, str]:
        """Where a new store goes: tier -> replica, for the tiers with several replicas."""
        return place(store, {tier: router.replicas for tier, router in self.routers.items()})

    @property
    def channels(self) -> dict[str, grpc.aio.Channel]:
        """Every replica's channel: `retrieval`, or `retrieval/<replica>` when partitioned."""
        found: dict[str, grpc.aio.Channel] = {}
        for tier, router in self.routers.items():
            for name, channel in router.channels.items():
                found[f"{tier}/{name}" if router.partitioned else tier] = channel
        return found

    async def health(self) -> dict[str, str]:
        """Each replica's gRPC health status (SERVING, NOT_SERVING, or why it did not answer)."""

        async def check(channel: grpc.aio.Channel) -> str:
            stub = health_pb2_grpc.HealthStub(channel)
            try:
                answer = await stub.Check(
                    health_pb2.HealthCheckRequest(service=""), timeout=HEALTH_TIMEOUT_S
                )
            except grpc.aio.AioRpcError as error:
                return f"UNREACHABLE ({error.code().name})"
            return str(health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status))

        channels = self.channels
        names = list(channels)
        statuses = await asyncio.gather(*(check(channels[n]) for n in names))
        return dict(zip(names, statuses, strict=True))

    async def close(self) -> None:
        for router in self.routers.values():
            await router.close()


class TierCalls:
    """The checks and call helpers the operation groups share."""

    def __init__(
        self,
        *,
        registry: StoreRegistry,
        tiers: Tiers,
        max_upload_bytes: int,
        stream_deadline_s: float,
    ) -> None:
        self.registry = registry
        self._tiers = tiers
        self._max_upload = max_upload_bytes
        self._stream_deadline = stream_deadline_s

    @property
    def tiers(self) -> Tiers:
        """The tiers' stubs and channels."""
        return self._tiers

    def authorize(self, principal: Principal, operation: str, store: str) -> None:
        """Check tier, scope and that the store is open, without a request. Faces call this
        before reading a streamed body, so a refused caller is not read 50 MB first."""
        self._enter(principal, operation, common_pb2.StoreContext(name=store))

    def _enter(self, principal: Principal, operation: str, store: common_pb2.StoreContext) -> None:
        """Check tier and scope, then replace `store` with the registry's context."""
        principal.require(REQUIRED_TIER[operation], operation.replace("_", " "))
        name = store.name
        if not name:
            raise InvalidInput("the request names no store", field="store.name")
        principal.require_store(name)
        context = self.registry.context(name)
        context.caller_tier = int(principal.tier)  # type: ignore[assignment]
        context.caller_id = principal.token_id
        store.CopyFrom(context)

    async def forward(self, operation: Operation, principal: Principal, request: Any) -> Any:
        """Run `operation` as the table declares it: the serving tier's RPC of the same name,
        after the tier and scope checks and with the registry's StoreContext."""
        tier = getattr(self._tiers, operation.served_by)
        rpc: Callable[..., Awaitable[Any]] = getattr(tier, operation.rpc)
        return await self._store_call(principal, operation.name, request, rpc)

    async def _store_call(
        self,
        principal: Principal,
        operation: str,
        request: Any,
        rpc: Callable[..., Awaitable[R]],
    ) -> R:
        self._enter(principal, operation, request.store)
        return await call(rpc, request)

    async def _client_stream(self, rpc: Callable[..., Any], messages: AsyncIterator[Any]) -> Any:
        """A client-streaming call written message by message, so that a refusal from our
        side (too large, a malformed body) cancels the call instead of ending it early —
        an early end would look like a complete, shorter upload."""
        stream = rpc(timeout=self._stream_deadline)
        try:
            async for message in messages:
                await stream.write(message)
            await stream.done_writing()
            return await stream
        except grpc.aio.AioRpcError as error:
            raise domain_error(error) from error
        except BaseException:
            stream.cancel()
            raise


def too_large(size: int, limit: int, name: str) -> TooLarge:
    shown = f"{size / 1e6:.1f} MB" if size > limit * 1.05 else f"over {limit / 1e6:g} MB"
    return TooLarge(
        f"{name or 'the upload'} is {shown}; the limit is {limit / 1e6:g} MB: "
        "split it or upload a summary",
        field="file",
    )
