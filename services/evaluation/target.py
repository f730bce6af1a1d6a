"""What an evaluation runs against: a small protocol over the public operations it needs, with
a REST implementation (the gateway, `/v1`) and a direct gRPC one (the retrieval and corpus
tiers, no gateway: for tests and for measuring the tiers alone).

Both speak the same request messages: REST bodies are the proto3 JSON mapping of the request
(proto field names, enums by name) minus `store`, which travels in the path; answers are parsed
back into the response messages, so the runners never see which face they talk to.

Decisions:

- Every dataset goes into its own throw-away store, created first and dropped at the end
  (also when the run fails), so an evaluation never touches a user's data.
- Bulk loads go through the admin JSONL import (REST `drawers:import`, gRPC `ImportDrawers`),
  sent in batches so no single request approaches a body limit.
- The gRPC target keeps the store's settings itself (the gateway's registry does that on the
  REST side) and attaches them as the StoreContext of every call.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol, TypeVar

import grpc
import httpx
from engram.v1 import (
    common_pb2,
    corpus_pb2,
    corpus_pb2_grpc,
    gateway_pb2,
    retrieval_pb2,
    retrieval_pb2_grpc,
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

    async def add_raw_session(
        self, store: str, request: corpus_pb2.AddRawSessionRequest
    ) -> corpus_pb2.AddRawSessionResponse: ...

    async def search_raw(
        self, store: str, request: corpus_pb2.SearchRawRequest
    ) -> corpus_pb2.SearchRawResponse: ...

    async def drop_store(self, store: str) -> None: ...

    async def aclose(self) -> None: ...


def throwaway_store_name(prefix: str) -> str:
    """A fresh store slug for one dataset: `eval-<prefix>-<8 hex>` (at most 63 characters)."""
    slug = "".join(c if c.isalnum() else "-" for c in prefix.lower()).strip("-")[:40]
    return f"eval-{slug or 'set'}-{uuid.uuid4().hex[:8]}"


def _batches(drawers: Sequence[common_pb2.Drawer], size: int) -> list[Sequence[common_pb2.Drawer]]:
    return [drawers[start : start + size] for start in range(0, len(drawers), size)]


def _jsonl(drawers: Sequence[common_pb2.Drawer]) -> bytes:
    return "".join(drawer_to_line(d) + "\n" for d in drawers).encode("ascii")


def _import_errors(answer: retrieval_pb2.ImportDrawersResponse) -> None:
    if answer.errors:
        shown = "; ".join(f"line {e.line}: {e.message}" for e in answer.errors[:5])
        raise EvalTargetError(
            f"the drawer import was refused ({len(answer.errors)} bad lines): {shown}"
        )


# ---------------------------------------------------------------- gRPC, straight to the tiers


class GrpcTierTarget:
    """The retrieval and corpus tiers over gRPC, without the gateway."""

    def __init__(self, retrieval_addr: str, corpus_addr: str) -> None:
        self._addrs = (retrieval_addr, corpus_addr)
        options = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]
        self._retrieval_channel = grpc.aio.insecure_channel(retrieval_addr, options=options)
        self._corpus_channel = grpc.aio.insecure_channel(corpus_addr, options=options)
        self._retrieval = retrieval_pb2_grpc.RetrievalServiceStub(self._retrieval_channel)
        self._corpus = corpus_pb2_grpc.CorpusServiceStub(self._corpus_channel)
        self._stores: dict[str, common_pb2.StoreContext] = {}

    @property
    def description(self) -> str:
        return f"gRPC tiers (retrieval {self._addrs[0]}, corpus {self._addrs[1]})"

    def _store(self, name: str) -> common_pb2.StoreContext:
        try:
            return self._stores[name]
        except KeyError:
            raise EvalTargetError(f"store {name!r} was not created by this target") from None

    async def create_store(self, spec: gateway_pb2.StoreSpec) -> None:
        context = common_pb2.StoreContext(
            name=spec.name,
            deployment_mode=spec.deployment_mode,
            legacy_authority=spec.legacy_authority,
            caller_tier=common_pb2.CALLER_TIER_ADMIN,
            caller_id="engram-eval",
        )
        context.authority_profile.CopyFrom(spec.authority_profile)
        context.defaults.CopyFrom(spec.defaults)
        self._stores[spec.name] = context

    async def import_drawers(self, store: str, drawers: Sequence[common_pb2.Drawer]) -> int:
        context = self._store(store)
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
                        chunk.store.CopyFrom(context)
                    yield chunk

            answer = await self._retrieval.ImportDrawers(chunks())
            _import_errors(answer)
            imported += answer.imported
        return imported

    async def search(
        self, store: str, request: retrieval_pb2.SearchRequest
    ) -> retrieval_pb2.SearchResponse:
        sent = retrieval_pb2.SearchRequest()
        sent.CopyFrom(request)
        sent.store.CopyFrom(self._store(store))
        answer: retrieval_pb2.SearchResponse = await self._retrieval.Search(sent)
        return answer

    async def add_raw_session(
        self, store: str, request: corpus_pb2.AddRawSessionRequest
    ) -> corpus_pb2.AddRawSessionResponse:
        sent = corpus_pb2.AddRawSessionRequest()
        sent.CopyFrom(request)
        sent.store.CopyFrom(self._store(store))
        answer: corpus_pb2.AddRawSessionResponse = await self._corpus.AddRawSession(sent)
        return answer

    async def search_raw(
        self, store: str, request: corpus_pb2.SearchRawRequest
    ) -> corpus_pb2.SearchRawResponse:
        sent = corpus_pb2.SearchRawRequest()
        sent.CopyFrom(request)
        sent.store.CopyFrom(self._store(store))
        answer: corpus_pb2.SearchRawResponse = await self._corpus.SearchRaw(sent)
        return answer

    async def drop_store(self, store: str) -> None:
        context = self._stores.pop(store, None)
        if context is None:
            return
        drop = common_pb2.DropStoreRequest(store=context)
        await self._retrieval.DropStore(drop)
        await self._corpus.DropStore(drop)

    async def aclose(self) -> None:
        await self._retrieval_channel.close()
        await self._corpus_channel.close()


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
            _import_errors(answer)
            imported += answer.imported
        return imported

    async def search(
        self, store: str, request: retrieval_pb2.SearchRequest
    ) -> retrieval_pb2.SearchResponse:
        data = await self._call("POST", f"/v1/stores/{store}/search", json=_body(request))
        return _parse(data, retrieval_pb2.SearchResponse)

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

    async def drop_store(self, store: str) -> None:
        await self._call("DELETE", f"/v1/stores/{store}", params={"confirm": "true"})

    async def aclose(self) -> None:
        if self._owned:
            await self._client.aclose()
