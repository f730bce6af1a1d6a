"""Files, the durable first tier: streamed upload, the folder tree, moves, deletes (with the
walkback of their raw chunks). Protobuf in, protobuf out; storage is catalog + blobs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from engram.v1 import common_pb2, corpus_pb2

from services.corpus.core import (
    DetectedType,
    SizeTier,
    SizeTierPolicy,
    check_size,
    detect_type,
    synopsis_of,
    validate_file_name,
    validate_folder_path,
)
from services.corpus.store import CorpusStore, FileRecord
from services.runtime.errors import InvalidInput, NotFound
from services.runtime.paging import page_offset, page_token

_STATES = {
    "uploaded": corpus_pb2.FILE_STATE_UPLOADED,
    "ingested": corpus_pb2.FILE_STATE_INGESTED,
    "authored": corpus_pb2.FILE_STATE_AUTHORED,
    "failed": corpus_pb2.FILE_STATE_FAILED,
}
STATE_NAMES = {v: k for k, v in _STATES.items()}
_TIERS = {
    "full": corpus_pb2.SIZE_TIER_FULL,
    "streamed": corpus_pb2.SIZE_TIER_STREAMED,
    "document": corpus_pb2.SIZE_TIER_DOCUMENT,
}


def file_proto(record: FileRecord) -> corpus_pb2.CorpusFile:
    proto = corpus_pb2.CorpusFile(
        id=record.id,
        name=record.name,
        folder=record.folder,
        size_bytes=record.size,
        detected_type=record.detected_type,
        sha256=record.sha256,
        state=_STATES[record.state],
        size_tier=_TIERS[record.size_tier],
        chunk_count=record.chunk_count,
        derived_drawer_count=record.derived_drawer_count,
        synopsis=record.synopsis,
        last_error=record.last_error,
        report={k: str(v) for k, v in record.report.items()},
    )
    proto.created_at.FromSeconds(int(record.created_at))
    proto.updated_at.FromSeconds(int(record.updated_at))
    return proto


def _synopsis_of(path: Path, detected: DetectedType) -> str:
    """First 8 KiB verbatim plus the h1/h2 outline, read streaming (never the whole body)."""
    with path.open("rb") as body:
        return synopsis_of(detected, body)


async def upload(
    store: CorpusStore,
    policy: SizeTierPolicy,
    requests: AsyncIterator[corpus_pb2.UploadFileChunk],
    first: corpus_pb2.UploadFileChunk,
) -> corpus_pb2.CorpusFile:
    """Store a streamed upload: the header first, then data chunks."""
    if not first.HasField("header"):
        raise InvalidInput("the first message of an upload must be its header", field="header")
    header = first.header
    name = validate_file_name(header.name)
    folder = validate_folder_path(header.folder)
    if header.declared_size:
        check_size(header.declared_size, name)  # refuse before a single byte is stored

    async def data() -> AsyncIterator[bytes]:
        async for message in requests:
            if message.HasField("header"):
                raise InvalidInput("an upload has exactly one header, first", field="header")
            yield message.data

    blob = await store.blobs.write_stream(name, data())
    detected = detect_type(name, blob.head)
    if detected.is_binary:
        if not blob.already_stored and not store.catalog.sha_in_use(blob.sha256):
            store.blobs.delete(blob.sha256)
        detected.refuse_binary(name)
    tier = policy.tier_for(blob.size)
    synopsis = ""
    if tier is not SizeTier.FULL:
        synopsis = await asyncio.to_thread(_synopsis_of, blob.path, detected)
    record = store.catalog.add_file(
        FileRecord(
            id="",
            name=name,
            folder=folder,
            size=blob.size,
            detected_type=detected.kind.value,
            sha256=blob.sha256,
            state="uploaded",
            size_tier=tier.value,
            synopsis=synopsis,
        )
    )
    return file_proto(record)


def tree(store: CorpusStore) -> corpus_pb2.CorpusTree:
    """Every folder and file as a nested tree."""
    root = corpus_pb2.CorpusFolder(path="")
    nodes = {"": root}

    def node(path: str) -> corpus_pb2.CorpusFolder:
        if path not in nodes:
            parent = node(path.rsplit("/", 1)[0] if "/" in path else "")
            nodes[path] = parent.folders.add(path=path)
        return nodes[path]

    for path in store.catalog.folders():
        node(path)
    for record in store.catalog.files(folder=None):
        node(record.folder).files.append(file_proto(record))
    for folder in nodes.values():
        folder.file_count = len(folder.files)
    return corpus_pb2.CorpusTree(root=root)


def move(store: CorpusStore, request: corpus_pb2.MoveFileRequest) -> corpus_pb2.CorpusFile:
    folder = validate_folder_path(request.folder)
    changes: dict[str, object] = {"folder": folder}
    if request.new_name:
        changes["name"] = validate_file_name(request.new_name)
    store.catalog.create_folder(folder)
    return file_proto(store.catalog.update(request.file_id, **changes))


def delete(store: CorpusStore, file_id: str, *, delete_raw: bool) -> corpus_pb2.DeleteFileResponse:
    """Delete a file; with `delete_raw`, its raw chunks too (walkback). The body goes when no
    other catalog entry shares it."""
    with store.lock:
        record = store.catalog.delete_file(file_id)
        deleted: list[str] = []
        sessions: list[str] = []
        if delete_raw:
            sessions = sorted({m.session_id for m in store.raw.of_file(file_id)})
            deleted = store.raw.delete_where(file_id=file_id)
        if not store.catalog.sha_in_use(record.sha256):
            store.blobs.delete(record.sha256)
    return corpus_pb2.DeleteFileResponse(
        deleted=True, raw_chunks_deleted=len(deleted), session_ids=sessions
    )


def delete_folder(
    store: CorpusStore, request: corpus_pb2.DeleteFolderRequest
) -> corpus_pb2.DeleteFolderResponse:
    path = validate_folder_path(request.path)
    with store.lock:
        removed = store.catalog.delete_folder(path, recursive=request.recursive)
        chunks = 0
        for record in removed:
            if request.delete_raw:
                chunks += len(store.raw.delete_where(file_id=record.id))
            if not store.catalog.sha_in_use(record.sha256):
                store.blobs.delete(record.sha256)
    return corpus_pb2.DeleteFolderResponse(files_deleted=len(removed), raw_chunks_deleted=chunks)


def mark_authored(
    store: CorpusStore, request: corpus_pb2.MarkFilesAuthoredRequest
) -> corpus_pb2.MarkFilesAuthoredResponse:
    """The authoring tier reports how many drawers it derived from each file. A file deleted
    since (a compose replayed after a walkback) is named back, not an error: there is nothing
    left to mark, and the other files' counts still hold."""
    answer = corpus_pb2.MarkFilesAuthoredResponse()
    with store.lock:
        for file_id, count in sorted(request.derived_drawers_by_file.items()):
            try:
                current = store.catalog.get(file_id).state
            except NotFound:
                answer.missing_file_ids.append(file_id)
                continue
            # No drawer derives from it any more (walkback): it is back to merely ingested.
            state = "authored" if count else ("ingested" if current == "authored" else current)
            store.catalog.update(file_id, derived_drawer_count=count, state=state)
            answer.updated += 1
    return answer


def list_page(
    records: list[FileRecord], page: common_pb2.PageRequest
) -> corpus_pb2.ListFilesResponse:
    size = page.page_size or 100
    if size > 1000:
        raise InvalidInput("page_size must be at most 1000", field="page.page_size")
    offset = page_offset(page.page_token)
    following = offset + size
    return corpus_pb2.ListFilesResponse(
        files=[file_proto(r) for r in records[offset:following]],
        page=common_pb2.PageResponse(
            next_page_token=page_token(following) if following < len(records) else "",
            total=len(records),
        ),
    )


def state_names(states: list[int]) -> list[str]:
    return [STATE_NAMES[s] for s in states if s in STATE_NAMES]  # type: ignore[index]
