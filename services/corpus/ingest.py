"""Ingest: files → raw chunks, run as Redis jobs (`ingest_files`).

Each file is chunked by its detected type (size tier decides what is chunked: the full body,
the body streamed, or only the synopsis of a stored raw document; a chat export is always read
whole, a conversation at a time, each conversation a session of its own named
``file-<id>-<conversation id>``), embedded, and written with
`RawStore.replace_file`: chunk ids are derived from the file's hash, the chunker version and
the position, so running an ingest twice — or again after a worker died half-way — ends in
exactly the state of one run. A file that fails (encrypted PDF, binary) is marked failed with
its reason; the job goes on with the others.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from engram.v1 import common_pb2, corpus_pb2

from services.corpus.core import ChunkOptions, SizeTier, chunk_file, chunk_synopsis, detect_type
from services.corpus.store import CorpusStore, FileRecord
from services.corpus.store.raw import chunk_id
from services.embedder.client import EmbedderClient
from services.runtime.errors import EngramError, InvalidInput, Overloaded, Unavailable
from services.runtime.job_proto import read_payload
from services.runtime.jobs import JobContext
from services.runtime.stores import OpenStores

logger = logging.getLogger(__name__)

INGEST_KIND = "ingest_files"
EMBED_BATCH = 128


@dataclass(frozen=True)
class IngestOutcome:
    file_id: str
    chunks: int
    replaced: int


def _raw_chunks(
    record: FileRecord, store: CorpusStore, options: ChunkOptions
) -> tuple[list[common_pb2.RawChunk], dict[str, int], str]:
    """Chunk one file (blocking: runs in a worker thread)."""
    with store.blobs.open(record.sha256) as body:
        detected = detect_type(record.name, body.read(8192))
        body.seek(0)
        if detected.is_binary:
            detected.refuse_binary()
        if SizeTier(record.size_tier) is SizeTier.DOCUMENT and not detected.is_chat_export:
            # Tier 3: the body stays a stored raw document; chunks come from the synopsis.
            result = chunk_synopsis(
                record.synopsis, origin_kind=detected.kind.value, options=options
            )
        else:
            result = chunk_file(detected, body, options=options)
        drafts = list(result.chunks)
    session = result.session_hint or record.session_id
    created = datetime.now(UTC)
    chunks = []
    for draft in drafts:
        chunk = common_pb2.RawChunk(
            id=chunk_id(record.sha256 + record.id, result.version, draft.ordinal),
            session_id=f"{session}-{draft.session_key}" if draft.session_key else session,
            origin_kind=draft.origin_kind or result.origin_kind,
            content=draft.content,
            ordinal=draft.ordinal,
            file_id=record.id,
            byte_start=draft.byte_start,
            byte_end=draft.byte_end,
            line_start=draft.line_start,
            line_end=draft.line_end,
            page=draft.page,
            heading_path=list(draft.heading_path),
            chunker_version=result.version,
            speaker=draft.speaker,
            attributes=dict(draft.attributes),
        )
        chunk.created_at.FromDatetime(created)
        if draft.occurred_at is not None:
            chunk.occurred_at.FromDatetime(draft.occurred_at)
        chunks.append(chunk)
    return chunks, result.report.as_dict(), result.version


async def ingest_file(
    store: CorpusStore, embedder: EmbedderClient, file_id: str, options: ChunkOptions
) -> IngestOutcome:
    """Chunk, embed and write one file's raw chunks; the catalog records the outcome."""
    record = store.catalog.get(file_id)
    try:
        chunks, report, version = await asyncio.to_thread(_raw_chunks, record, store, options)
    except EngramError as error:
        store.catalog.update(file_id, state="failed", last_error=error.message)
        raise
    vectors = await embedder.embed([c.content for c in chunks]) if chunks else None
    with store.lock:
        # Deleted while it was chunked and embedded: write nothing (NotFound), or the delete
        # would be undone by orphan chunks of a file that no longer exists.
        store.catalog.get(file_id)
        if vectors is None:
            replaced = len(await asyncio.to_thread(store.raw.delete_where, file_id=file_id))
        else:
            replaced = await asyncio.to_thread(store.raw.replace_file, file_id, chunks, vectors)
        state = "authored" if record.state == "authored" else "ingested"
        store.catalog.update(
            file_id,
            state=state,
            chunk_count=len(chunks),
            report=report,
            chunker_version=version,
            last_error="",
        )
    return IngestOutcome(file_id, len(chunks), replaced)


def ingest_handler(
    stores: OpenStores[CorpusStore], embedder: EmbedderClient, options: ChunkOptions
) -> Any:
    """The `ingest_files` job: every file in turn, progress per file, errors per file."""

    async def handle(ctx: JobContext, queued: dict[str, Any]) -> common_pb2.IngestResult:
        store = await asyncio.to_thread(stores.get, ctx.store)
        file_ids = list(read_payload(queued, corpus_pb2.IngestJobPayload).file_ids)
        chunks = failed = 0
        await ctx.report(items_done=0, items_total=len(file_ids), units_done=0, unit="chunks")
        for done, file_id in enumerate(file_ids, start=1):
            try:
                outcome = await ingest_file(store, embedder, file_id, options)
                chunks += outcome.chunks
            except (Unavailable, Overloaded):
                raise  # passing (the embedder restarting): the job is retried later
            except EngramError as error:
                failed += 1
                await ctx.item_error(file_id, error.code, error.message)
            await ctx.report(
                items_done=done,
                items_total=len(file_ids),
                units_done=chunks,
                unit="chunks",
                message=f"{done}/{len(file_ids)} files",
            )
        return common_pb2.IngestResult(files=len(file_ids), failed=failed, chunks=chunks)

    return handle


def check_ingest_request(store: CorpusStore, file_ids: Sequence[str]) -> None:
    """Refuse an ingest naming no files, too many, or files that do not exist."""
    if not file_ids:
        raise InvalidInput("file_ids is empty", field="file_ids")
    if len(file_ids) > 10_000:
        raise InvalidInput("at most 10,000 files per ingest", field="file_ids")
    for file_id in file_ids:
        store.catalog.get(file_id)
