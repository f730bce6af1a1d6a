"""What the corpus servicer needs, wired once by `__main__` (or a test)."""

from __future__ import annotations

from dataclasses import dataclass

from services.corpus.core import ChunkOptions, SizeTierPolicy
from services.corpus.settings import CorpusSettings
from services.corpus.store import CorpusStore
from services.embedder.client import EmbedderClient
from services.runtime.jobs import JobQueue
from services.runtime.stores import OpenStores


@dataclass
class CorpusDeps:
    settings: CorpusSettings
    stores: OpenStores[CorpusStore]
    embedder: EmbedderClient
    jobs: JobQueue

    @property
    def size_policy(self) -> SizeTierPolicy:
        return SizeTierPolicy(
            full_max=self.settings.full_max_bytes, stream_max=self.settings.stream_max_bytes
        )

    @property
    def chunk_options(self) -> ChunkOptions:
        return ChunkOptions(
            window_chars=self.settings.text_window_chars,
            overlap_chars=self.settings.text_overlap_chars,
            max_chunk_chars=self.settings.max_chunk_chars,
        )
