"""The tiers `engram up` starts, in order. A new tier registers itself here with its module,
port variable and health service; the launcher needs nothing else."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TierSpec:
    """How to run and probe one tier process."""

    name: str
    module: str  # run as `python -m <module>`
    env_prefix: str  # ENGRAM_<TIER>_
    default_port: int
    health_service: str  # the gRPC service name whose health must be SERVING
    extra_env: dict[str, str] = field(default_factory=dict)


TIERS: tuple[TierSpec, ...] = (
    TierSpec(
        name="embedder",
        module="services.embedder",
        env_prefix="ENGRAM_EMBEDDER_",
        default_port=50051,
        health_service="engram.v1.EmbedderService",
    ),
    TierSpec(
        name="retrieval",
        module="services.retrieval",
        env_prefix="ENGRAM_RETRIEVAL_",
        default_port=50052,
        health_service="engram.v1.RetrievalService",
    ),
    TierSpec(
        name="corpus",
        module="services.corpus",
        env_prefix="ENGRAM_CORPUS_",
        default_port=50053,
        health_service="engram.v1.CorpusService",
    ),
    TierSpec(
        name="authoring",
        module="services.authoring",
        env_prefix="ENGRAM_AUTHORING_",
        default_port=50054,
        health_service="engram.v1.AuthoringService",
    ),
)
