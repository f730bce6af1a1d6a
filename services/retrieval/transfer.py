"""Export and import of a store's drawers as JSONL (every stored field; the line codec is
core/drawer_jsonl.py). Import validates every line before it writes anything."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime

from services.embedder.client import EmbedderClient
from services.retrieval.core.drawer_jsonl import LineError, drawer_to_line, parse_lines
from services.retrieval.pool import DrawerPool
from services.retrieval.writes import MAX_CONTENT_CHARS, prepare
from services.runtime.errors import InvalidInput

EXPORT_CHUNK_BYTES = 256 * 1024
EXPORT_PAGE = 256
IMPORT_BATCH = 256


async def export_lines(pool: DrawerPool) -> AsyncIterator[bytes]:
    """The pool as JSONL, oldest first, in chunks of whole lines."""
    metas = sorted(pool.metas(), key=lambda m: (m.created_at, m.id))
    buffer: list[bytes] = []
    size = 0
    for offset in range(0, len(metas), EXPORT_PAGE):
        ids = [m.id for m in metas[offset : offset + EXPORT_PAGE]]
        for drawer in await asyncio.to_thread(pool.get_many, ids):
            line = (drawer_to_line(drawer) + "\n").encode("utf-8")
            buffer.append(line)
            size += len(line)
            if size >= EXPORT_CHUNK_BYTES:
                yield b"".join(buffer)
                buffer, size = [], 0
    if buffer:
        yield b"".join(buffer)


async def import_drawers(
    pool: DrawerPool,
    embedder: EmbedderClient,
    data: bytes,
    *,
    replace_existing: bool,
    initial_salience: float,
) -> int:
    """Validate every line, then (only if all are valid) re-embed and write them all.
    Any bad line refuses the whole import (InvalidInput naming the bad lines)."""
    parsed = parse_lines(data.splitlines(), max_content_chars=MAX_CONTENT_CHARS)
    errors = list(parsed.errors)
    if not replace_existing:
        for number, drawer in zip(parsed.line_numbers, parsed.drawers, strict=True):
            if pool.meta(drawer.id) is not None:
                errors.append(
                    LineError(
                        number,
                        f"drawer {drawer.id!r} already exists; import with replace_existing "
                        "to overwrite it",
                    )
                )
    if errors or parsed.errors_not_listed:
        ordered = sorted(errors, key=lambda e: e.line)
        raise InvalidInput(refusal_message(ordered, parsed.errors_not_listed), field="jsonl")
    now = datetime.now(UTC)
    written = 0
    for offset in range(0, len(parsed.drawers), IMPORT_BATCH):
        batch = [
            prepare(d, now, initial_salience)
            for d in parsed.drawers[offset : offset + IMPORT_BATCH]
        ]
        for drawer, original in zip(
            batch, parsed.drawers[offset : offset + IMPORT_BATCH], strict=True
        ):
            # An import restores history: keep the file's update time when it has one.
            if original.HasField("updated_at"):
                drawer.updated_at.CopyFrom(original.updated_at)
        vectors = await embedder.embed([d.content for d in batch])
        # An import restores: drawers deleted since the export are written again.
        await asyncio.to_thread(pool.tombstones.lift, [d.id for d in batch])
        await asyncio.to_thread(pool.upsert, batch, vectors)
        written += len(batch)
    return written


# Bad lines a refused import names in its error message.
REFUSAL_LINES_SHOWN = 10


def refusal_message(errors: list[LineError], unlisted: int = 0) -> str:
    """Why an import was refused, naming its first bad lines; `unlisted` more were found
    but not kept (the parser stops listing after its own limit)."""
    shown = "; ".join(f"line {e.line}: {e.message}" for e in errors[:REFUSAL_LINES_SHOWN])
    total = len(errors) + unlisted
    more = total - min(len(errors), REFUSAL_LINES_SHOWN)
    tail = f"; and {more} more" if more > 0 else ""
    lines = "1 bad line" if total == 1 else f"{total} bad lines"
    return f"nothing was imported ({lines}; fix them and import the file again): {shown}{tail}"
