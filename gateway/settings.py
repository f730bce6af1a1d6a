"""Settings of the gateway (env prefix ENGRAM_GATEWAY_), built once in `__main__`."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.runtime.errors import InvalidInput
from services.runtime.routing import Replica, parse_replicas


class GatewaySettings(BaseSettings):
    # validate_by_name: tests and `engram token --data-dir` build settings by field name too.
    model_config = SettingsConfigDict(
        env_prefix="ENGRAM_GATEWAY_",
        extra="ignore",
        frozen=True,
        validate_by_name=True,
        validate_by_alias=True,
    )

    host: str = Field("127.0.0.1", description="interface the gateway's HTTP and gRPC servers bind")
    port: int = Field(8080, ge=0, le=65535, description="HTTP port of the gateway (REST, MCP)")
    grpc_enabled: bool = Field(
        True, description="serve the public gRPC API (engram.v1.Engram) beside HTTP"
    )
    grpc_port: int = Field(
        50050,
        ge=0,
        le=65535,
        description="gRPC port of the gateway (engram.v1.Engram, same host); 0 picks a free one",
    )
    data_dir: Path = Field(
        Path("data"),
        validation_alias=AliasChoices("ENGRAM_GATEWAY_DATA_DIR", "ENGRAM_DATA_DIR"),
        description="root of local state; the gateway keeps its scratch space for backups, "
        "and with state_backend=local its tokens, store registry and audit log, under "
        "<data_dir>/gateway",
    )
    admin_token: str = Field(
        "",
        validation_alias=AliasChoices("ENGRAM_GATEWAY_ADMIN_TOKEN", "ENGRAM_ADMIN_TOKEN"),
        description="bootstraps an admin token (stored hashed); empty: the first start "
        "creates one and prints it once",
    )
    admin_token_file: Path | None = Field(
        None,
        description="a file holding the bootstrap admin token (a mounted Kubernetes Secret); "
        "wins over ENGRAM_GATEWAY_ADMIN_TOKEN; a file that is not there counts as empty",
    )
    retrieval_addr: str = Field(
        "127.0.0.1:50052",
        validation_alias=AliasChoices("ENGRAM_GATEWAY_RETRIEVAL_ADDR", "ENGRAM_RETRIEVAL_ADDR"),
        description="host:port of the retrieval tier, or name=host:port,... for its replicas "
        "(stores are placed on them by rendezvous hashing; docs/scaling.md)",
    )
    corpus_addr: str = Field(
        "127.0.0.1:50053",
        validation_alias=AliasChoices("ENGRAM_GATEWAY_CORPUS_ADDR", "ENGRAM_CORPUS_ADDR"),
        description="host:port of the corpus tier, or name=host:port,... for its replicas "
        "(stores are placed on them by rendezvous hashing; docs/scaling.md)",
    )
    authoring_addr: str = Field(
        "127.0.0.1:50054",
        validation_alias=AliasChoices("ENGRAM_GATEWAY_AUTHORING_ADDR", "ENGRAM_AUTHORING_ADDR"),
        description="host:port of the authoring tier, or name=host:port,... for its replicas "
        "(stores are placed on them by rendezvous hashing; docs/scaling.md)",
    )
    redis_url: str = Field(
        "redis://127.0.0.1:6379/0",
        validation_alias=AliasChoices("ENGRAM_GATEWAY_REDIS_URL", "ENGRAM_REDIS_URL"),
        description="Redis holding the job queues the gateway reads (and, with "
        "state_backend=redis, its tokens, store registry, audit log and rate limits)",
    )
    state_backend: Literal["local", "redis"] = Field(
        "local",
        description="where the gateway keeps tokens, the store registry, the audit log and "
        "rate limits: local (files under <data_dir>/gateway, one gateway per directory) or "
        "redis (redis_url, shared by every gateway replica; run Redis with AOF persistence)",
    )
    state_key_prefix: str = Field(
        "engram:gateway",
        min_length=1,
        description="prefix of the gateway's Redis keys (state_backend=redis); deployments "
        "sharing one Redis need different ones",
    )
    audit_max_events: int = Field(
        1_000_000,
        ge=1000,
        description="events the Redis audit stream keeps, approximately (state_backend=redis; "
        "older ones are trimmed); the local log keeps day files for ever",
    )
    draining_replicas: str = Field(
        "",
        description="comma-separated replica names (of any tier) that keep their stores but "
        "take no new ones, so `engram stores --rebalance` can empty them before removal",
    )
    corpus_job_queue: str = Field("engram:corpus", description="queue name of ingest jobs")
    authoring_job_queue: str = Field("engram:authoring", description="queue name of compose jobs")
    tier_deadline_s: float = Field(30.0, gt=0, description="deadline of one call to a tier")
    stream_deadline_s: float = Field(
        600.0, gt=0, description="deadline of a streamed call (upload, import, export)"
    )
    max_body_bytes: int = Field(
        8 * 1024 * 1024, gt=0, description="largest JSON request body accepted"
    )
    max_upload_bytes: int = Field(
        50 * 1000 * 1000, gt=0, description="largest file upload or drawer import accepted"
    )
    mcp_tools: str = Field(
        "memory",
        description="MCP toolsets listed when a connection does not ask (`/mcp?tools=`): "
        "memory, browse, lifecycle, ingest, comma-separated, or all",
    )
    keep_alive_s: int = Field(
        75,
        ge=1,
        description="an idle HTTP connection is kept this long: longer than clients keep "
        "theirs (httpx and most pools: 5 s), so a client never reuses one the gateway is "
        "closing (measured by `make soak`: 1 % of reuses dropped at 5 s on both sides)",
    )
    max_restore_bytes: int = Field(
        20 * 1000**3,
        gt=0,
        description="largest backup archive a restore accepts (spooled under the state dir)",
    )
    sse_poll_s: float = Field(
        1.0, gt=0, description="job progress streams re-read the job this often when quiet"
    )
    rate_limit_per_s: float = Field(
        100.0, ge=0, description="calls a second each token may make on average (0: no limit)"
    )
    rate_limit_burst: float = Field(
        400.0, ge=1, description="calls a token may make at once before the average applies"
    )
    dashboard_dir: Path | None = Field(
        None,
        description="the operator dashboard's built bundle, served at /dashboard/ (unset: "
        "gateway/dashboard/dist of this checkout, which `make dashboard` builds)",
    )
    log_level: str = Field("INFO", description="DEBUG, INFO, WARNING, ERROR")
    log_format: Literal["json", "text"] = Field("json", description="structured JSON or text")

    def bootstrap_admin_token(self) -> str:
        """The bootstrap admin token: the file's content when a file is named and there
        (trailing whitespace dropped), else ENGRAM_GATEWAY_ADMIN_TOKEN."""
        if self.admin_token_file is not None:
            try:
                return self.admin_token_file.read_text(encoding="utf-8").strip()
            except FileNotFoundError:
                return ""
        return self.admin_token

    def replicas(self) -> dict[str, tuple[Replica, ...]]:
        """Each partitioned tier's replicas, as the address settings list them (InvalidInput
        naming a malformed list)."""
        draining = {name.strip() for name in self.draining_replicas.split(",") if name.strip()}
        listed = {
            "retrieval": self.retrieval_addr,
            "corpus": self.corpus_addr,
            "authoring": self.authoring_addr,
        }
        tiers = {
            tier: parse_replicas(spec, tier=tier, draining=draining)
            for tier, spec in listed.items()
        }
        unknown = draining - {r.name for replicas in tiers.values() for r in replicas}
        if unknown:
            raise InvalidInput(
                f"ENGRAM_GATEWAY_DRAINING_REPLICAS names {sorted(unknown)}, which no tier lists"
            )
        return tiers

    @property
    def dashboard_bundle(self) -> Path:
        """The dashboard's bundle directory in force."""
        if self.dashboard_dir is not None:
            return Path(self.dashboard_dir)
        return Path(__file__).resolve().parent / "dashboard" / "dist"

    @property
    def state_dir(self) -> Path:
        """Where the gateway keeps its own state: `<data_dir>/gateway`."""
        return Path(self.data_dir) / "gateway"
