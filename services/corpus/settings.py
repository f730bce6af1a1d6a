"""Settings of the corpus tier (env prefix ENGRAM_CORPUS_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import SettingsConfigDict

from services.runtime.settings import JobSettings, TierSettings


class CorpusSettings(JobSettings, TierSettings):
    model_config = SettingsConfigDict(env_prefix="ENGRAM_CORPUS_", extra="ignore", frozen=True)

    port: int = Field(50053, ge=0, le=65535, description="gRPC port of the corpus tier")
    embedder_addr: str = Field(
        "127.0.0.1:50051",
        validation_alias=AliasChoices("ENGRAM_CORPUS_EMBEDDER_ADDR", "ENGRAM_EMBEDDER_ADDR"),
        description="host:port of the embedder tier",
    )
    redis_url: str = Field(
        "redis://127.0.0.1:6379/0",
        validation_alias=AliasChoices("ENGRAM_CORPUS_REDIS_URL", "ENGRAM_REDIS_URL"),
        description="Redis holding the ingest job queue",
    )
    job_queue: str = Field(
        "engram:corpus", description="Redis queue name of ingest jobs (<name>@<replica>)"
    )
    ingest_concurrency: int = Field(2, ge=1, le=64, description="ingest jobs run at once")
    job_lease_s: float = Field(
        30.0,
        gt=0,
        description="a job whose worker stopped renewing its lease this long ago is retried",
    )
    full_max_bytes: int = Field(
        500_000, ge=1, description="files up to this size are chunked from the full body"
    )
    stream_max_bytes: int = Field(
        8_000_000,
        ge=1,
        description="files up to this size are chunked streamed; larger ones (up to the fixed "
        "50 MB limit) from their synopsis, the body kept as a stored raw document",
    )
    text_window_chars: int = Field(1200, ge=100, description="plain-text chunk size")
    text_overlap_chars: int = Field(200, ge=0, description="plain-text chunk overlap")
    max_chunk_chars: int = Field(2000, ge=100, description="longest chunk of any format")
    source_roots: list[Path] = Field(
        default_factory=list,
        description="server-side folders an operator allows sync_source to read (JSON list)",
    )
    max_raw_chars: int = Field(32_768, ge=1, description="longest direct raw memory")
    max_session_turns: int = Field(5000, ge=1, description="most turns in one add_raw_session")
    max_turn_chars: int = Field(
        1_000_000,
        ge=1,
        description="longest turn add_raw_session takes; a turn over max_raw_chars is cut into "
        "parts of max_chunk_chars, each a chunk of the session with its place in the turn",
    )
    query_document_budget: int = Field(
        8000, ge=100, description="default character budget of query_document"
    )
