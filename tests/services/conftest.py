"""Fixtures shared by the tier contract tests: the real model, loaded once per session."""

from __future__ import annotations

import pytest

from services.embedder.core import EmbeddingModel, load_model, resolve_model_path


@pytest.fixture(scope="session")
def embedding_model() -> EmbeddingModel:
    """The real bundled all-MiniLM-L6-v2 on CPU (CI has no GPU)."""
    return load_model(resolve_model_path(""), device="cpu", fp16=False, torch_threads=2)
