"""BackupStore / RestoreStore for any tier that keeps per-store state in `OpenStores`: the
snapshot (services.runtime.snapshot) spooled to a scratch file under the tier's data root,
then streamed out in chunks; a restore spooled in the same way, unpacked into a new store,
its points written, the store reopened. A restore that fails leaves no folder behind."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from engram.v1 import common_pb2

from services.runtime.errors import InvalidInput
from services.runtime.snapshot import (
    StoreParts,
    restore_files,
    restore_points,
    write_snapshot,
)
from services.runtime.stores import Closable, OpenStores, validate_store_name

T = TypeVar("T", bound=Closable)

# Under the tier's data root; never a store name (those start with a letter or digit).
SCRATCH = ".backups"
PIECE_BYTES = 1 << 20


def _scratch_file(stores: OpenStores[T]) -> Path:
    folder = stores.root / SCRATCH
    folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{uuid.uuid4().hex}.tar"


async def backup_chunks(
    stores: OpenStores[T], name: str, tier: str, parts_of: Callable[[T], StoreParts]
) -> AsyncIterator[common_pb2.ArchiveChunk]:
    """The store's snapshot, taken before the first chunk is sent (so a refusal comes first)."""
    state = await asyncio.to_thread(stores.get, validate_store_name(name))
    spooled = _scratch_file(stores)
    try:
        await asyncio.to_thread(write_snapshot, parts_of(state), tier, spooled)
    except BaseException:
        spooled.unlink(missing_ok=True)
        raise

    async def pieces() -> AsyncIterator[common_pb2.ArchiveChunk]:
        try:
            with spooled.open("rb") as archive:
                while piece := await asyncio.to_thread(archive.read, PIECE_BYTES):
                    yield common_pb2.ArchiveChunk(data=piece)
        finally:
            spooled.unlink(missing_ok=True)

    return pieces()


async def restore_from_chunks(
    stores: OpenStores[T],
    chunks: AsyncIterator[common_pb2.ArchiveChunk],
    tier: str,
    parts_of: Callable[[T], StoreParts],
) -> common_pb2.RestoreStoreResponse:
    """A new store from a snapshot: the first chunk names it (`store`)."""
    first = await anext(chunks, None)
    if first is None or not first.store.name:
        raise InvalidInput("a restore's first chunk names the store to create", field="store")
    name = validate_store_name(first.store.name)
    spooled = _scratch_file(stores)
    try:
        with spooled.open("wb") as out:
            out.write(first.data)
            async for chunk in chunks:
                await asyncio.to_thread(out.write, chunk.data)
        files, points = await asyncio.to_thread(_restore, stores, name, spooled, tier, parts_of)
    finally:
        spooled.unlink(missing_ok=True)
    return common_pb2.RestoreStoreResponse(tier=tier, files=files, points=points)


def _restore(
    stores: OpenStores[T],
    name: str,
    archive: Path,
    tier: str,
    parts_of: Callable[[T], StoreParts],
) -> tuple[int, int]:
    files = restore_files(archive, stores.folder(name), tier)
    try:
        points = restore_points(archive, parts_of(stores.get(name)).collections, tier)
        stores.reopen(name)  # derived state (mirrors, indexes) rebuilt from what was written
    except BaseException:
        stores.discard(name)
        raise
    return files, points


@dataclass(frozen=True)
class Snapshots(Generic[T]):
    """What a tier snapshots: its name, its open stores, and how a store's parts are found."""

    tier: str
    stores: OpenStores[T]
    parts_of: Callable[[T], StoreParts]


class BackupRpcs:
    """BackupStore and RestoreStore for a tier's servicer (mixed in before its generated
    base): the servicer says what it snapshots in `snapshots()`."""

    def snapshots(self) -> Snapshots[Any]:
        raise NotImplementedError

    async def BackupStore(
        self, request: common_pb2.BackupStoreRequest, context: Any
    ) -> AsyncIterator[common_pb2.ArchiveChunk]:
        """`engram backup`: this tier's snapshot of the store (services.runtime.snapshot)."""
        what = self.snapshots()
        chunks = await backup_chunks(what.stores, request.store.name, what.tier, what.parts_of)
        async for chunk in chunks:
            yield chunk

    async def RestoreStore(
        self, chunks: AsyncIterator[common_pb2.ArchiveChunk], context: Any
    ) -> common_pb2.RestoreStoreResponse:
        """`engram restore`: a new store from this tier's snapshot."""
        what = self.snapshots()
        return await restore_from_chunks(what.stores, chunks, what.tier, what.parts_of)
