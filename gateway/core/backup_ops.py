"""Whole-store backups (`engram backup` / `engram restore`): the gateway gathers each tier's
snapshot (BackupStore on retrieval, authoring and corpus: services.runtime.snapshot) and its
own registry entry into one tar archive, and builds a new store from one.

The archive:

    engram-backup.json   format, the store's spec (proto JSON), when, by which version, and
                         the tiers in the order they were taken
    <tier>.tar           each tier's snapshot, as the tier wrote it

Tiers are snapshotted one after another, retrieval first: a drawer names the raw chunks it
was composed from, and those existed before it, so they are in the later corpus snapshot.
Archives are spooled to the gateway's scratch folder (tar needs each member's size first).
"""

from __future__ import annotations

import json
import shutil
import tarfile
import time
import uuid
from collections.abc import AsyncIterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import grpc
from engram.v1 import common_pb2, gateway_pb2
from google.protobuf import json_format

from gateway.core.access import TierCalls
from gateway.core.principal import Principal, Tier
from services.runtime.errors import Conflict, EngramError, InvalidInput, NotFound, TooLarge
from services.runtime.grpc_client import call, domain_error
from services.runtime.stores import validate_store_name

FORMAT = 1
MANIFEST = "engram-backup.json"
# Drawers first: what they derive from (raw chunks, authoring state) is taken after them.
TIER_ORDER = ("retrieval", "authoring", "corpus")
PIECE_BYTES = 1 << 20


class BackupOperations(TierCalls):
    """BackupStore and RestoreStore."""

    scratch_dir: Path
    max_restore_bytes: int

    def _scratch(self) -> Path:
        folder = self.scratch_dir / f"backup-{uuid.uuid4().hex}"
        folder.mkdir(parents=True)
        return folder

    async def backup_store(
        self, principal: Principal, request: common_pb2.BackupStoreRequest
    ) -> AsyncIterator[bytes]:
        """The archive, in pieces. Every tier's snapshot is taken before this returns, so a
        refusal or a failing tier is an error rather than a cut-short download."""
        self._enter(principal, "backup_store", request.store)
        name = request.store.name
        spec = self.registry.get(name).spec
        scratch = self._scratch()
        try:
            sizes = {}
            for tier in TIER_ORDER:
                stub = self._tiers.routers[tier]
                sizes[tier] = await spool_stream(
                    stub.BackupStore(request, timeout=self._stream_deadline),
                    scratch / f"{tier}.tar",
                )
            manifest = {
                "format": FORMAT,
                "store": json_format.MessageToDict(spec, preserving_proto_field_name=True),
                "created_at": time.time(),
                "version": _version(),
                "tiers": list(TIER_ORDER),
                "sizes": sizes,
            }
            archive = scratch / "backup.tar"
            with tarfile.open(archive, "w") as out:
                (scratch / MANIFEST).write_text(json.dumps(manifest, indent=1))
                out.add(scratch / MANIFEST, arcname=MANIFEST)
                for tier in TIER_ORDER:
                    out.add(scratch / f"{tier}.tar", arcname=f"{tier}.tar")
                    (scratch / f"{tier}.tar").unlink()
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise

        async def pieces() -> AsyncIterator[bytes]:
            try:
                with archive.open("rb") as body:
                    while piece := body.read(PIECE_BYTES):
                        yield piece
            finally:
                shutil.rmtree(scratch, ignore_errors=True)

        return pieces()

    async def restore_store(
        self, principal: Principal, first: common_pb2.ArchiveChunk, rest: AsyncIterator[bytes]
    ) -> gateway_pb2.StoreInfo:
        """A new store from a backup archive: `first` names it (`store.name`) and may carry
        the archive's first bytes, `rest` the others. Every tier restores its snapshot, then
        the registry entry is made (the archive's spec, under the new name). Refused when
        the name is taken; a tier that fails undoes what the others restored."""
        principal.require(Tier.ADMIN, "restoring a store")
        if not first.store.name:
            raise InvalidInput("a restore names the store to create", field="store.name")
        name = validate_store_name(first.store.name)
        principal.require_store(name)
        with suppress(NotFound):
            self.registry.get(name)
            raise Conflict(f"store {name!r} exists; restore under a new name", field="store")
        scratch = self._scratch()
        try:
            spooled = scratch / "backup.tar"
            await _spool_bytes(_prefixed(first.data, rest), spooled, self.max_restore_bytes)
            spec = _read_spec(spooled, name)
            # Where the new store goes is decided now: each tier restores on its replica.
            target = common_pb2.StoreContext(name=name, placement=self._tiers.place(name))
            restored: list[str] = []
            try:
                for tier in TIER_ORDER:
                    await self._restore_tier(tier, target, spooled)
                    restored.append(tier)
            except BaseException:
                await self._undo(target, restored)
                raise
            return self.registry.create(spec, placement=target.placement)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    async def _restore_tier(
        self, tier: str, target: common_pb2.StoreContext, spooled: Path
    ) -> None:
        with tarfile.open(spooled, "r") as outer:
            member = _member(outer, f"{tier}.tar")

            async def chunks() -> AsyncIterator[common_pb2.ArchiveChunk]:
                yield common_pb2.ArchiveChunk(store=target)
                while piece := member.read(PIECE_BYTES):
                    yield common_pb2.ArchiveChunk(data=piece)

            replica = self._tiers.routers[tier].for_store(target)
            await self._client_stream(replica.RestoreStore, chunks())

    async def _undo(self, target: common_pb2.StoreContext, tiers: list[str]) -> None:
        drop = common_pb2.DropStoreRequest(store=target)
        for tier in tiers:
            with suppress(EngramError):
                await call(self._tiers.routers[tier].DropStore, drop)


