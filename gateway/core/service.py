"""`Gateway`: one async method per public operation, shared by every face (REST, MCP, gRPC).

Each method takes the caller's `Principal` and the request proto, checks the tier the
operation needs (`REQUIRED_TIER`) and the token's store scope, fills in the request's
`StoreContext` from the registry (deployment mode, authority, defaults) and the token (caller
tier and id), and calls the tier that owns the operation (see `access`). The tiers' own rules
still apply on top (authoring decides which types and pins a tier may write). The per-tier
groups live in `drawer_ops`, `corpus_ops` and `authoring_ops`; the store registry, tokens and
jobs, which the gateway owns itself, are here.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import logging
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import UTC, datetime, timedelta
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, cast

from engram.v1 import common_pb2, embedder_pb2, gateway_pb2, retrieval_pb2

from gateway.core import audit
from gateway.core.access import Tiers
from gateway.core.audit import AuditLog
from gateway.core.authoring_ops import AuthoringOperations
from gateway.core.backup_ops import BackupOperations
from gateway.core.corpus_ops import CorpusOperations
from gateway.core.drawer_ops import DrawerOperations
from gateway.core.jobs import JobBoard
from gateway.core.move_ops import MoveOperations
from gateway.core.operations import OPERATIONS, REQUIRED_TIER
from gateway.core.principal import Principal, Tier
from gateway.core.ratelimit import RateLimiter
from gateway.core.registry import StoreRegistry
from gateway.core.tokens import DEFAULT_GRACE_S, TokenRecord, TokenStore
from services.runtime.errors import (
    EngramError,
    FailedPrecondition,
    InvalidInput,
    Overloaded,
    PermissionDenied,
    Unavailable,
)
from services.runtime.grpc_client import call
from services.runtime.queries import parse_day

__all__ = ["REQUIRED_TIER", "Gateway", "Tiers"]

logger = logging.getLogger(__name__)

_DEFAULT_JOB_LIMIT = 50
# Stores whose drawer count a listing asks the retrieval tier for at once.
LIST_COUNT_CONCURRENCY = 16


class Gateway(
    DrawerOperations, CorpusOperations, AuthoringOperations, BackupOperations, MoveOperations
):
    """The operations of Engram's public API, over the tiers."""

    def __init__(
        self,
        *,
        registry: StoreRegistry,
        tokens: TokenStore,
        tiers: Tiers,
        jobs: JobBoard,
        max_upload_bytes: int,
        stream_deadline_s: float,
        sse_poll_s: float = 1.0,
        audit_log: AuditLog | None = None,
        rate_limit: RateLimiter | None = None,
        scratch_dir: Path | None = None,
        max_restore_bytes: int = 20 * 10**9,
    ) -> None:
        super().__init__(
            registry=registry,
            tiers=tiers,
            max_upload_bytes=max_upload_bytes,
            stream_deadline_s=stream_deadline_s,
        )
        self.tokens = tokens
        self.audit = audit_log
        self.rate_limit = rate_limit
        self._jobs = jobs
        self._sse_poll_s = sse_poll_s
        # Where whole-store backups and restores are spooled (backup_ops).
        self.scratch_dir = scratch_dir or Path(tempfile.gettempdir()) / "engram-gateway"
        self.max_restore_bytes = max_restore_bytes

    def operation(self, name: str) -> Callable[..., Awaitable[Any]]:
        """What serves operation `name` for every face: the gateway's own method where it has
        one (its own state, streams, extra steps), else the forwarder the operation table
        declares; an operation that changes state is audited on the way (`core/audit.py`).
        LookupError for a name that is neither."""
        own = getattr(self, name, None)
        served: Callable[..., Awaitable[Any]]
        if callable(own) and name in OPERATIONS:
            served = cast(Callable[..., Awaitable[Any]], own)
        else:
            op = OPERATIONS.get(name)
            if (
                op is None
                or op.served_by == "gateway"
                or op.client_streaming
                or op.server_streaming
            ):
                raise LookupError(f"no gateway operation {name!r}")
            served = functools.partial(self.forward, op)
        return functools.partial(self._guarded, name, served)

    async def _guarded(
        self,
        name: str,
        served: Callable[..., Awaitable[Any]],
        principal: Principal,
        request: Any,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        """Run an operation within its token's rate limit; one that changes state is
        audited, refused or not."""
        if self.rate_limit is not None:
            wait = self.rate_limit.take(principal.token_id, time.monotonic())
            if wait > 0:
                raise Overloaded(
                    f"this token is over its rate limit ({self.rate_limit.rate_per_s:g} calls "
                    f"a second, bursts of {self.rate_limit.burst:g}): retry in {wait:.1f} s",
                    retry_after_s=wait,
                )
        if OPERATIONS[name].effect == "reads" or self.audit is None:
            return await served(principal, request, *args, **kwargs)
        try:
            answer = await served(principal, request, *args, **kwargs)
        except EngramError as error:
            await asyncio.to_thread(
                self.audit.append, audit.event(principal, name, request, None, error.code)
            )
            raise
        await asyncio.to_thread(
            self.audit.append, audit.event(principal, name, request, answer, "ok")
        )
        return answer

    async def list_audit_events(
        self, principal: Principal, request: gateway_pb2.ListAuditEventsRequest
    ) -> gateway_pb2.ListAuditEventsResponse:
        """The audit log, newest first; a store-scoped admin sees its stores' events only."""
        principal.require(Tier.ADMIN, "reading the audit log")
        if request.store:
            principal.require_store(request.store)
        today = datetime.now(UTC).date()
        until = parse_day(request.until, "until") or today
        since = parse_day(request.since, "since") or until - timedelta(days=7)
        limit = request.limit or 200
        if limit > _MAX_AUDIT_EVENTS:
            raise InvalidInput(f"limit is at most {_MAX_AUDIT_EVENTS}", field="limit")
        answer = gateway_pb2.ListAuditEventsResponse()
        if self.audit is None:
            return answer
        events = await asyncio.to_thread(
            lambda: list(
                itertools.islice(
                    (
                        e
                        for e in self.audit.read(since, until)  # type: ignore[union-attr]
                        if (not request.store or e.store == request.store)
                        and principal.may_use(e.store)
                    ),
                    limit,
                )
            )
        )
        for event in events:
            shown = answer.events.add(
                token_id=event.token_id,
                tier=int(Tier.parse(event.tier)),  # type: ignore[arg-type]
                operation=event.operation,
                store=event.store,
                targets=list(event.targets),
                outcome=event.outcome,
            )
            shown.at.FromDatetime(datetime.fromisoformat(event.at))
        return answer

    def authenticate(self, token: str) -> Principal:
        """The principal of a bearer token (Unauthenticated when it is not valid)."""
        return self.tokens.authenticate(token)

    # ------------------------------------------------------------------ store registry

    async def create_store(
        self, principal: Principal, request: gateway_pb2.CreateStoreRequest
    ) -> gateway_pb2.StoreInfo:
        principal.require(Tier.ADMIN, "creating a store")
        principal.require_store(request.spec.name)
        return self.registry.create(request.spec, placement=self._tiers.place(request.spec.name))

    async def list_stores(
        self, principal: Principal, request: gateway_pb2.ListStoresRequest
    ) -> gateway_pb2.ListStoresResponse:
        principal.require(REQUIRED_TIER["list_stores"], "listing stores")
        stores = [s for s in self.registry.list() if principal.may_use(s.spec.name)]
        gate = asyncio.Semaphore(LIST_COUNT_CONCURRENCY)

        async def count(info: gateway_pb2.StoreInfo) -> None:
            async with gate:  # a count per store, not each store's full statistics
                stats = await self._live_stats(principal, info, counts_only=True)
            if stats is not None:
                info.drawer_count = stats.drawers

        await asyncio.gather(*(count(info) for info in stores if info.open))
        return gateway_pb2.ListStoresResponse(stores=stores)

    async def get_store(
        self, principal: Principal, request: gateway_pb2.GetStoreRequest
    ) -> gateway_pb2.StoreInfo:
        principal.require(REQUIRED_TIER["get_store"], "reading a store")
        principal.require_store(request.name)
        info = self.registry.get(request.name)
        if info.open:
            stats = await self._live_stats(principal, info)
            if stats is not None:
                info.drawer_count = stats.drawers
                info.search_defaults.CopyFrom(stats.search_defaults)
        return info

    async def reembed_store(
        self, principal: Principal, request: common_pb2.ReembedStoreRequest
    ) -> gateway_pb2.ReembedStoreResponse:
        """Both tiers that keep vectors rebuild theirs with the model in force: the retrieval
        tier its drawers (in the background, progress in its stats), the corpus tier its raw
        and source chunks (a job)."""
        drawers = await self._store_call(
            principal, "reembed_store", request, self._tiers.retrieval.ReembedStore
        )
        raw = await call(self._tiers.corpus.ReembedStore, request)  # the store filled in above
        return gateway_pb2.ReembedStoreResponse(drawers=drawers, raw=raw)

    async def _live_stats(
        self, principal: Principal, info: gateway_pb2.StoreInfo, *, counts_only: bool = False
    ) -> retrieval_pb2.StatsResponse | None:
        """The retrieval tier's stats of a store; None when it cannot answer (the registry
        entry is still worth showing): a tier that is down is a warning in the log, a store it
        refuses is said in the entry (`attention`)."""
        name = info.spec.name
        stats = retrieval_pb2.StatsRequest(
            store=common_pb2.StoreContext(name=name), counts_only=counts_only
        )
        try:
            answer: retrieval_pb2.StatsResponse = await self._store_call(
                principal, "stats", stats, self._tiers.retrieval.Stats
            )
        except Unavailable as error:
            logger.warning("no live figures for store %s: %s", name, error.message)
            return None
        except FailedPrecondition as error:
            info.attention = error.message
            return None
        return answer

    async def update_store(
        self, principal: Principal, request: gateway_pb2.UpdateStoreRequest
    ) -> gateway_pb2.StoreInfo:
        principal.require(Tier.ADMIN, "changing a store")
        principal.require_store(request.name)
        return self.registry.update(request)

    async def delete_store(
        self, principal: Principal, request: gateway_pb2.DeleteStoreRequest
    ) -> gateway_pb2.DeleteStoreResponse:
        principal.require(Tier.ADMIN, "deleting a store")
        principal.require_store(request.name)
        info = self.registry.get(request.name)
        if not request.confirm:
            raise InvalidInput(
                f"deleting store {request.name!r} removes every tier's data for it; "
                "repeat the request with confirm=true",
                field="confirm",
            )
        drop = common_pb2.DropStoreRequest(
            store=self.registry.context(info.spec.name, closed_ok=True)
        )
        drop.store.caller_tier = int(principal.tier)  # type: ignore[assignment]
        drop.store.caller_id = principal.token_id
        # Every tier first: if one fails the entry stays, and the delete can be repeated.
        await call(self._tiers.authoring.DropStore, drop)
        await call(self._tiers.corpus.DropStore, drop)
        await call(self._tiers.retrieval.DropStore, drop)
        self.registry.remove(request.name)
        return gateway_pb2.DeleteStoreResponse(deleted=True)

    async def check_store(
        self, principal: Principal, request: common_pb2.CheckStoreRequest
    ) -> gateway_pb2.StoreDoctorReport:
        """`engram doctor`: every tier that keeps the store's state compares its parts (and
        mends them on request); the answer adds their findings up."""
        checks = []
        for rpc in (self._tiers.retrieval.CheckStore, self._tiers.corpus.CheckStore):
            asked = common_pb2.CheckStoreRequest()
            asked.CopyFrom(request)
            checks.append(await self._store_call(principal, "check_store", asked, rpc))
        drifts = [d for check in checks for d in check.drift]
        return gateway_pb2.StoreDoctorReport(
            store=request.store.name,
            checks=checks,
            drift=sum(d.count for d in drifts),
            repaired=sum(d.count for d in drifts if d.repaired),
        )

    # ------------------------------------------------------------------ tokens

    async def create_token(
        self, principal: Principal, request: gateway_pb2.CreateTokenRequest
    ) -> gateway_pb2.CreateTokenResponse:
        principal.require(Tier.ADMIN, "creating a token")
        if request.tier == common_pb2.CALLER_TIER_UNSPECIFIED:
            raise InvalidInput(
                "tier is required: CALLER_TIER_READ, CALLER_TIER_WRITE or CALLER_TIER_ADMIN",
                field="tier",
            )
        stores = list(request.stores) or None
        if not principal.covers(stores):
            raise _scope_escalation()
        expires = request.expires_at.ToDatetime(UTC) if request.HasField("expires_at") else None
        record, token = self.tokens.create(Tier(request.tier), stores, request.label, expires)
        return gateway_pb2.CreateTokenResponse(info=token_info(record), token=token)

    async def list_tokens(
        self, principal: Principal, request: gateway_pb2.ListTokensRequest
    ) -> gateway_pb2.ListTokensResponse:
        principal.require(Tier.ADMIN, "listing tokens")
        visible = [r for r in self.tokens.list() if principal.covers(r.stores)]
        return gateway_pb2.ListTokensResponse(tokens=[token_info(r) for r in visible])

    async def rotate_token(
        self, principal: Principal, request: gateway_pb2.RotateTokenRequest
    ) -> gateway_pb2.CreateTokenResponse:
        """A new secret for the grant; the old one works for the grace period."""
        principal.require(Tier.ADMIN, "rotating a token")
        if not principal.covers(self.tokens.get(request.id).stores):
            raise _scope_escalation()
        grace = request.grace_s if request.HasField("grace_s") else DEFAULT_GRACE_S
        record, token = self.tokens.rotate(request.id, grace)
        return gateway_pb2.CreateTokenResponse(info=token_info(record), token=token)

    async def revoke_token(
        self, principal: Principal, request: gateway_pb2.RevokeTokenRequest
    ) -> gateway_pb2.RevokeTokenResponse:
        principal.require(Tier.ADMIN, "revoking a token")
        if not principal.covers(self.tokens.get(request.id).stores):
            raise _scope_escalation()
        return gateway_pb2.RevokeTokenResponse(revoked=self.tokens.revoke(request.id))

    async def who_am_i(
        self, principal: Principal, request: gateway_pb2.WhoAmIRequest
    ) -> gateway_pb2.TokenInfo:
        """The calling token as the token table knows it (never the token itself)."""
        return token_info(self.tokens.get(principal.token_id))

    async def get_system_status(
        self, principal: Principal, request: gateway_pb2.GetSystemStatusRequest
    ) -> gateway_pb2.SystemStatus:
        """Each tier's health, and the embedder as the retrieval tier reaches it."""
        status = gateway_pb2.SystemStatus(
            tiers=await self.tiers.health(), version=gateway_version()
        )
        try:
            status.embedder.CopyFrom(
                await call(self.tiers.retrieval.DescribeEmbedder, embedder_pb2.InfoRequest())
            )
        except EngramError as error:
            status.embedder_error = error.message
        return status

    # ------------------------------------------------------------------ jobs

    async def _job(self, principal: Principal, operation: str, job_id: str) -> common_pb2.Job:
        principal.require(REQUIRED_TIER[operation], operation.replace("_", " "))
        if not job_id:
            raise InvalidInput("a job id is required", field="id")
        record = await self._jobs.get(job_id)
        principal.require_store(record.store)
        return record

    async def get_job(
        self, principal: Principal, request: gateway_pb2.GetJobRequest
    ) -> common_pb2.Job:
        return await self._job(principal, "get_job", request.id)

    async def cancel_job(
        self, principal: Principal, request: gateway_pb2.CancelJobRequest
    ) -> common_pb2.Job:
        await self._job(principal, "cancel_job", request.id)
        return await self._jobs.cancel(request.id)

    async def watch_job(
        self, principal: Principal, request: gateway_pb2.GetJobRequest
    ) -> AsyncIterator[common_pb2.Job]:
        """The job now and after every change, ending with its terminal state. Checked
        before this returns, so a refusal is an error rather than an empty stream."""
        await self._job(principal, "watch_job", request.id)
        return self._jobs.events(request.id, poll_s=self._sse_poll_s)

    async def list_jobs(
        self, principal: Principal, request: gateway_pb2.ListJobsRequest
    ) -> gateway_pb2.ListJobsResponse:
        principal.require(REQUIRED_TIER["list_jobs"], "listing jobs")
        limit = request.limit or _DEFAULT_JOB_LIMIT
        if request.store:
            principal.require_store(request.store)
            stores: list[str] | None = [request.store]
        elif principal.stores is not None:
            stores = sorted(principal.stores)
        else:
            stores = None
        return gateway_pb2.ListJobsResponse(jobs=await self._jobs.list(stores, limit))

    # ------------------------------------------------------------------ readiness

    async def warm_up(self) -> None:
        """Open every open store on the retrieval tier (replay after a start), so the first
        search of each does not pay for opening it. Failures are logged, not raised."""
        for info in self.registry.list():
            if not info.open:
                continue
            stats = retrieval_pb2.StatsRequest(store=self.registry.context(info.spec.name))
            try:
                await call(self._tiers.retrieval.Stats, stats)
            except EngramError as error:
                logger.warning("store %s not warmed up: %s", info.spec.name, error.message)


def token_info(record: TokenRecord) -> gateway_pb2.TokenInfo:
    info = gateway_pb2.TokenInfo(
        id=record.id,
        tier=int(record.tier),  # type: ignore[arg-type]
        stores=list(record.stores or ()),
        label=record.label,
    )
    info.created_at.FromDatetime(record.created_at)
    if record.last_used_at is not None:
        info.last_used_at.FromDatetime(record.last_used_at)
    if record.expires_at is not None:
        info.expires_at.FromDatetime(record.expires_at)
    if record.previous_valid_until is not None:
        info.previous_valid_until.FromDatetime(record.previous_valid_until)
    return info


def _scope_escalation() -> PermissionDenied:
    return PermissionDenied(
        "a token cannot grant or revoke access to stores outside its own scope", field="stores"
    )


_MAX_AUDIT_EVENTS = 5000


def gateway_version() -> str:
    """The installed distribution's version ("0" in a bare checkout)."""
    try:
        return version("engram")
    except PackageNotFoundError:  # a bare checkout, not installed as a distribution
        return "0"
