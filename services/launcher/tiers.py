"""The processes `engram up` starts, in order: the four gRPC tiers, then the gateway in front
of them. A new process registers itself here with its module, port variable and probe; the
launcher needs nothing else."""

from __future__ import annotations

from dataclasses import dataclass, field

from services.launcher.probes import GrpcHealth, HttpReady, Probe


@dataclass(frozen=True)
class TierSpec:
    """How to run and probe one process of the stack."""

    name: str
    module: str  # run as `python -m <module>`
    env_prefix: str  # ENGRAM_<TIER>_
    default_port: int
    probe: Probe  # waited on until it passes, before the next process starts
    # The gateway nests its own folder under DATA_DIR (`<data_dir>/gateway`, where `engram
    # token` looks too), so it gets the root; the tiers get `<data_dir>/<name>`.
    nests_data_dir: bool = False
    # The variable through which the process takes the bootstrap admin token, if it has one.
    admin_token_var: str | None = None
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def speaks_grpc(self) -> bool:
        """A gRPC tier: the others find it through `ENGRAM_<NAME>_ADDR`."""
        return isinstance(self.probe, GrpcHealth)


TIERS: tuple[TierSpec, ...] = (
    TierSpec(
        name="embedder",
        module="services.embedder",
        env_prefix="ENGRAM_EMBEDDER_",
        default_port=50051,
        probe=GrpcHealth("engram.v1.EmbedderService"),
    ),
    TierSpec(
        name="retrieval",
        module="services.retrieval",
        env_prefix="ENGRAM_RETRIEVAL_",
        default_port=50052,
        probe=GrpcHealth("engram.v1.RetrievalService"),
    ),
    TierSpec(
        name="corpus",
        module="services.corpus",
        env_prefix="ENGRAM_CORPUS_",
        default_port=50053,
        probe=GrpcHealth("engram.v1.CorpusService"),
    ),
    TierSpec(
        name="authoring",
        module="services.authoring",
        env_prefix="ENGRAM_AUTHORING_",
        default_port=50054,
        probe=GrpcHealth("engram.v1.AuthoringService"),
    ),
    # Last: its /readyz is 200 only once every tier behind it is SERVING.
    TierSpec(
        name="gateway",
        module="gateway",
        env_prefix="ENGRAM_GATEWAY_",
        default_port=8080,
        probe=HttpReady("/readyz"),
        nests_data_dir=True,
        admin_token_var="ENGRAM_GATEWAY_ADMIN_TOKEN",
    ),
)
