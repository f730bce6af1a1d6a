"""Fixtures of the real stack shared by the tier contract tests and the gateway tests: the real
model loaded once per session, and a real embedder tier serving it over gRPC on 127.0.0.1.
Registered for the whole suite by `pytest_plugins` in tests/conftest.py."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from services.embedder.core import EmbeddingModel, load_model, resolve_model_path
from services.embedder.server import serve_loaded_model
from services.embedder.settings import EmbedderSettings


@pytest.fixture(scope="session")
def embedding_model() -> EmbeddingModel:
    """The real bundled all-MiniLM-L6-v2 on CPU (CI has no GPU)."""
    return load_model(resolve_model_path(""), device="cpu", fp16=False, torch_threads=2)


@pytest.fixture(scope="session")
async def embedder_addr(embedding_model: EmbeddingModel) -> AsyncIterator[str]:
    """host:port of an in-process embedder tier (real gRPC, real model)."""
    settings = EmbedderSettings(host="127.0.0.1", port=0, allow_cpu=True)
    tier, deps = await serve_loaded_model(embedding_model, settings)
    yield f"127.0.0.1:{tier.port}"
    assert deps.batcher is not None
    await deps.batcher.close()
    await tier.stop(0.5)
