"""The embedder's domain: model loading and dynamic batching. No gRPC here."""

from services.embedder.core.batcher import DynamicBatcher
from services.embedder.core.model import (
    TRUNCATION_POLICY,
    EmbeddingModel,
    choose_device,
    load_model,
    resolve_model_path,
    validate_texts,
)

__all__ = [
    "TRUNCATION_POLICY",
    "DynamicBatcher",
    "EmbeddingModel",
    "choose_device",
    "load_model",
    "resolve_model_path",
    "validate_texts",
]
