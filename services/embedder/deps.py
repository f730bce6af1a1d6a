"""What the embedder's servicer needs, wired by `__main__` (or a test)."""

from __future__ import annotations

from dataclasses import dataclass

from services.embedder.core import DynamicBatcher, EmbeddingModel
from services.embedder.settings import EmbedderSettings


@dataclass
class EmbedderDeps:
    """The model and its batcher arrive after start-up (health NOT_SERVING until then)."""

    settings: EmbedderSettings
    model: EmbeddingModel | None = None
    batcher: DynamicBatcher | None = None

    def attach(self, model: EmbeddingModel) -> DynamicBatcher:
        """Install a loaded model and build its batcher."""
        batcher = DynamicBatcher(
            lambda texts: model.encode(texts, batch_size=self.settings.max_batch),
            max_batch=self.settings.max_batch,
            max_wait_s=self.settings.max_wait_ms / 1000.0,
            enabled=self.settings.dynamic_batching,
            max_queued_texts=self.settings.max_queued_texts,
        )
        self.model, self.batcher = model, batcher
        return batcher