async def _prefixed(head: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if head:
        yield head
    async for piece in rest:
        yield piece


async def spool_stream(stream: Any, path: Path) -> int:
    size = 0
    try:
        with path.open("wb") as out:
            async for chunk in stream:
                out.write(chunk.data)
                size += len(chunk.data)
    except grpc.aio.AioRpcError as error:
        raise domain_error(error) from error
    return size


async def _spool_bytes(pieces: AsyncIterator[bytes], path: Path, limit: int) -> None:
    size = 0
    with path.open("wb") as out:
        async for piece in pieces:
            size += len(piece)
            if size > limit:
                raise TooLarge(
                    f"the archive is over {limit / 1e9:g} GB, the restore limit "
                    "(ENGRAM_GATEWAY_MAX_RESTORE_BYTES)",
                    field="body",
                )
            out.write(piece)
    if size == 0:
        raise InvalidInput("the request has no archive: send the file `engram backup` wrote")


def _member(outer: tarfile.TarFile, name: str) -> Any:
    try:
        member = outer.extractfile(name)
    except KeyError as error:
        raise InvalidInput(f"the archive lacks {name}: not a complete Engram backup") from error
    if member is None:
        raise InvalidInput(f"the archive's {name} is not a file")
    return member


def _read_spec(spooled: Path, name: str) -> gateway_pb2.StoreSpec:
    try:
        with tarfile.open(spooled, "r") as outer:
            manifest = json.loads(_member(outer, MANIFEST).read())
    except (tarfile.TarError, json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InvalidInput(f"not an Engram backup archive: {error}") from error
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise InvalidInput(f"not an Engram backup of format {FORMAT}", field="body")
    spec = gateway_pb2.StoreSpec()
    try:
        json_format.ParseDict(manifest.get("store", {}), spec)
    except json_format.ParseError as error:
        raise InvalidInput(f"the backup's store spec cannot be read: {error}") from error
    spec.name = name
    return spec


def _version() -> str:
    from gateway.core.service import gateway_version  # late: that module imports this one

    return gateway_version()
