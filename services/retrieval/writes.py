"""Writes to the drawer pool: indexing (embed + upsert), metadata updates, retrieval records.

The authoring tier has already decided the drawers are valid; this tier still refuses what
would corrupt the pool (no content, bad ids, out-of-range numbers), and fills the fields it
owns (content hash, timestamps, initial salience).
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Sequence
from datetime import datetime

from engram.v1 import common_pb2, retrieval_pb2

from services.embedder.client import EmbedderClient
from services.retrieval.core import bumped_salience
from services.retrieval.core.excerpts import excerpt_problem
from services.retrieval.pool import DrawerPool
from services.retrieval.pool.records import content_hash, to_datetime, to_timestamp
from services.runtime.errors import InvalidInput, NotFound
from services.vocabulary import new_drawer_id
from services.vocabulary.enums import PIN_NAMES

DRAWER_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}\Z")
MAX_CONTENT_CHARS = 16_384
MAX_INDEX_BATCH = 1024


def check_drawer(drawer: common_pb2.Drawer, where: str) -> None:
    """Refuse a drawer the pool cannot hold sensibly."""
    if drawer.id and not DRAWER_ID.match(drawer.id):
        raise InvalidInput(
            f"{where}: id {drawer.id!r} must be 1-128 characters of letters, digits, '.', '_', "
            "':' or '-'",
            field="id",
        )
    if not drawer.content.strip():
        raise InvalidInput(f"{where}: content is empty", field="content")
    if len(drawer.content) > MAX_CONTENT_CHARS:
        raise InvalidInput(
            f"{where}: content is {len(drawer.content)} characters; a drawer holds at most "
            f"{MAX_CONTENT_CHARS} (1-3 sentences is the intended shape)",
            field="content",
        )
    if not drawer.memory_type.strip():
        raise InvalidInput(f"{where}: memory_type is empty", field="memory_type")
    _check_excerpts(drawer, where)
    if drawer.salience and not 0.1 <= drawer.salience <= 1.0:
        raise InvalidInput(f"{where}: salience must be within 0.1..1.0", field="salience")
    if drawer.HasField("confidence") and not (
        math.isfinite(drawer.confidence) and 0.0 <= drawer.confidence <= 1.0
    ):
        raise InvalidInput(f"{where}: confidence must be within 0..1", field="confidence")


def _check_excerpts(drawer: common_pb2.Drawer, where: str) -> None:
    problem = excerpt_problem(drawer.derived_from)
    if problem is not None:
        raise InvalidInput(f"{where}: {problem}", field="derived_from.excerpt")


def prepare(drawer: common_pb2.Drawer, now: datetime, initial_salience: float) -> common_pb2.Drawer:
    """A copy with the fields this tier owns filled in."""
    ready = common_pb2.Drawer()
    ready.CopyFrom(drawer)
    ready.id = ready.id or new_drawer_id()
    ready.content_hash = content_hash(ready.content)
    if ready.pin_status == common_pb2.PIN_STATUS_UNSPECIFIED:
        ready.pin_status = common_pb2.PIN_STATUS_ACTIVE
    if not ready.salience:
        ready.salience = initial_salience
    if not ready.HasField("created_at"):
        ready.created_at.CopyFrom(to_timestamp(now))
    if not ready.HasField("last_activity_at"):
        ready.last_activity_at.CopyFrom(ready.created_at)
    ready.updated_at.CopyFrom(to_timestamp(now))
    ready.ClearField("effective_salience")
    return ready


async def index_drawers(
    pool: DrawerPool,
    embedder: EmbedderClient,
    drawers: Sequence[common_pb2.Drawer],
    now: datetime,
    initial_salience: float,
    *,
    revive: bool = False,
) -> tuple[list[common_pb2.Drawer], list[str]]:
    """Validate, embed and upsert drawers (idempotent by id). All or nothing per call.

    Ids the pool deleted before are skipped and returned as forgotten (a replayed compose
    job must not bring back what was deleted), unless `revive` writes them on purpose."""
    if not drawers:
        raise InvalidInput("drawers is empty", field="drawers")
    if len(drawers) > MAX_INDEX_BATCH:
        raise InvalidInput(
            f"{len(drawers)} drawers in one call; the limit is {MAX_INDEX_BATCH}", field="drawers"
        )
    for index, drawer in enumerate(drawers):
        check_drawer(drawer, f"drawers[{index}]")
    ready = [prepare(d, now, initial_salience) for d in drawers]
    ids = [d.id for d in ready]
    if len(set(ids)) != len(ids):
        raise InvalidInput("the same drawer id appears twice in one call", field="drawers")
    buried = await asyncio.to_thread(pool.tombstones.buried, ids)
    if revive:
        await asyncio.to_thread(pool.tombstones.lift, sorted(buried))
        buried = set()
    ready = [d for d in ready if d.id not in buried]
    if ready:
        vectors = await embedder.embed([d.content for d in ready])
        await asyncio.to_thread(pool.upsert, ready, vectors)
    return ready, [i for i in ids if i in buried]


def update_metadata(
    pool: DrawerPool, request: retrieval_pb2.UpdateDrawerMetadataRequest, now: datetime
) -> common_pb2.Drawer:
    """Pin / unpin / deprecate, move, retag; text and vector stay as they are."""

    def change(found: list[common_pb2.Drawer]) -> None:
        if not found:
            raise NotFound(f"drawer {request.id!r} does not exist in this store", field="id")
        _apply_metadata(found[0], request, now)

    return pool.modify([request.id], change)[0]


def _apply_metadata(
    drawer: common_pb2.Drawer, request: retrieval_pb2.UpdateDrawerMetadataRequest, now: datetime
) -> None:
    if request.HasField("pin_status"):
        if request.pin_status not in PIN_NAMES or request.pin_status == 0:
            raise InvalidInput(
                "pin_status must be ACTIVE, PINNED or DEPRECATED", field="pin_status"
            )
        drawer.pin_status = request.pin_status
    for name in ("wing", "room", "topic"):
        if request.HasField(name):
            setattr(drawer, name, getattr(request, name))
    if request.HasField("salience"):
        if not 0.1 <= request.salience <= 1.0:
            raise InvalidInput("salience must be within 0.1..1.0", field="salience")
        drawer.salience = request.salience
    if request.HasField("confidence"):
        if not (math.isfinite(request.confidence) and 0.0 <= request.confidence <= 1.0):
            raise InvalidInput("confidence must be within 0..1", field="confidence")
        drawer.confidence = request.confidence
    for key, value in request.attributes.items():
        drawer.attributes[key] = value
    drawer.updated_at.CopyFrom(to_timestamp(now))


def record_retrieval(
    pool: DrawerPool, ids: Sequence[str], now: datetime
) -> list[common_pb2.Drawer]:
    """The explicit signal that drawers were used: salience +0.1 (capped), activity = now.
    Atomic per call (`DrawerPool.modify`): concurrent records each count."""
    if not ids:
        raise InvalidInput("drawer_ids is empty", field="drawer_ids")
    wanted = list(dict.fromkeys(ids))

    def bump(drawers: list[common_pb2.Drawer]) -> None:
        missing = set(wanted) - {d.id for d in drawers}
        if missing:
            raise NotFound(f"no such drawers: {sorted(missing)}", field="drawer_ids")
        for drawer in drawers:
            pinned = drawer.pin_status == common_pb2.PIN_STATUS_PINNED
            drawer.salience = bumped_salience(
                drawer.salience, to_datetime(drawer.last_activity_at), now, pinned=pinned
            )
            drawer.last_activity_at.CopyFrom(to_timestamp(now))
            drawer.retrieval_count += 1

    return pool.modify(wanted, bump)
