"""What an evaluation runs against: a small protocol over the public operations it needs, with
two implementations over a running gateway: REST (`/v1`) and the public gRPC API
(`engram.v1.Engram`). Both use one token, which must be an admin token (stores are created,
imported into and deleted).

Both speak the same request messages: REST bodies are the proto3 JSON mapping of the request
(proto field names, enums by name) minus `store`, which travels in the path; answers are parsed
back into the response messages, so the runners never see which face they talk to.

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
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol, TypeVar, cast

import grpc
import httpx
from engram.v1 import (
    authoring_pb2,
    common_pb2,
    corpus_pb2,
    gateway_pb2,
    gateway_pb2_grpc,
    retrieval_pb2,
)
from google.protobuf import json_format
from google.protobuf.message import Message

from services.retrieval.core.drawer_jsonl import drawer_to_line

M = TypeVar("M", bound=Message)

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


# ---------------------------------------------------------------- gRPC, through the gateway


class GrpcTarget:
    """The gateway's public gRPC API (`engram.v1.Engram`), with the same token as REST in
    the `authorization` metadata. Requests name only `store.name`; the gateway fills in the
    rest from its registry, exactly as for REST."""

    def __init__(self, address: str, token: str, *, timeout_s: float = 600.0) -> None:
        self._address = address
        options = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]
        self._channel = grpc.aio.insecure_channel(address, options=options)
        self._stub = gateway_pb2_grpc.EngramStub(self._channel)
        self._metadata = (("authorization", f"Bearer {token}"),)
        self._timeout = timeout_s

    @property
    def description(self) -> str:
        return f"gRPC gateway {self._address}"

    async def _call(self, rpc: Any, request: Any) -> Any:
        try:
            return await rpc(request, metadata=self._metadata, timeout=self._timeout)
        except grpc.aio.AioRpcError as error:
            raise EvalTargetError(
                f"{error.code().name} from {self._address}: {error.details()}"
            ) from error

    async def _store_call(self, rpc: Any, store: str, request: Message) -> Any:
        """`request` sent to `rpc` naming only the store; the gateway fills in the rest."""
        sent = type(request)()
        sent.CopyFrom(request)
        sent.store.CopyFrom(common_pb2.StoreContext(name=store))  # type: ignore[attr-defined]
        return await self._call(rpc, sent)

    async def create_store(self, spec: gateway_pb2.StoreSpec) -> None:
        await self._call(self._stub.CreateStore, gateway_pb2.CreateStoreRequest(spec=spec))

    async def import_drawers(self, store: str, drawers: Sequence[common_pb2.Drawer]) -> int:
        imported = 0
        for batch in _batches(drawers, IMPORT_BATCH):
            body = _jsonl(batch)

            async def chunks(
                body: bytes = body,
            ) -> AsyncIterator[retrieval_pb2.ImportDrawersChunk]:
                piece = 256 * 1024
                for start in range(0, len(body), piece):
                    chunk = retrieval_pb2.ImportDrawersChunk(jsonl=body[start : start + piece])
                    if start == 0:
                        chunk.store.name = store
                    yield chunk

            answer = await self._call(self._stub.ImportDrawers, chunks())
            imported += answer.imported
        return imported

    async def search(
        self, store: str, request: retrieval_pb2.SearchRequest
    ) -> retrieval_pb2.SearchResponse:
        return cast(
            retrieval_pb2.SearchResponse, await self._store_call(self._stub.Search, store, request)
        )

    async def create_link(
        self, store: str, request: retrieval_pb2.CreateLinkRequest
    ) -> retrieval_pb2.DrawerLink:
        return cast(
            retrieval_pb2.DrawerLink, await self._store_call(self._stub.CreateLink, store, request)
        )

    async def add_raw_session(
        self, store: str, request: corpus_pb2.AddRawSessionRequest
    ) -> corpus_pb2.AddRawSessionResponse:
        return cast(
            corpus_pb2.AddRawSessionResponse,
            await self._store_call(self._stub.AddRawSession, store, request),
        )

    async def search_raw(
        self, store: str, request: corpus_pb2.SearchRawRequest
    ) -> corpus_pb2.SearchRawResponse:
        return cast(
            corpus_pb2.SearchRawResponse,
            await self._store_call(self._stub.SearchRaw, store, request),
        )

    async def list_drawers(
        self, store: str, request: retrieval_pb2.ListDrawersRequest
    ) -> retrieval_pb2.ListDrawersResponse:
        return cast(
            retrieval_pb2.ListDrawersResponse,
            await self._store_call(self._stub.ListDrawers, store, request),
        )

    async def compose(self, store: str, request: authoring_pb2.ComposeRequest) -> common_pb2.Job:
        return cast(common_pb2.Job, await self._store_call(self._stub.Compose, store, request))

    async def get_job(self, job_id: str) -> common_pb2.Job:
        job: common_pb2.Job = await self._call(
            self._stub.GetJob, gateway_pb2.GetJobRequest(id=job_id)
        )
        return job

    async def drop_store(self, store: str) -> None:
        await self._call(
            self._stub.DeleteStore, gateway_pb2.DeleteStoreRequest(name=store, confirm=True)
        )

    async def aclose(self) -> None:
        await self._channel.close()


# ---------------------------------------------------------------- REST, through the gateway


def _body(message: Message) -> dict[str, Any]:
    """A request as proto3 JSON (proto field names, enums by name), without `store`."""
    data = json_format.MessageToDict(message, preserving_proto_field_name=True)
    data.pop("store", None)
    return data


def _parse(data: object, message_type: type[M]) -> M:
    if not isinstance(data, dict):
        raise EvalTargetError(
            f"expected a JSON object ({message_type.__name__}), got {data!r:.200}"
        )
    message = message_type()
    json_format.ParseDict(data, message, ignore_unknown_fields=True)
    return message


class RestTarget:
    """The gateway's REST API (`/v1`), with a bearer token that may create and delete stores
    and import drawers (an admin token)."""

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        client: httpx.AsyncClient | None = None,
        timeout_s: float = 600.0,
    ) -> None:
        self._base = base_url.rstrip("/")
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._owned = client is None
        self._client = client or httpx.AsyncClient(base_url=self._base, timeout=timeout_s)
        self._headers = headers

    @property
    def description(self) -> str:
        return f"REST gateway {self._base}"

    async def _call(
        self,
        method: str,
        path: str,
        *,
        json: object = None,
        content: bytes | None = None,
        params: dict[str, str] | None = None,
        content_type: str | None = None,
    ) -> Any:
        headers = dict(self._headers)
        if content_type:
            headers["Content-Type"] = content_type
        try:
            answer = await self._client.request(
                method, path, json=json, content=content, params=params, headers=headers
            )
        except httpx.HTTPError as error:
            raise EvalTargetError(f"{method} {self._base}{path}: {error}") from error
        if answer.status_code >= 400:
            raise EvalTargetError(
                f"{method} {path} answered {answer.status_code}: {answer.text[:500]}"
            )
        return answer.json() if answer.content else {}

    async def create_store(self, spec: gateway_pb2.StoreSpec) -> None:
        body = _body(gateway_pb2.CreateStoreRequest(spec=spec))
        await self._call("POST", "/v1/stores", json=body)

    async def import_drawers(self, store: str, drawers: Sequence[common_pb2.Drawer]) -> int:
        imported = 0
        for batch in _batches(drawers, IMPORT_BATCH):
            data = await self._call(
                "POST",
                f"/v1/stores/{store}/drawers:import",
                content=_jsonl(batch),
                content_type="application/x-ndjson",
            )
            answer = _parse(data, retrieval_pb2.ImportDrawersResponse)
            imported += answer.imported
        return imported

    async def search(
        self, store: str, request: retrieval_pb2.SearchRequest
    ) -> retrieval_pb2.SearchResponse:
        data = await self._call("POST", f"/v1/stores/{store}/search", json=_body(request))
        return _parse(data, retrieval_pb2.SearchResponse)

    async def create_link(
        self, store: str, request: retrieval_pb2.CreateLinkRequest
    ) -> retrieval_pb2.DrawerLink:
        data = await self._call("POST", f"/v1/stores/{store}/links", json=_body(request))
        return _parse(data, retrieval_pb2.DrawerLink)

    async def add_raw_session(
        self, store: str, request: corpus_pb2.AddRawSessionRequest
    ) -> corpus_pb2.AddRawSessionResponse:
        data = await self._call("POST", f"/v1/stores/{store}/raw/sessions", json=_body(request))
        return _parse(data, corpus_pb2.AddRawSessionResponse)

    async def search_raw(
        self, store: str, request: corpus_pb2.SearchRawRequest
    ) -> corpus_pb2.SearchRawResponse:
        data = await self._call("POST", f"/v1/stores/{store}/raw/search", json=_body(request))
        return _parse(data, corpus_pb2.SearchRawResponse)

    async def list_drawers(
        self, store: str, request: retrieval_pb2.ListDrawersRequest
    ) -> retrieval_pb2.ListDrawersResponse:
        params = {"page_size": str(request.page.page_size or 50)}
        if request.page.page_token:
            params["page_token"] = request.page.page_token
        data = await self._call("GET", f"/v1/stores/{store}/drawers", params=params)
        return _parse(data, retrieval_pb2.ListDrawersResponse)

    async def compose(self, store: str, request: authoring_pb2.ComposeRequest) -> common_pb2.Job:
        data = await self._call(
            "POST", f"/v1/stores/{store}/authoring/compose", json=_body(request)
        )
        return _parse(data, common_pb2.Job)

    async def get_job(self, job_id: str) -> common_pb2.Job:
        return _parse(await self._call("GET", f"/v1/jobs/{job_id}"), common_pb2.Job)

    async def drop_store(self, store: str) -> None:
        await self._call("DELETE", f"/v1/stores/{store}", params={"confirm": "true"})

    async def aclose(self) -> None:
        if self._owned:
            await self._client.aclose()
