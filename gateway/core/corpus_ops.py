"""The corpus operation the gateway does more than forward: streamed, bounded uploads. Every
other corpus operation is forwarded as the operation table declares (`TierCalls.forward`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import cast

from engram.v1 import corpus_pb2

from gateway.core.access import TierCalls, too_large
from gateway.core.principal import Principal


class CorpusOperations(TierCalls):
    """Streamed uploads."""

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

        answer = await self._client_stream(
            self._tiers.corpus.for_store(header.store).UploadFile, chunks()
        )
        return cast(corpus_pb2.CorpusFile, answer)
