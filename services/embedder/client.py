"""The embedder's client, used by every tier that needs vectors (retrieval, corpus, authoring).

It splits large inputs into requests the embedder accepts, decodes the packed float32 rows,
and keeps a small LRU cache of single-text results (search queries repeat).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict

import grpc
import numpy as np
import numpy.typing as npt
from engram.v1 import embedder_pb2, embedder_pb2_grpc

from services.runtime.errors import EngramError
from services.runtime.grpc_client import ClientPolicy, call, create_channel

logger = logging.getLogger(__name__)

Vectors = npt.NDArray[np.float32]


# Requests one bulk `embed` keeps in flight at once (each of up to `request_texts` texts).
BULK_REQUESTS_IN_FLIGHT = 2


class EmbedderClient:
    """Async client of EmbedderService with request splitting and a query cache."""

    def __init__(
        self,
        target: str,
        *,
        policy: ClientPolicy | None = None,
        request_texts: int = 256,
        cache_size: int = 2048,
    ) -> None:
        self._channel: grpc.aio.Channel = create_channel(
            target, policy or ClientPolicy(deadline_s=60)
        )
        self._stub = embedder_pb2_grpc.EmbedderServiceStub(self._channel)
        self._request_texts = request_texts
        self._cache: OrderedDict[str, Vectors] = OrderedDict()
        self._cache_size = cache_size
        self.dimension: int | None = None
        self.fingerprint = ""  # the served model's, once `info()` has answered

    async def info(self) -> embedder_pb2.InfoResponse:
        """What the embedder serves (model, dimension, limits)."""
        reply: embedder_pb2.InfoResponse = await call(self._stub.Info, embedder_pb2.InfoRequest())
        self.dimension = reply.dimension
        self.fingerprint = reply.fingerprint
        self._request_texts = min(self._request_texts, reply.max_texts or self._request_texts)
        return reply

    async def wait_until_ready(self, target: str, poll_s: float = 1.0) -> embedder_pb2.InfoResponse:
        """Info, once the embedder answers (it may still be loading its model at start-up)."""
        while True:
            try:
                return await self.info()
            except EngramError as error:
                logger.info("waiting for the embedder at %s: %s", target, error.message)
                await asyncio.sleep(poll_s)

    async def embed(self, texts: list[str]) -> Vectors:
        """One unit-norm row per text, in order. Large inputs go as several concurrent requests.

        A single text just embedded by `embed_query` is served from its cache: a write whose
        duplicate check embedded the content (`FindSimilarDrawers`) is not embedded again.
        Bulk embeddings neither read nor fill the cache."""
        if not texts:
            return np.zeros((0, self.dimension or 0), dtype=np.float32)
        if len(texts) == 1 and (cached := self._cache.get(texts[0])) is not None:
            return cached.reshape(1, -1).copy()
        chunks = [
            texts[i : i + self._request_texts] for i in range(0, len(texts), self._request_texts)
        ]
        # A few requests in flight per call, not all of them: a large input then stays well
        # inside the embedder's queue bound (ENGRAM_EMBEDDER_MAX_QUEUED_TEXTS), which refuses
        # what would wait past a caller's deadline.
        gate = asyncio.Semaphore(BULK_REQUESTS_IN_FLIGHT)

        async def one(chunk: list[str]) -> Vectors:
            async with gate:
                return await self._embed_request(chunk)

        parts = await asyncio.gather(*(one(chunk) for chunk in chunks))
        return np.vstack(parts) if len(parts) > 1 else parts[0]

    async def embed_query(self, text: str) -> Vectors:
        """One vector for a query, served from the LRU cache when seen recently."""
        cached = self._cache.get(text)
        if cached is not None:
            self._cache.move_to_end(text)
            return cached
        vector: Vectors = (await self._embed_request([text]))[0]
        self._cache[text] = vector
        if len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)
        return vector

    async def _embed_request(self, texts: list[str]) -> Vectors:
        reply: embedder_pb2.EmbedResponse = await call(
            self._stub.Embed, embedder_pb2.EmbedRequest(texts=texts)
        )
        self.dimension = reply.dimension
        rows = np.frombuffer(reply.vectors, dtype="<f4").reshape(reply.count, reply.dimension)
        vectors: Vectors = rows.astype(np.float32, copy=True)
        return vectors

    async def close(self) -> None:
        await self._channel.close()
