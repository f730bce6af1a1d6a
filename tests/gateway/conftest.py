"""The gateway against the real stack: embedder, retrieval, corpus (with its ingest worker) and
authoring (with its compose worker) in-process over real gRPC on 127.0.0.1:0, real Redis,
the real model; the gateway app driven through httpx's ASGI transport."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
import uvicorn
from engram.v1 import gateway_pb2_grpc
from fastapi import FastAPI

from gateway.app import create_app
from gateway.core.wiring import GatewayDeps
from gateway.settings import GatewaySettings
from services.authoring.invokers import ApiKeys
from tests.services.authoring.conftest import clean_queues, running_stack

ADMIN_TOKEN = "egm_test-admin-" + secrets.token_urlsafe(16)
TIERS = ("read", "write", "admin")


@dataclass
class Tiers:
    """Addresses and job queues of the running tiers."""

    retrieval_addr: str
    corpus_addr: str
    authoring_addr: str
    corpus_queue: str
    authoring_queue: str
    redis_url: str
    retrieval_root: Path | None = None  # the retrieval tier's data (a store's files are there)


@contextlib.asynccontextmanager
async def stack_tiers(root: Path, embedder_addr: str, redis_url: str) -> AsyncIterator[Tiers]:
    """Every tier of a stack over `root` (its own job queues), as the gateway needs them."""
    suffix = f"gw-{uuid.uuid4().hex[:8]}"
    try:
        async with running_stack(root, embedder_addr, redis_url, suffix, keys=ApiKeys({})) as up:
            yield Tiers(
                retrieval_addr=up.addresses["retrieval"],
                corpus_addr=up.addresses["corpus"],
                authoring_addr=up.addresses["authoring"],
                corpus_queue=up.corpus_queue,
                authoring_queue=up.authoring_queue,
                redis_url=redis_url,
                retrieval_root=root / "retrieval",
            )
    finally:
        clean_queues(redis_url, suffix)


@pytest.fixture(scope="session")
async def tiers(
    tmp_path_factory: pytest.TempPathFactory, embedder_addr: str, redis_url: str
) -> AsyncIterator[Tiers]:
    async with stack_tiers(
        tmp_path_factory.mktemp("gateway-stack"), embedder_addr, redis_url
    ) as up:
        yield up


def gateway_settings(tiers: Tiers, data_dir: Path, **extra: Any) -> GatewaySettings:
    extra.setdefault("grpc_port", 0)  # tests never bind a fixed port
    return GatewaySettings(
        data_dir=data_dir,
        admin_token=ADMIN_TOKEN,
        retrieval_addr=tiers.retrieval_addr,
        corpus_addr=tiers.corpus_addr,
        authoring_addr=tiers.authoring_addr,
        redis_url=tiers.redis_url,
        corpus_job_queue=tiers.corpus_queue,
        authoring_job_queue=tiers.authoring_queue,
        sse_poll_s=0.2,
        **extra,
    )


@dataclass
class Api:
    """A running gateway app and an HTTP client for it."""

    app: FastAPI
    client: httpx.AsyncClient
    settings: GatewaySettings
    tokens: dict[tuple[str, str | None], str] = field(default_factory=dict)

    @staticmethod
    def auth(token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}"}

    @property
    def admin(self) -> dict[str, str]:
        return self.auth(ADMIN_TOKEN)

    async def token(self, tier: str, store: str | None = None) -> str:
        """A token of `tier` scoped to `store` (None: every store), made once and kept."""
        key = (tier, store)
        if key not in self.tokens:
            body: dict[str, Any] = {"tier": f"CALLER_TIER_{tier.upper()}"}
            if store is not None:
                body["stores"] = [store]
            answer = await self.client.post("/v1/tokens", json=body, headers=self.admin)
            assert answer.status_code == 201, answer.text
            self.tokens[key] = answer.json()["token"]
        return self.tokens[key]

    async def as_tier(self, tier: str, store: str | None = None) -> dict[str, str]:
        return self.auth(await self.token(tier, store))

    async def create_store(self, name: str, **spec: Any) -> dict[str, Any]:
        answer = await self.client.post(
            "/v1/stores", json={"spec": {"name": name, **spec}}, headers=self.admin
        )
        assert answer.status_code == 201, answer.text
        result: dict[str, Any] = answer.json()
        return result

    async def wait_job(self, job_id: str, timeout_s: float = 120) -> dict[str, Any]:
        """Poll GET /v1/jobs/{id} until the job ends (bounded)."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        while True:
            answer = await self.client.get(f"/v1/jobs/{job_id}", headers=self.admin)
            assert answer.status_code == 200, answer.text
            job: dict[str, Any] = answer.json()
            if job["state"] in ("JOB_STATE_DONE", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"):
                return job
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError(f"job {job_id} still {job['state']} after {timeout_s} s")
            await asyncio.sleep(0.1)


@contextlib.asynccontextmanager
async def lifespan_running(app: FastAPI) -> AsyncIterator[None]:
    """The app's lifespan, entered and left in one task of its own, as a server does.

    A session fixture's set-up and tear-down run in different tasks; the MCP transport's task
    group (part of the lifespan) must be left in the task that entered it."""
    started, stop = asyncio.Event(), asyncio.Event()

    async def hold() -> None:
        async with app.router.lifespan_context(app):
            started.set()
            await stop.wait()

    task = asyncio.create_task(hold())
    waiter = asyncio.create_task(started.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if not started.is_set():
        waiter.cancel()
        await task  # raises what the lifespan raised on start
    try:
        yield
    finally:
        stop.set()
        await task


@contextlib.asynccontextmanager
async def running_gateway(settings: GatewaySettings) -> AsyncIterator[Api]:
    """A gateway app with its lifespan entered, and a client over the ASGI transport."""
    app = create_app(settings, GatewayDeps(settings))
    async with lifespan_running(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as client:
            yield Api(app, client, settings)


@dataclass
class Served:
    """A gateway served over real HTTP, and a REST client for it."""

    url: str
    api: Api


@contextlib.asynccontextmanager
async def served_gateway(settings: GatewaySettings) -> AsyncIterator[Served]:
    """A gateway app served by uvicorn on a free port of 127.0.0.1 (real HTTP, real sockets)."""
    app = create_app(settings, GatewayDeps(settings))
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    )
    task = asyncio.create_task(server.serve())
    deadline = asyncio.get_running_loop().time() + 60
    while not server.started:
        if task.done():
            task.result()
            raise AssertionError("uvicorn stopped before it started")
        assert asyncio.get_running_loop().time() < deadline, "uvicorn did not start in 60 s"
        await asyncio.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    # The client lets an idle connection go well before uvicorn closes it (timeout_keep_alive,
    # 5 s, httpx's own default expiry too): with both at 5 s, a request between slow browser
    # steps could be sent on a connection the server was closing (httpcore.ReadError).
    limits = httpx.Limits(keepalive_expiry=1.0)
    try:
        async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
            yield Served(url=url, api=Api(app, client, settings))
    finally:
        server.should_exit = True
        await asyncio.wait_for(task, 30)


@pytest.fixture(scope="session")
async def api(tiers: Tiers, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Api]:
    """One gateway for the session; tests isolate themselves by store name."""
    settings = gateway_settings(tiers, tmp_path_factory.mktemp("gateway"))
    async with running_gateway(settings) as running:
        yield running


@pytest.fixture
def store_name() -> str:
    return f"gw-{uuid.uuid4().hex[:10]}"


@pytest.fixture
async def engram(api: Api) -> AsyncIterator[gateway_pb2_grpc.EngramStub]:
    """A stub over a real channel to the session gateway's gRPC port."""
    port = api.app.state.grpc_port
    assert isinstance(port, int) and port > 0, f"the gateway bound no gRPC port: {port!r}"
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        yield gateway_pb2_grpc.EngramStub(channel)
