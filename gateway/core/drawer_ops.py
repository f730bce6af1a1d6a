"""Drawer operations the gateway does more than forward: JSONL export and import (streamed,
bounded) and batched search. Every other drawer operation is forwarded as the operation table
declares (`TierCalls.forward`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import cast

import grpc
from engram.v1 import retrieval_pb2

from gateway.core.access import TierCalls
from gateway.core.principal import Principal
from services.runtime.errors import TooLarge
from services.runtime.grpc_client import domain_error


class DrawerOperations(TierCalls):
    """JSONL import and export, batched search."""

    # ------------------------------------------------------------------ JSONL transfer

    async def export_drawers(
        self, principal: Principal, request: retrieval_pb2.ExportDrawersRequest
    ) -> AsyncIterator[bytes]:
        """The store's drawers as JSONL pieces. The first piece is fetched before this returns,
        so a refusal is raised here rather than in the middle of a response."""
        self._enter(principal, "export_drawers", request.store)
        stream = self._tiers.retrieval.ExportDrawers(request, timeout=self._stream_deadline)
        pieces = stream.__aiter__()
        try:
            first = await anext(pieces, None)
        except grpc.aio.AioRpcError as error:
            raise domain_error(error) from error

        async def rest() -> AsyncIterator[bytes]:
            if first is None:
                return
            yield first.jsonl
            try:
                async for piece in pieces:
                    yield piece.jsonl
            except grpc.aio.AioRpcError as error:
                raise domain_error(error) from error

        return rest()

    async def import_drawers(
        self,
        principal: Principal,
        request: retrieval_pb2.ImportDrawersChunk,
        jsonl: AsyncIterator[bytes],
    ) -> retrieval_pb2.ImportDrawersResponse:
        """Import JSONL drawers; `request` carries the store and `replace_existing`. Over
        `max_upload_bytes` the import is refused and the tier's call cancelled (nothing is
        written: the tier validates the whole import before it writes)."""
        self._enter(principal, "import_drawers", request.store)
        first = retrieval_pb2.ImportDrawersChunk()
        first.CopyFrom(request)
        limit = self._max_upload

        def over(size: int) -> TooLarge:
            return TooLarge(
                f"the import is over {limit / 1e6:g} MB, the limit: split it into several",
                field="body",
            )

        if len(first.jsonl) > limit:  # a gRPC caller may put lines in the first chunk too
            raise over(len(first.jsonl))

        async def chunks() -> AsyncIterator[retrieval_pb2.ImportDrawersChunk]:
            yield first
            size = len(first.jsonl)
            async for piece in jsonl:
                size += len(piece)
                if size > limit:
                    raise over(size)
                if piece:
                    yield retrieval_pb2.ImportDrawersChunk(jsonl=piece)

        answer = await self._client_stream(
            self._tiers.retrieval.for_store(first.store).ImportDrawers, chunks()
        )
        return cast(retrieval_pb2.ImportDrawersResponse, answer)

    # ------------------------------------------------------------------ search

    async def search_batch(
        self, principal: Principal, request: retrieval_pb2.SearchBatchRequest
    ) -> retrieval_pb2.SearchBatchResponse:
        for search in request.searches:
            search.ClearField("store")  # the batch's store is the one that counts
        return await self._store_call(
            principal, "search_batch", request, self._tiers.retrieval.SearchBatch
        )
