"""Corpus operations: raw memories and sessions, streamed uploads, files, folders, ingest,
source chunks and document queries (the corpus tier)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import cast

from engram.v1 import common_pb2, corpus_pb2

from gateway.core.access import TierCalls, too_large
from gateway.core.principal import Principal


class CorpusOperations(TierCalls):
    """Raw memories, files and folders, ingest, source, documents."""

    # ------------------------------------------------------------------ raw memories

    async def add_raw_memory(
        self, principal: Principal, request: corpus_pb2.AddRawMemoryRequest
    ) -> common_pb2.RawChunk:
        return await self._store_call(
            principal, "add_raw_memory", request, self._tiers.corpus.AddRawMemory
        )

    async def add_raw_session(
        self, principal: Principal, request: corpus_pb2.AddRawSessionRequest
    ) -> corpus_pb2.AddRawSessionResponse:
        return await self._store_call(
            principal, "add_raw_session", request, self._tiers.corpus.AddRawSession
        )

    async def search_raw(
        self, principal: Principal, request: corpus_pb2.SearchRawRequest
    ) -> corpus_pb2.SearchRawResponse:
        return await self._store_call(
            principal, "search_raw", request, self._tiers.corpus.SearchRaw
        )

    async def expand_raw(
        self, principal: Principal, request: corpus_pb2.ExpandRawRequest
    ) -> corpus_pb2.ExpandRawResponse:
        return await self._store_call(
            principal, "expand_raw", request, self._tiers.corpus.ExpandRaw
        )

    async def list_sessions(
        self, principal: Principal, request: corpus_pb2.ListSessionsRequest
    ) -> corpus_pb2.ListSessionsResponse:
        return await self._store_call(
            principal, "list_sessions", request, self._tiers.corpus.ListSessions
        )

    async def get_session_chunks(
        self, principal: Principal, request: corpus_pb2.GetSessionChunksRequest
    ) -> corpus_pb2.GetSessionChunksResponse:
        return await self._store_call(
            principal, "get_session_chunks", request, self._tiers.corpus.GetSessionChunks
        )

    # ------------------------------------------------------------------ corpus

    async def upload_file(
        self,
        principal: Principal,
        header: corpus_pb2.UploadFileHeader,
        data: AsyncIterator[bytes],
    ) -> corpus_pb2.CorpusFile:
        """Stream a file to the corpus tier: `header` names the store, file and folder; `data`
        is read piece by piece, never held whole. Over `max_upload_bytes` it is refused."""
        self._enter(principal, "upload_file", header.store)
        if header.declared_size > self._max_upload:
            raise too_large(header.declared_size, self._max_upload, header.name)
        limit, name = self._max_upload, header.name

        async def chunks() -> AsyncIterator[corpus_pb2.UploadFileChunk]:
            yield corpus_pb2.UploadFileChunk(header=header)
            size = 0
            async for piece in data:
                size += len(piece)
                if size > limit:
                    raise too_large(size, limit, name)
                if piece:
                    yield corpus_pb2.UploadFileChunk(data=piece)

        answer = await self._client_stream(self._tiers.corpus.UploadFile, chunks())
        return cast(corpus_pb2.CorpusFile, answer)

    async def get_file(
        self, principal: Principal, request: corpus_pb2.GetFileRequest
    ) -> corpus_pb2.CorpusFile:
        return await self._store_call(principal, "get_file", request, self._tiers.corpus.GetFile)

    async def list_files(
        self, principal: Principal, request: corpus_pb2.ListFilesRequest
    ) -> corpus_pb2.ListFilesResponse:
        return await self._store_call(
            principal, "list_files", request, self._tiers.corpus.ListFiles
        )

    async def get_tree(
        self, principal: Principal, request: corpus_pb2.GetTreeRequest
    ) -> corpus_pb2.CorpusTree:
        return await self._store_call(principal, "get_tree", request, self._tiers.corpus.GetTree)

    async def create_folder(
        self, principal: Principal, request: corpus_pb2.CreateFolderRequest
    ) -> corpus_pb2.CorpusFolder:
        return await self._store_call(
            principal, "create_folder", request, self._tiers.corpus.CreateFolder
        )

    async def rename_folder(
        self, principal: Principal, request: corpus_pb2.RenameFolderRequest
    ) -> corpus_pb2.CorpusFolder:
        return await self._store_call(
            principal, "rename_folder", request, self._tiers.corpus.RenameFolder
        )

    async def delete_folder(
        self, principal: Principal, request: corpus_pb2.DeleteFolderRequest
    ) -> corpus_pb2.DeleteFolderResponse:
        return await self._store_call(
            principal, "delete_folder", request, self._tiers.corpus.DeleteFolder
        )

    async def move_file(
        self, principal: Principal, request: corpus_pb2.MoveFileRequest
    ) -> corpus_pb2.CorpusFile:
        return await self._store_call(principal, "move_file", request, self._tiers.corpus.MoveFile)

    async def delete_file(
        self, principal: Principal, request: corpus_pb2.DeleteFileRequest
    ) -> corpus_pb2.DeleteFileResponse:
        return await self._store_call(
            principal, "delete_file", request, self._tiers.corpus.DeleteFile
        )

    async def ingest_files(
        self, principal: Principal, request: corpus_pb2.IngestFilesRequest
    ) -> common_pb2.Job:
        return await self._store_call(
            principal, "ingest_files", request, self._tiers.corpus.IngestFiles
        )

    async def sync_source(
        self, principal: Principal, request: corpus_pb2.SyncSourceRequest
    ) -> corpus_pb2.SyncSourceResponse:
        return await self._store_call(
            principal, "sync_source", request, self._tiers.corpus.SyncSource
        )

    async def search_source(
        self, principal: Principal, request: corpus_pb2.SearchSourceRequest
    ) -> corpus_pb2.SearchSourceResponse:
        return await self._store_call(
            principal, "search_source", request, self._tiers.corpus.SearchSource
        )

    async def query_document(
        self, principal: Principal, request: corpus_pb2.QueryDocumentRequest
    ) -> corpus_pb2.QueryDocumentResponse:
        return await self._store_call(
            principal, "query_document", request, self._tiers.corpus.QueryDocument
        )
