"""Settings of the authoring tier (env prefix ENGRAM_AUTHORING_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import AliasChoices, Field
from pydantic_settings import SettingsConfigDict

from services.runtime.settings import JobSettings, TierSettings


class AuthoringSettings(JobSettings, TierSettings):
    model_config = SettingsConfigDict(env_prefix="ENGRAM_AUTHORING_", extra="ignore", frozen=True)

    port: int = Field(50054, ge=0, le=65535, description="gRPC port of the authoring tier")
    retrieval_addr: str = Field(
        "127.0.0.1:50052",
        validation_alias=AliasChoices("ENGRAM_AUTHORING_RETRIEVAL_ADDR", "ENGRAM_RETRIEVAL_ADDR"),
        description="host:port of the retrieval tier (every drawer write goes through it), or "
        "name=host:port,... for its replicas, named as the gateway names them",
    )
    corpus_addr: str = Field(
        "127.0.0.1:50053",
        validation_alias=AliasChoices("ENGRAM_AUTHORING_CORPUS_ADDR", "ENGRAM_CORPUS_ADDR"),
        description="host:port of the corpus tier (raw sessions are read from it), or "
        "name=host:port,... for its replicas",
    )
    embedder_addr: str = Field(
        "127.0.0.1:50051",
        validation_alias=AliasChoices("ENGRAM_AUTHORING_EMBEDDER_ADDR", "ENGRAM_EMBEDDER_ADDR"),
        description="host:port of the embedder tier (the offline composer types sentences by "
        "their embedding)",
    )
    redis_url: str = Field(
        "redis://127.0.0.1:6379/0",
        validation_alias=AliasChoices("ENGRAM_AUTHORING_REDIS_URL", "ENGRAM_REDIS_URL"),
        description="Redis holding the compose job queue",
    )
    job_queue: str = Field(
        "engram:authoring", description="Redis queue name of compose jobs (<name>@<replica>)"
    )
    compose_concurrency: int = Field(2, ge=1, le=64, description="compose jobs run at once")
    job_lease_s: float = Field(
        60.0,
        gt=0,
        description="a compose job whose worker stopped renewing its lease this long ago is "
        "retried",
    )
    duplicate_similarity: float = Field(
        0.95,
        gt=0,
        le=1,
        description="cosine at or above which a write in the same room and type is checked as "
        "a duplicate (it is one only when it makes the same claim)",
    )
    related_similarity: float = Field(
        0.65,
        gt=0,
        le=1,
        description="cosine at or above which a drawer already in the room (any type) is named "
        "to the writer as one the write may update or contradict (docs/decisions/0018)",
    )
    max_content_chars: int = Field(600, ge=40, description="longest drawer content (1-3 sentences)")
    min_signature_chars: int = Field(12, ge=4, description="shortest canonical signature phrase")
    secrets_dir: Path | None = Field(
        None,
        description="folder of provider key files (anthropic_api_key, openai_api_key), as "
        "Kubernetes mounts a Secret; keys also come from ANTHROPIC_API_KEY / OPENAI_API_KEY",
    )
    invoker_timeout_s: float = Field(
        120.0, gt=0, description="longest wait for one provider call (one session)"
    )
    max_sessions_per_job: int = Field(
        10_000, ge=1, description="most sessions (after expanding files) one compose job takes"
    )
