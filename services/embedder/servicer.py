"""EmbedderService: protobuf → embedder core → protobuf, nothing else."""

from __future__ import annotations

from typing import Any

import grpc
from engram.v1 import embedder_pb2, embedder_pb2_grpc

from services.embedder.core import TRUNCATION_POLICY, DynamicBatcher, validate_texts
from services.embedder.deps import EmbedderDeps
from services.runtime.errors import Unavailable


class EmbedderServicer(embedder_pb2_grpc.EmbedderServiceServicer):
    def __init__(self, deps: EmbedderDeps) -> None:
        self._deps = deps

    async def Embed(
        self, request: embedder_pb2.EmbedRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> embedder_pb2.EmbedResponse:
        settings = self._deps.settings
        texts = list(request.texts)
        validate_texts(texts, max_texts=settings.max_texts, max_text_chars=settings.max_text_chars)
        model, batcher = self._ready()
        vectors = await batcher.embed(texts)
        return embedder_pb2.EmbedResponse(
            vectors=vectors.tobytes(),
            dimension=model.dimension,
            count=len(texts),
            truncated=model.truncated(texts),
            truncation_policy=TRUNCATION_POLICY,
            model=model.name,
        )

    async def Info(
        self, request: embedder_pb2.InfoRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> embedder_pb2.InfoResponse:
        settings = self._deps.settings
        model, batcher = self._ready()
        return embedder_pb2.InfoResponse(
            model=model.name,
            fingerprint=model.fingerprint,
            dimension=model.dimension,
            device=model.device,
            dtype=model.dtype,
            max_seq_tokens=model.max_seq_tokens,
            max_batch=batcher.max_batch,
            max_texts=settings.max_texts,
            max_text_chars=settings.max_text_chars,
            max_wait_ms=batcher.max_wait_s * 1000.0,
            dynamic_batching=batcher.enabled,
            torch_threads=model.torch_threads,
            truncation_policy=TRUNCATION_POLICY,
            **device_memory(model.device),
        )

    def _ready(self) -> tuple[Any, DynamicBatcher]:
        model, batcher = self._deps.model, self._deps.batcher
        if model is None or batcher is None:
            raise Unavailable("the embedding model is still loading; retry shortly")
        return model, batcher


def device_memory(device: str) -> dict[str, int]:
    """The GPU's memory in use and in all, for `InfoResponse` (nothing on the CPU)."""
    if not device.startswith("cuda"):
        return {}
    import torch  # only a GPU embedder reaches here; torch is loaded already

    free, total = torch.cuda.mem_get_info(torch.device(device))
    return {"vram_used_bytes": total - free, "vram_total_bytes": total}
