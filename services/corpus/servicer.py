"""CorpusService: protobuf → corpus domain → protobuf, nothing else."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, TypeAlias

import grpc
from engram.v1 import common_pb2, corpus_pb2, corpus_pb2_grpc

from services.corpus import documents, files, memories, reembed
from services.corpus.core import validate_folder_path
from services.corpus.deps import CorpusDeps
from services.corpus.ingest import INGEST_KIND, check_ingest_request
from services.corpus.sources import search_source, sync_source
from services.corpus.store import CHECKED_PARTS, CorpusStore
from services.runtime.drift import store_check
from services.runtime.errors import InvalidInput
from services.runtime.job_proto import job_payload
from services.runtime.store_backup import BackupRpcs, Snapshots
from services.runtime.stores import validate_store_name

Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]


class CorpusServicer(BackupRpcs, corpus_pb2_grpc.CorpusServiceServicer):
    def __init__(self, deps: CorpusDeps) -> None:
        self._deps = deps

    async def _store(self, store: common_pb2.StoreContext) -> CorpusStore:
        name = validate_store_name(store.name)
        return await asyncio.to_thread(self._deps.stores.get, name)

    # ------------------------------------------------------------------ files

    async def UploadFile(
        self, request_iterator: AsyncIterator[corpus_pb2.UploadFileChunk], context: Context
    ) -> corpus_pb2.CorpusFile:
        first = await anext(aiter(request_iterator), None)
        if first is None or not first.HasField("header"):
            raise InvalidInput("an upload starts with its header", field="header")
        store = await self._store(first.header.store)
        return await files.upload(store, self._deps.size_policy, request_iterator, first)

    async def GetFile(
        self, request: corpus_pb2.GetFileRequest, context: Context
    ) -> corpus_pb2.CorpusFile:
        store = await self._store(request.store)
        return files.file_proto(store.catalog.get(request.file_id))

    async def ListFiles(
        self, request: corpus_pb2.ListFilesRequest, context: Context
    ) -> corpus_pb2.ListFilesResponse:
        store = await self._store(request.store)
        folder = validate_folder_path(request.folder) if request.folder else ""
        records = store.catalog.files(
            folder=folder if (request.folder or not request.recursive) else None,
            recursive=request.recursive,
            states=files.state_names(list(request.states)),
        )
        return files.list_page(records, request.page)

    async def GetTree(
        self, request: corpus_pb2.GetTreeRequest, context: Context
    ) -> corpus_pb2.CorpusTree:
        return files.tree(await self._store(request.store))

    async def CreateFolder(
        self, request: corpus_pb2.CreateFolderRequest, context: Context
    ) -> corpus_pb2.CorpusFolder:
        store = await self._store(request.store)
        path = validate_folder_path(request.path)
        if not path:
            raise InvalidInput("path is empty: the root folder always exists", field="path")
        store.catalog.create_folder(path)
        return corpus_pb2.CorpusFolder(path=path)

    async def RenameFolder(
        self, request: corpus_pb2.RenameFolderRequest, context: Context
    ) -> corpus_pb2.CorpusFolder:
        store = await self._store(request.store)
        path = validate_folder_path(request.path)
        new_path = validate_folder_path(request.new_path)
        if not new_path:
            raise InvalidInput("new_path is empty", field="new_path")
        store.catalog.rename_folder(path, new_path)
        return corpus_pb2.CorpusFolder(path=new_path)

    async def DeleteFolder(
        self, request: corpus_pb2.DeleteFolderRequest, context: Context
    ) -> corpus_pb2.DeleteFolderResponse:
        store = await self._store(request.store)
        return await asyncio.to_thread(files.delete_folder, store, request)

    async def MoveFile(
        self, request: corpus_pb2.MoveFileRequest, context: Context
    ) -> corpus_pb2.CorpusFile:
        store = await self._store(request.store)
        return files.move(store, request)

    async def DeleteFile(
        self, request: corpus_pb2.DeleteFileRequest, context: Context
    ) -> corpus_pb2.DeleteFileResponse:
        store = await self._store(request.store)
        return await asyncio.to_thread(
            files.delete, store, request.file_id, delete_raw=request.delete_raw
        )

    async def MarkFilesAuthored(
        self, request: corpus_pb2.MarkFilesAuthoredRequest, context: Context
    ) -> corpus_pb2.MarkFilesAuthoredResponse:
        store = await self._store(request.store)
        return await asyncio.to_thread(files.mark_authored, store, request)

    # ------------------------------------------------------------------ ingest

    async def IngestFiles(
        self, request: corpus_pb2.IngestFilesRequest, context: Context
    ) -> common_pb2.Job:
        store = await self._store(request.store)
        file_ids = list(dict.fromkeys(request.file_ids))
        check_ingest_request(store, file_ids)
        return await self._deps.jobs.enqueue(
            INGEST_KIND,
            request.store.name,
            job_payload(corpus_pb2.IngestJobPayload(file_ids=file_ids)),
        )

    # ------------------------------------------------------------------ raw memories

    async def AddRawMemory(
        self, request: corpus_pb2.AddRawMemoryRequest, context: Context
    ) -> common_pb2.RawChunk:
        store = await self._store(request.store)
        return await memories.add_memory(
            store, self._deps.embedder, request, self._deps.settings.max_raw_chars
        )

    async def AddRawSession(
        self, request: corpus_pb2.AddRawSessionRequest, context: Context
    ) -> corpus_pb2.AddRawSessionResponse:
        store = await self._store(request.store)
        return await memories.add_session(
            store,
            self._deps.embedder,
            request,
            max_chars=self._deps.settings.max_raw_chars,
            max_turns=self._deps.settings.max_session_turns,
            part_chars=self._deps.settings.max_chunk_chars,
            max_turn_chars=self._deps.settings.max_turn_chars,
        )

    async def SearchRaw(
        self, request: corpus_pb2.SearchRawRequest, context: Context
    ) -> corpus_pb2.SearchRawResponse:
        store = await self._store(request.store)
        return await memories.search_raw(store, self._deps.embedder, request)

    async def ExpandRaw(
        self, request: corpus_pb2.ExpandRawRequest, context: Context
    ) -> corpus_pb2.ExpandRawResponse:
        store = await self._store(request.store)
        return await asyncio.to_thread(memories.expand_raw, store, request)

    async def ListSessions(
        self, request: corpus_pb2.ListSessionsRequest, context: Context
    ) -> corpus_pb2.ListSessionsResponse:
        store = await self._store(request.store)
        return memories.list_sessions(store, request)

    async def GetSessionChunks(
        self, request: corpus_pb2.GetSessionChunksRequest, context: Context
    ) -> corpus_pb2.GetSessionChunksResponse:
        store = await self._store(request.store)
        metas = store.raw.of_session(request.session_id)
        chunks = await asyncio.to_thread(store.raw.get, [m.id for m in metas])
        return corpus_pb2.GetSessionChunksResponse(chunks=chunks)

    async def DeleteRawSessions(
        self, request: corpus_pb2.DeleteRawSessionsRequest, context: Context
    ) -> corpus_pb2.DeleteRawSessionsResponse:
        store = await self._store(request.store)
        deleted = await asyncio.to_thread(
            memories.delete_sessions, store, list(dict.fromkeys(request.session_ids))
        )
        return corpus_pb2.DeleteRawSessionsResponse(raw_chunks_deleted=deleted)

    # ------------------------------------------------------------------ source, documents

    async def SyncSource(
        self, request: corpus_pb2.SyncSourceRequest, context: Context
    ) -> corpus_pb2.SyncSourceResponse:
        store = await self._store(request.store)
        return await sync_source(
            store, self._deps.embedder, request, self._deps.settings.source_roots
        )

    async def SearchSource(
        self, request: corpus_pb2.SearchSourceRequest, context: Context
    ) -> corpus_pb2.SearchSourceResponse:
        store = await self._store(request.store)
        return await search_source(store, self._deps.embedder, request)

    async def QueryDocument(
        self, request: corpus_pb2.QueryDocumentRequest, context: Context
    ) -> corpus_pb2.QueryDocumentResponse:
        store = await self._store(request.store)
        return await documents.query_document(
            store, self._deps.embedder, request, self._deps.settings.query_document_budget
        )

    async def ReembedStore(
        self, request: common_pb2.ReembedStoreRequest, context: Context
    ) -> common_pb2.Job:
        validate_store_name(request.store.name)
        return await reembed.start(self._deps.stores, self._deps.jobs, request)

    async def CheckStore(
        self, request: common_pb2.CheckStoreRequest, context: Context
    ) -> common_pb2.StoreCheck:
        """`engram doctor` for the store's corpus (CorpusStore.check)."""
        store = await self._store(request.store)
        checked, drifts = await asyncio.to_thread(store.check, repair=request.repair)
        return store_check("corpus", checked, CHECKED_PARTS, drifts)

    def snapshots(self) -> Snapshots[CorpusStore]:
        return Snapshots("corpus", self._deps.stores, CorpusStore.snapshot_parts)

    async def DropStore(
        self, request: common_pb2.DropStoreRequest, context: Context
    ) -> common_pb2.DropStoreResponse:
        name = validate_store_name(request.store.name)
        dropped = await asyncio.to_thread(
            self._deps.stores.drop, name, keep_shared=request.keep_shared
        )
        return common_pb2.DropStoreResponse(dropped=dropped)
