"""Settings shared by every tier. Each tier subclasses `TierSettings` with its own env prefix
(`ENGRAM_<TIER>_`) and builds it exactly once, in its `__main__`; nothing reads the
environment at import time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.runtime.routing import queue_name
from services.runtime.vectorstore.topology import QdrantTopology, ReadConsistency, WriteOrdering

VectorBackend = Literal["edge", "qdrant"]


class TierSettings(BaseSettings):
    """What every tier process needs: where to listen, where its data lives, how to log."""

    # validate_by_name: a field with env aliases (e.g. redis_url) still takes its own name as a
    # constructor argument; without it the argument is silently dropped for the default.
    model_config = SettingsConfigDict(
        env_prefix="ENGRAM_", extra="ignore", frozen=True, validate_by_name=True
    )

    host: str = Field("127.0.0.1", description="interface the gRPC server binds")
    port: int = Field(0, ge=0, le=65535, description="gRPC port; 0 picks a free one")
    data_dir: Path = Field(Path("data"), description="root of this tier's per-store state")
    log_level: str = Field("INFO", description="DEBUG, INFO, WARNING, ERROR")
    log_format: Literal["json", "text"] = Field("json", description="structured JSON or text")
    metrics_port: int = Field(
        0, ge=0, le=65535, description="Prometheus /metrics port; 0 disables the endpoint"
    )
    shutdown_grace_s: float = Field(5.0, gt=0, description="grace period on SIGTERM")
    max_message_bytes: int = Field(
        64 * 1024 * 1024, gt=0, description="largest gRPC message sent or received"
    )


class JobSettings(BaseSettings):
    """How a tier that runs background jobs bounds its queue and retries a job whose attempt
    met a passing failure (a tier or the embedder unreachable or saturated): mixed into its
    settings."""

    job_queue: str = Field("engram:jobs", description="Redis queue name of this tier's jobs")
    replica_name: str = Field(
        "",
        description="this replica's name when the tier runs as several (docs/scaling.md): its "
        "jobs queue as <job_queue>@<name>, and the gateway's replica list names it the same",
    )
    job_max_queued: int = Field(
        1000,
        ge=0,
        description="jobs waiting in the queue beyond which a new one is refused (429 with "
        "Retry-After) instead of queued behind hours of work; 0 = no bound",
    )

    job_max_tries: int = Field(
        6,
        ge=1,
        le=50,
        description="attempts of a job before it fails for good (crashed workers included)",
    )
    job_retry_delay_s: float = Field(
        2.0,
        gt=0,
        description="first wait before a failed attempt is retried; doubled each time, at "
        "most 60 s (6 tries ride out about a minute of a tier being down)",
    )

    @property
    def replica_queue(self) -> str:
        """The queue this replica enqueues to and works from: only its own stores' jobs."""
        return queue_name(self.job_queue, self.replica_name)


class StorageSettings(BaseSettings):
    """Where vectors and jobs live. Shared by the tiers that own collections."""

    model_config = SettingsConfigDict(env_prefix="ENGRAM_", extra="ignore", frozen=True)

    vector_backend: VectorBackend = Field(
        "edge", description="edge: embedded Qdrant Edge on disk; qdrant: a Qdrant server"
    )
    qdrant_url: str = Field("", description="Qdrant server URL when vector_backend=qdrant")
    qdrant_api_key: str = Field("", description="Qdrant API key (server mode)")
    qdrant_shards: int = Field(
        1, ge=1, le=256, description="shards of each new collection on a Qdrant cluster"
    )
    qdrant_replication_factor: int = Field(
        1, ge=1, le=16, description="copies of each shard on a Qdrant cluster (2+ survives a node)"
    )
    qdrant_write_consistency_factor: int = Field(
        1, ge=1, le=16, description="replicas that must acknowledge a write before it returns"
    )
    qdrant_write_ordering: WriteOrdering = Field(
        "weak",
        description="Qdrant's write ordering across replicas: weak, medium (through the "
        "shard's leader when it is up) or strong (always through it)",
    )
    qdrant_read_consistency: ReadConsistency | int = Field(
        1,
        description="replicas a read asks: a number, or majority, quorum, all (1: the first "
        "that answers)",
    )

    def qdrant_topology(self) -> QdrantTopology:
        """The layout and consistency these settings ask of a Qdrant cluster."""
        return QdrantTopology(
            shards=self.qdrant_shards,
            replication_factor=self.qdrant_replication_factor,
            write_consistency_factor=self.qdrant_write_consistency_factor,
            write_ordering=self.qdrant_write_ordering,
            read_consistency=self.qdrant_read_consistency,
        )

    redis_url: str = Field("redis://127.0.0.1:6379/0", description="Redis for the job queue")
