"""Settings of the retrieval tier (env prefix ENGRAM_RETRIEVAL_)."""

from __future__ import annotations

from pydantic import AliasChoices, Field
from pydantic_settings import SettingsConfigDict

from services.runtime.settings import TierSettings


class RetrievalSettings(TierSettings):
    model_config = SettingsConfigDict(env_prefix="ENGRAM_RETRIEVAL_", extra="ignore", frozen=True)

    port: int = Field(50052, ge=0, le=65535, description="gRPC port of the retrieval tier")
    embedder_addr: str = Field(
        "127.0.0.1:50051",
        validation_alias=AliasChoices("ENGRAM_RETRIEVAL_EMBEDDER_ADDR", "ENGRAM_EMBEDDER_ADDR"),
        description="host:port of the embedder tier",
    )
    default_depth: int = Field(50, ge=1, le=500, description="candidates taken per retriever")
    index_min_points: int = Field(
        20_000,
        ge=1,
        description="points outside the HNSW index that trigger a background index build "
        "(embedded Qdrant Edge; smaller pools are searched exactly)",
    )
    max_query_chars: int = Field(8192, ge=1, description="longest query accepted")
    max_batch_queries: int = Field(32, ge=1, le=256, description="most queries in search_batch")
    pack_budget_read: int = Field(1000, ge=1, description="context-pack tokens, read tier")
    pack_budget_write: int = Field(2000, ge=1, description="context-pack tokens, write tier")
    pack_budget_admin: int = Field(4000, ge=1, description="context-pack tokens, admin tier")
    prime_budget: int = Field(
        600, ge=1, description="session-start (prime) tokens when the caller asks for none"
    )
    max_pack_budget: int = Field(32_000, ge=1, description="largest token budget a caller may ask")
    max_import_bytes: int = Field(
        256 * 1024 * 1024, ge=1, description="largest JSONL import accepted"
    )
    initial_salience: float = Field(
        0.5, ge=0.1, le=1.0, description="salience of a new drawer written without one"
    )
    usage_window_h: float = Field(
        24.0, gt=0, description="a recorded retrieval this soon after a search counts as a use"
    )
