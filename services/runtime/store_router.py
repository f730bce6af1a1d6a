"""The one store-routing stub every caller of a partitioned tier goes through.

A `StoreRouter` holds a channel to each replica of one tier (retrieval, corpus or authoring)
and answers, for a store, the replica that holds it: the store's recorded placement
(`StoreContext.placement[tier]`, filled in by the gateway from its registry), else what the
router's `placement_of` lookup says (the gateway's registry, for requests that name only a
store), else the first replica listed (a store made before the tier had several replicas
stayed on the one it had). Placement itself is decided once, when a store is made
(`routing.rendezvous`), and changed only by `MoveStore`.

`router.Search(request)` routes on `request.store`, so call sites read like a plain stub's;
client-streaming calls, whose store is in a later message, name it first:
`router.for_store(context).UploadFile(...)`. A replica that does not answer fails with
Unavailable naming the replica, so its stores answer 503 while the others keep serving.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import grpc
from engram.v1 import common_pb2

from services.runtime.errors import Unavailable
from services.runtime.grpc_client import ClientPolicy, create_channel
from services.runtime.grpc_server import STATUS_DETAILS_KEY
from services.runtime.routing import Replica

PlacementLookup = Callable[[str], Mapping[str, str]]


def _from_the_tier(error: grpc.aio.AioRpcError) -> bool:
    """Whether the far side answered with its own domain error (rich status details)."""
    return any(key == STATUS_DETAILS_KEY for key, _ in error.trailing_metadata() or ())


class ReplicaStub:
    """One replica's stub: unary calls that cannot reach it say which replica is down."""

    def __init__(self, tier: str, replica: Replica, stub: Any) -> None:
        self.tier, self.replica, self._stub = tier, replica, stub

    def __getattr__(self, rpc: str) -> Any:
        method = getattr(self._stub, rpc)
        if not isinstance(method, grpc.aio.UnaryUnaryMultiCallable):
            return method

        async def unary(request: Any, **kwargs: Any) -> Any:
            try:
                return await method(request, **kwargs)
            except grpc.aio.AioRpcError as error:
                # Only a replica that did not answer is named; an Unavailable the tier itself
                # raised (its embedder not ready, ...) carries its own words (`domain_error`).
                if error.code() is grpc.StatusCode.UNAVAILABLE and not _from_the_tier(error):
                    raise self.unavailable(error.details() or "no answer") from error
                raise

        return unary

    def unavailable(self, why: str) -> Unavailable:
        replica = self.replica
        return Unavailable(
            f"{self.tier} replica {replica.name} ({replica.address}) is unavailable: {why}. "
            "The stores placed on it answer again once it is back; other stores are served"
        )


class StoreRouter:
    """Channels to every replica of `tier`, and the replica each store lives on."""

    def __init__(
        self,
        tier: str,
        replicas: tuple[Replica, ...],
        stub_class: Callable[[grpc.aio.Channel], Any],
        policy: ClientPolicy | None = None,
        *,
        placement_of: PlacementLookup | None = None,
    ) -> None:
        if not replicas:
            raise ValueError(f"a router for {tier} needs at least one replica")
        self.tier, self.replicas = tier, replicas
        self.placement_of = placement_of
        self.channels: dict[str, grpc.aio.Channel] = {
            r.name: create_channel(r.address, policy) for r in replicas
        }
        self._stubs = {
            r.name: ReplicaStub(tier, r, stub_class(self.channels[r.name])) for r in replicas
        }

    @property
    def partitioned(self) -> bool:
        """Whether stores are spread over several replicas (and so carry a placement)."""
        return len(self.replicas) > 1

    def replica_name(self, store: common_pb2.StoreContext | str) -> str:
        """The name of the replica holding `store` (see the module docstring for the order)."""
        if isinstance(store, str):
            name, placed = store, ""
        else:
            name, placed = store.name, store.placement.get(self.tier, "")
        if not placed and self.placement_of is not None and name:
            placed = self.placement_of(name).get(self.tier, "")
        return placed or self.replicas[0].name

    def for_store(self, store: common_pb2.StoreContext | str) -> ReplicaStub:
        """The stub of the replica that holds `store`."""
        name = self.replica_name(store)
        stub = self._stubs.get(name)
        if stub is None:
            label = store if isinstance(store, str) else store.name
            raise Unavailable(
                f"store {label!r} is placed on {self.tier} replica {name!r}, which this "
                f"process is not configured with (it knows {', '.join(self._stubs)}); add it "
                "back to the replica list, or move the store"
            )
        return stub

    def on(self, replica: str) -> ReplicaStub:
        """The stub of the replica named `replica` (moves address replicas by name)."""
        try:
            return self._stubs[replica]
        except KeyError:
            raise Unavailable(
                f"no {self.tier} replica {replica!r} is configured "
                f"(known: {', '.join(self._stubs)})"
            ) from None

    @property
    def any(self) -> ReplicaStub:
        """A stub for calls that concern no store (rules, the embedder's description)."""
        return self._stubs[self.replicas[0].name]

    def __getattr__(self, rpc: str) -> Callable[..., Any]:
        """`router.Rpc(request, ...)`: the call on the replica of `request.store`, or on any
        replica when the request names no store."""
        if rpc.startswith("_"):
            raise AttributeError(rpc)

        def routed(request: Any, *args: Any, **kwargs: Any) -> Any:
            store = getattr(request, "store", None)
            if isinstance(store, common_pb2.StoreContext) and store.name:
                stub = self.for_store(store)
            else:
                stub = self.any
            return getattr(stub, rpc)(request, *args, **kwargs)

        return routed

    async def close(self) -> None:
        for channel in self.channels.values():
            await channel.close()
