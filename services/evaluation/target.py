"""What an evaluation runs against: a small protocol over the public operations it needs, served
over a running gateway by the client library (`ClientTarget`: the public gRPC API or REST, one
transport each) and in-process by `services.evaluation.inprocess`. The token must be an admin
token (stores are created, imported into and deleted).

Both transports send the same request messages and get the same response messages back
(`engram.client`), so the runners never see which face they talk to.

Decisions:

- Every dataset goes into its own throw-away store, created first and dropped at the end
  (also when the run fails), so an evaluation never touches a user's data.
- Bulk loads go through the admin JSONL import (REST `drawers:import`, gRPC `ImportDrawers`),
  sent in batches so no single request approaches a body limit.
- Both faces name only the store; the gateway's registry attaches its settings, so the two
  targets send the same requests and must get the same answers.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from typing import Any, Protocol, cast

import httpx
from engram.client import AsyncClient, EngramError
from engram.v1 import (
    authoring_pb2,
    common_pb2,
    corpus_pb2,
    gateway_pb2,
    retrieval_pb2,
)
from google.protobuf.message import Message

from services.retrieval.core.drawer_jsonl import drawer_to_line

# Drawers per import call: SciFact abstracts average ~1.5 kB, so a batch is under 1 MB and,
# embedded on one CPU thread (~8 abstracts/s), about a minute: far inside the gateway's
# streamed-call deadline and body limit.
IMPORT_BATCH = 500


class EvalTargetError(RuntimeError):
    """The target refused or failed an operation; the message says which and why."""


class EvalTarget(Protocol):
    """The operations an evaluation needs from a running Engram."""

    @property
    def description(self) -> str:
        """Which face and address, for the report."""
        ...

    async def create_store(self, spec: gateway_pb2.StoreSpec) -> None: ...

    async def import_drawers(self, store: str, drawers: Sequence[common_pb2.Drawer]) -> int: ...

    async def search(
        self, store: str, request: retrieval_pb2.SearchRequest
    ) -> retrieval_pb2.SearchResponse: ...

    async def create_link(
        self, store: str, request: retrieval_pb2.CreateLinkRequest
    ) -> retrieval_pb2.DrawerLink: ...

    async def add_raw_session(
        self, store: str, request: corpus_pb2.AddRawSessionRequest
    ) -> corpus_pb2.AddRawSessionResponse: ...

    async def search_raw(
        self, store: str, request: corpus_pb2.SearchRawRequest
    ) -> corpus_pb2.SearchRawResponse: ...

    async def list_drawers(
        self, store: str, request: retrieval_pb2.ListDrawersRequest
    ) -> retrieval_pb2.ListDrawersResponse: ...

    async def compose(
        self, store: str, request: authoring_pb2.ComposeRequest
    ) -> common_pb2.Job: ...

    async def get_job(self, job_id: str) -> common_pb2.Job: ...

    async def drop_store(self, store: str) -> None: ...

    async def aclose(self) -> None: ...


TERMINAL_JOB_STATES = frozenset(
    {common_pb2.JOB_STATE_DONE, common_pb2.JOB_STATE_FAILED, common_pb2.JOB_STATE_CANCELLED}
)


async def wait_for_job(
    target: EvalTarget, job: common_pb2.Job, *, timeout_s: float = 3600.0, poll_s: float = 0.5
) -> common_pb2.Job:
    """Poll the job until it ends (bounded); a failed or cancelled job is an EvalTargetError."""
    deadline = time.monotonic() + timeout_s
    while job.state not in TERMINAL_JOB_STATES:
        if time.monotonic() > deadline:
            raise EvalTargetError(f"job {job.id} did not end within {timeout_s:g} s")
        await asyncio.sleep(poll_s)
        job = await target.get_job(job.id)
    if job.state != common_pb2.JOB_STATE_DONE:
        raise EvalTargetError(
            f"job {job.id} ended {common_pb2.JobState.Name(job.state)}: {job.error or 'no reason'}"
        )
    return job


def throwaway_store_name(prefix: str) -> str:
    """A fresh store slug for one dataset: `eval-<prefix>-<8 hex>` (at most 63 characters)."""
    slug = "".join(c if c.isalnum() else "-" for c in prefix.lower()).strip("-")[:40]
    return f"eval-{slug or 'set'}-{uuid.uuid4().hex[:8]}"


def _batches(drawers: Sequence[common_pb2.Drawer], size: int) -> list[Sequence[common_pb2.Drawer]]:
    return [drawers[start : start + size] for start in range(0, len(drawers), size)]


def _jsonl(drawers: Sequence[common_pb2.Drawer]) -> bytes:
    return "".join(drawer_to_line(d) + "\n" for d in drawers).encode("ascii")


# ---------------------------------------------------------------- through the client library


class ClientTarget:
    """A running gateway through the client library (`engram.client`), on one transport: its
    public gRPC API (`engram.v1.Engram`) or its REST API (`/v1`). Both send the same request
    messages naming only `store.name`; the gateway fills in the rest from its registry."""

    def __init__(self, client: AsyncClient, description: str) -> None:
        self._client = client
        self._description = description

    @classmethod
    def grpc(cls, address: str, token: str, *, timeout_s: float = 600.0) -> ClientTarget:
        client = AsyncClient(grpc=address, token=token, timeout_s=timeout_s)
        return cls(client, f"gRPC gateway {address}")

    @classmethod
    def rest(
        cls,
        base_url: str,
        token: str,
        *,
        client: httpx.AsyncClient | None = None,
        timeout_s: float = 600.0,
    ) -> ClientTarget:
        engram = AsyncClient(rest=base_url, token=token, http_client=client, timeout_s=timeout_s)
        return cls(engram, f"REST gateway {base_url.rstrip('/')}")

    @property
    def description(self) -> str:
        return self._description

    async def _call(self, name: str, request: Message | None = None, /, **fields: Any) -> Any:
        try:
            return await self._client.call(name, request, **fields)
        except EngramError as error:
            raise EvalTargetError(f"{name} over {error.transport} refused: {error}") from error

    async def create_store(self, spec: gateway_pb2.StoreSpec) -> None:
        await self._call("create_store", spec=spec)

    async def import_drawers(self, store: str, drawers: Sequence[common_pb2.Drawer]) -> int:
        imported = 0
        for batch in _batches(drawers, IMPORT_BATCH):
            try:
                answer = await self._client.import_drawers(store, _jsonl(batch))
            except EngramError as error:
                raise EvalTargetError(f"import_drawers refused: {error}") from error
            imported += answer.imported
        return imported

    async def search(
        self, store: str, request: retrieval_pb2.SearchRequest
    ) -> retrieval_pb2.SearchResponse:
        return cast(retrieval_pb2.SearchResponse, await self._call("search", request, store=store))

    async def create_link(
        self, store: str, request: retrieval_pb2.CreateLinkRequest
    ) -> retrieval_pb2.DrawerLink:
        return cast(retrieval_pb2.DrawerLink, await self._call("create_link", request, store=store))

    async def add_raw_session(
        self, store: str, request: corpus_pb2.AddRawSessionRequest
    ) -> corpus_pb2.AddRawSessionResponse:
        return cast(
            corpus_pb2.AddRawSessionResponse,
            await self._call("add_raw_session", request, store=store),
        )

    async def search_raw(
        self, store: str, request: corpus_pb2.SearchRawRequest
    ) -> corpus_pb2.SearchRawResponse:
        return cast(
            corpus_pb2.SearchRawResponse, await self._call("search_raw", request, store=store)
        )

    async def list_drawers(
        self, store: str, request: retrieval_pb2.ListDrawersRequest
    ) -> retrieval_pb2.ListDrawersResponse:
        return cast(
            retrieval_pb2.ListDrawersResponse,
            await self._call("list_drawers", request, store=store),
        )

    async def compose(self, store: str, request: authoring_pb2.ComposeRequest) -> common_pb2.Job:
        return cast(common_pb2.Job, await self._call("compose", request, store=store))

    async def get_job(self, job_id: str) -> common_pb2.Job:
        return cast(common_pb2.Job, await self._call("get_job", id=job_id))

    async def drop_store(self, store: str) -> None:
        await self._call("delete_store", name=store, confirm=True)

    async def aclose(self) -> None:
        await self._client.aclose()
