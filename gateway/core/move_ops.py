"""Moving a store between tier replicas (`engram stores --move` / `--rebalance`).

Stores are placed on one replica of each partitioned tier when they are made
(`services.runtime.routing`). After replicas are added, or before one is removed (listed in
ENGRAM_GATEWAY_DRAINING_REPLICAS), a move takes a store's data to where rendezvous hashing
over the replicas now configured puts it (or to the replicas named), one tier at a time:

1. the store is closed (every gateway refuses new calls to it at its next request) and the
   gateway waits `SETTLE_S` for calls admitted before the close to finish;
2. its queued and running jobs are waited for (`drain_timeout_s`); a store whose jobs do not
   finish in time is reopened as it was and the move refused, nothing moved;
3. each moving tier's snapshot (BackupStore on the old replica) is restored on the new one;
   a failure drops what was restored on the new replicas and reopens the store, nothing moved;
4. the new placement is recorded in the registry, the old copies dropped, and the store
   reopened if it was open.

With vectors on a Qdrant server every replica shares the store's collections: the restore
writes the same points again (idempotent) and the old replica drops only its own files
(`DropStoreRequest.keep_shared`), never the collections the new replica serves from.
"""

from __future__ import annotations

import asyncio
import logging
import shutil
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import suppress
from pathlib import Path

from engram.v1 import common_pb2, gateway_pb2

from gateway.core.access import TierCalls
from gateway.core.backup_ops import PIECE_BYTES, TIER_ORDER, spool_stream
from gateway.core.jobs import JobBoard
from gateway.core.principal import Principal, Tier
from services.runtime.errors import EngramError, FailedPrecondition, InvalidInput
from services.runtime.grpc_client import call
from services.runtime.jobs import TERMINAL_STATES
from services.runtime.routing import rendezvous

logger = logging.getLogger(__name__)

DEFAULT_DRAIN_S = 60
SETTLE_S = 1.0  # calls admitted just before the close finish within this (they are short)
_DRAIN_POLL_S = 0.5


class MoveOperations(TierCalls):
    """MoveStore."""

    scratch_dir: Path
    _jobs: JobBoard

    async def move_store(
        self, principal: Principal, request: gateway_pb2.MoveStoreRequest
    ) -> gateway_pb2.MoveStoreResponse:
        principal.require(Tier.ADMIN, "moving a store")
        principal.require_store(request.name)
        info = self.registry.get(request.name)
        moves = self._plan(info, dict(request.to))
        if not moves:
            return gateway_pb2.MoveStoreResponse(store=info)
        name = info.spec.name
        was_open = info.open
        if was_open:
            self.registry.update(gateway_pb2.UpdateStoreRequest(name=name, open=False))
        try:
            await asyncio.sleep(SETTLE_S)
            await self._drain(name, request.drain_timeout_s or DEFAULT_DRAIN_S)
            moved = await self._copy(info, moves)
            placement = dict(info.placement)
            placement.update({move.tier: move.to_replica for move in moved})
            self.registry.place(name, placement)
        finally:
            if was_open:
                self.registry.update(gateway_pb2.UpdateStoreRequest(name=name, open=True))
        await self._drop_old(info, moved)
        logger.info(
            "moved store %s: %s",
            name,
            ", ".join(f"{m.tier} {m.from_replica} -> {m.to_replica}" for m in moved),
        )
        return gateway_pb2.MoveStoreResponse(store=self.registry.get(name), moved=moved)

    def _plan(
        self, info: gateway_pb2.StoreInfo, asked: dict[str, str]
    ) -> list[tuple[str, str, str]]:
        """(tier, from replica, to replica) for each tier whose data must move."""
        unknown = set(asked) - set(self._tiers.routers)
        if unknown:
            raise InvalidInput(
                f"no tier {sorted(unknown)[0]!r}: stores live on {', '.join(TIER_ORDER)}",
                field="to",
            )
        here = self._context(info)
        moves = []
        for tier in TIER_ORDER:
            router = self._tiers.routers[tier]
            current = router.replica_name(here)
            if tier in asked:
                target = asked[tier]
                if target not in router.channels:
                    raise InvalidInput(
                        f"no {tier} replica {target!r} (configured: {', '.join(router.channels)})",
                        field="to",
                    )
            else:
                target = rendezvous(info.spec.name, router.replicas).name
            if target != current:
                moves.append((tier, current, target))
        return moves

    def _context(self, info: gateway_pb2.StoreInfo) -> common_pb2.StoreContext:
        """The store as the tiers know it (closed or not; every call here names its replica)."""
        return self.registry.context(info.spec.name, closed_ok=True)

    async def _drain(self, name: str, timeout_s: int) -> None:
        """Wait until none of the store's jobs is queued or running."""
        deadline = time.monotonic() + timeout_s
        while True:
            busy = [
                r for r in await self._jobs.list([name], 1000) if r.state not in TERMINAL_STATES
            ]
            if not busy:
                return
            if time.monotonic() >= deadline:
                raise FailedPrecondition(
                    f"store {name!r} still has {len(busy)} job(s) queued or running after "
                    f"{timeout_s} s ({', '.join(r.id for r in busy[:3])}); nothing was moved. "
                    "Wait for them (engram jobs) or cancel them, then move again"
                )
            await asyncio.sleep(_DRAIN_POLL_S)

    async def _copy(
        self, info: gateway_pb2.StoreInfo, moves: list[tuple[str, str, str]]
    ) -> list[gateway_pb2.TierMove]:
        """Restore each moving tier's snapshot on its new replica; all or nothing."""
        here = self._context(info)
        scratch = self.scratch_dir / f"move-{uuid.uuid4().hex}"
        scratch.mkdir(parents=True)
        done: list[gateway_pb2.TierMove] = []
        try:
            for tier, source, target in moves:
                router = self._tiers.routers[tier]
                spooled = scratch / f"{tier}.tar"
                size = await spool_stream(
                    router.on(source).BackupStore(
                        common_pb2.BackupStoreRequest(store=here), timeout=self._stream_deadline
                    ),
                    spooled,
                )
                await self._client_stream(router.on(target).RestoreStore, _pieces(here, spooled))
                done.append(
                    gateway_pb2.TierMove(
                        tier=tier, from_replica=source, to_replica=target, bytes=size
                    )
                )
        except BaseException:
            for move in done:  # the copies made so far: the store stays where it was
                with suppress(EngramError):
                    drop = common_pb2.DropStoreRequest(store=here, keep_shared=True)
                    await call(self._tiers.routers[move.tier].on(move.to_replica).DropStore, drop)
            raise
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
        return done

    async def _drop_old(
        self, info: gateway_pb2.StoreInfo, moved: list[gateway_pb2.TierMove]
    ) -> None:
        """Drop the copies the store left behind; one that cannot be dropped is logged (the
        store is already served from its new place, the leftover only takes disk)."""
        drop = common_pb2.DropStoreRequest(store=self._context(info), keep_shared=True)
        for move in moved:
            try:
                await call(self._tiers.routers[move.tier].on(move.from_replica).DropStore, drop)
            except EngramError as error:
                logger.warning(
                    "store %s moved off %s replica %s, but its old copy was not dropped: %s",
                    info.spec.name,
                    move.tier,
                    move.from_replica,
                    error.message,
                )


async def _pieces(
    store: common_pb2.StoreContext, spooled: Path
) -> AsyncIterator[common_pb2.ArchiveChunk]:
    yield common_pb2.ArchiveChunk(store=store)
    with spooled.open("rb") as body:
        while piece := body.read(PIECE_BYTES):
            yield common_pb2.ArchiveChunk(data=piece)
