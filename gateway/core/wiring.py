"""Wiring of one gateway process: its state (tokens, registry, audit log, rate limits), tier
channels, job queues.

Building does no I/O; `start()` claims the state first (local state: the data directory's
lock, so a second gateway is refused before it touches anything; Redis state: a Redis that
answers), then opens the token table and replays the registry.
"""

from __future__ import annotations

import asyncio
import shutil
from dataclasses import dataclass, field

from gateway.core.jobs import JobBoard
from gateway.core.service import Gateway, Tiers
from gateway.core.state import GatewayState, open_state
from gateway.core.tokens import TokenStore
from gateway.settings import GatewaySettings
from services.runtime.grpc_client import ClientPolicy
from services.runtime.jobs import JobQueue
from services.runtime.routing import replica_queues

TIER_NAMES = ("retrieval", "corpus", "authoring")


@dataclass
class GatewayDeps:
    """Everything the gateway's faces share; `start()` / `close()` bracket its life."""

    settings: GatewaySettings
    state: GatewayState = field(init=False)
    tiers: Tiers | None = None
    tokens: TokenStore | None = None
    jobs: JobBoard | None = None
    gateway: Gateway | None = None
    # A first start without ENGRAM_ADMIN_TOKEN creates an admin token: `engram-gateway`
    # prints it once; it is never logged.
    first_admin_token: str | None = None
    _warm_up: asyncio.Task[None] | None = None

    def __post_init__(self) -> None:
        self.state = open_state(self.settings)

    def start_sync(self) -> str | None:
        """Claim the state (lock the state directory, or reach Redis) and open the token table.
        Returns a newly created admin token on a first start without ENGRAM_ADMIN_TOKEN (to be
        shown once), else None."""
        self.state.claim(self.settings.host, self.settings.port)
        # What a backup or restore cut short by a crash left spooled (backup_ops).
        shutil.rmtree(self.settings.state_dir / "scratch", ignore_errors=True)
        if self.tokens is None:
            self.tokens = self.state.tokens()
        return self.tokens.bootstrap(self.settings.bootstrap_admin_token())

    async def start(self) -> Gateway:
        """Everything `start_sync` does, then the registry replay and the tier channels."""
        if self.gateway is not None:
            return self.gateway
        created = self.start_sync()
        if created is not None:
            self.first_admin_token = created
        assert self.tokens is not None
        settings = self.settings
        registry = self.state.registry()
        policy = ClientPolicy(deadline_s=settings.tier_deadline_s)
        replicas = settings.replicas()
        self.tiers = tiers = Tiers.connect(replicas, policy, registry.placement)
        # One queue per replica of the tiers that run jobs (each works only its own stores').
        self.jobs = jobs = JobBoard(
            [
                JobQueue(settings.redis_url, queue_name=queue)
                for tier, base in (
                    ("corpus", settings.corpus_job_queue),
                    ("authoring", settings.authoring_job_queue),
                )
                for queue in replica_queues(base, replicas[tier])
            ]
        )
        self.gateway = Gateway(
            registry=registry,
            tokens=self.tokens,
            tiers=tiers,
            jobs=jobs,
            max_upload_bytes=settings.max_upload_bytes,
            stream_deadline_s=settings.stream_deadline_s,
            sse_poll_s=settings.sse_poll_s,
            audit_log=self.state.audit_log(),
            rate_limit=self.state.rate_limiter(settings.rate_limit_per_s, settings.rate_limit_burst)
            if settings.rate_limit_per_s > 0
            else None,
            scratch_dir=settings.state_dir / "scratch",
            max_restore_bytes=settings.max_restore_bytes,
        )
        self._warm_up = asyncio.create_task(self.gateway.warm_up())
        return self.gateway

    async def close(self) -> None:
        if self._warm_up is not None:
            self._warm_up.cancel()
            await asyncio.gather(self._warm_up, return_exceptions=True)
            self._warm_up = None
        self.gateway = None
        if self.jobs is not None:
            await self.jobs.close()
            self.jobs = None
        if self.tiers is not None:
            await self.tiers.close()
            self.tiers = None
        if self.tokens is not None:
            self.tokens.close()
            self.tokens = None
        self.state.release()

    async def tier_health(self) -> dict[str, str]:
        """Each tier's gRPC health status (SERVING, NOT_SERVING, or why it did not answer)."""
        if self.gateway is None:
            return {name: "UNREACHABLE (the gateway is not started)" for name in TIER_NAMES}
        return await self.gateway.tiers.health()
