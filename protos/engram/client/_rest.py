"""REST transport: the gateway's `/v1` routes. Plain operations follow the route their RPC
declares (`(engram.v1.operation).http`: method, path, query fields or a JSON body); the
streamed ones the gateway writes by hand (uploads, JSONL import and export, job events,
backups and restores) are spelled out here. Requests and answers are the proto3 JSON mapping
of the same messages, so a caller never sees which transport carried them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, Final
from urllib.parse import quote

import httpx
from google.protobuf import json_format
from google.protobuf.message import Message

from engram.client.errors import UNAVAILABLE, UNSUPPORTED, EngramError
from engram.operations import HttpRoute, Operation, message_class
from engram.v1 import common_pb2, corpus_pb2, gateway_pb2, retrieval_pb2

JSONL: Final = "application/x-ndjson"
STREAM_PIECE_BYTES: Final = 1 << 20


def _to_json(message: Message) -> dict[str, Any]:
    data: dict[str, Any] = json_format.MessageToDict(message, preserving_proto_field_name=True)
    return data


def _parse(data: object, message: Message) -> Message:
    if isinstance(data, dict):
        json_format.ParseDict(data, message, ignore_unknown_fields=True)
    return message


def _store_of(op: Operation, request: Message) -> str:
    """The store a request names, where the operation table says it goes."""
    if op.store_field == "store":
        return str(request.store.name)  # type: ignore[attr-defined]
    return str(getattr(request, op.store_field)) if op.store_field else ""


def _path(op: Operation, route: HttpRoute, request: Message) -> str:
    path = route.path
    if "{store}" in path:
        store = _store_of(op, request)
        if not store:
            raise EngramError("invalid_input", "name the store", field="store", transport="rest")
        path = path.replace("{store}", quote(store, safe=""))
    for field in route.path_fields:
        value = str(getattr(request, field))
        if not value:
            raise EngramError("invalid_input", f"{field} is required", field=field)
        path = path.replace("{" + field + "}", quote(value, safe=""))
    return path


def _query(route: HttpRoute, request: Message) -> list[tuple[str, str]]:
    data = _to_json(request)
    params: list[tuple[str, str]] = []
    for dotted in route.query:
        value: Any = data
        for part in dotted.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value is None:
            continue
        name = dotted.rsplit(".", 1)[-1]
        for item in value if isinstance(value, list) else [value]:
            params.append((name, str(item).lower() if isinstance(item, bool) else str(item)))
    return params


def _body(op: Operation, route: HttpRoute, request: Message) -> dict[str, Any]:
    data = _to_json(request)
    for field in (op.store_field, *route.path_fields):
        if field:
            data.pop(field, None)
    return data


def _refusal(answer: httpx.Response) -> EngramError:
    code, message, field = "internal", answer.text[:500] or answer.reason_phrase, ""
    try:
        error = answer.json()["error"]
        code, message = str(error["code"]), str(error["message"])
        field = str((error.get("details") or {}).get("field", ""))
    except (ValueError, KeyError, TypeError):
        if answer.status_code in (502, 503, 504):
            code = UNAVAILABLE
    retry = answer.headers.get("retry-after", "")
    return EngramError(
        code,
        message,
        field=field,
        retry_after_s=float(retry) if retry.isdigit() else 0.0,
        transport="rest",
    )


class RestTransport:
    """An HTTP client on the gateway's base URL, the token as a bearer header."""

    name = "rest"

    def __init__(
        self, base_url: str, token: str, *, client: httpx.AsyncClient | None = None
    ) -> None:
        self.address = base_url.rstrip("/")
        self._owned = client is None
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._client = client or httpx.AsyncClient(base_url=self.address, headers=headers)
        self._headers = headers

    async def _send(
        self,
        method: str,
        path: str,
        deadline_s: float | None,
        *,
        content_type: str = "",
        **kwargs: Any,
    ) -> Any:
        headers = dict(self._headers)
        if content_type:
            headers["Content-Type"] = content_type
        try:
            answer = await self._client.request(
                method, path, headers=headers, timeout=deadline_s, **kwargs
            )
        except httpx.TimeoutException as error:
            raise EngramError("deadline_exceeded", f"{method} {path}: {error}") from None
        except httpx.ConnectError as error:
            raise EngramError(
                UNAVAILABLE, f"{method} {self.address}{path}: {error}", unreachable=True
            ) from None
        except httpx.HTTPError as error:
            raise EngramError(UNAVAILABLE, f"{method} {self.address}{path}: {error}") from None
        if answer.status_code >= 400:
            raise _refusal(answer)
        return answer.json() if answer.content else {}

    async def unary(self, op: Operation, request: Message, deadline_s: float | None) -> Message:
        route = op.http
        if route is None:
            raise EngramError(UNSUPPORTED, f"{op.name} has no REST route: use gRPC")
        path = "/v1" + _path(op, route, request)
        kwargs: dict[str, Any] = {}
        if route.body:
            kwargs["json"] = _body(op, route, request)
        else:
            kwargs["params"] = _query(route, request)
        data = await self._send(route.method, path, deadline_s, **kwargs)
        return _parse(data, message_class(op.response)())

    async def client_stream(
        self, op: Operation, requests: AsyncIterable[Message], deadline_s: float | None
    ) -> Message:
        stream = requests.__aiter__()
        first = await stream.__anext__()
        if op.rpc == "UploadFile":
            assert isinstance(first, corpus_pb2.UploadFileChunk)
            header = first.header
            store = quote(header.store.name, safe="")

            # httpx builds a multipart body from bytes: REST uploads are held in memory (the
            # gateway's upload limit bounds them); gRPC streams them.
            body = b"".join([chunk.data async for chunk in stream])  # type: ignore[attr-defined]
            answer = await self._send(
                "POST",
                f"/v1/stores/{store}/files",
                deadline_s,
                data={"folder": header.folder, "name": header.name},
                files={"file": (header.name, body, "application/octet-stream")},
            )
            return _parse(answer, corpus_pb2.CorpusFile())
        if op.rpc == "ImportDrawers":
            assert isinstance(first, retrieval_pb2.ImportDrawersChunk)
            store = quote(first.store.name, safe="")

            rest = b"".join([chunk.jsonl async for chunk in stream])  # type: ignore[attr-defined]
            answer = await self._send(
                "POST",
                f"/v1/stores/{store}/drawers:import",
                deadline_s,
                params={"replace_existing": str(first.replace_existing).lower()},
                content=first.jsonl + rest,
                content_type=JSONL,
            )
            return _parse(answer, retrieval_pb2.ImportDrawersResponse())
        if op.rpc == "RestoreStore":
            assert isinstance(first, common_pb2.ArchiveChunk)
            name = quote(first.store.name, safe="")

            async def archive() -> AsyncIterator[bytes]:
                yield first.data
                async for chunk in stream:
                    yield chunk.data  # type: ignore[attr-defined]

            answer = await self._send(
                "POST",
                f"/v1/stores/{name}:restore",
                deadline_s,
                content=archive(),
                content_type="application/x-tar",
            )
            return _parse(answer, gateway_pb2.StoreInfo())
        raise EngramError(UNSUPPORTED, f"{op.name} streams its request: use gRPC")

    async def server_stream(
        self, op: Operation, request: Message, deadline_s: float | None
    ) -> AsyncIterator[Message]:
        if op.rpc == "WatchJob":
            path = f"/v1/jobs/{quote(request.id, safe='')}/events"  # type: ignore[attr-defined]
            async for event in self._events(path, deadline_s):
                yield _parse(event, common_pb2.Job())
            return
        if op.rpc in ("ExportDrawers", "BackupStore"):
            store = quote(_store_of(op, request), safe="")
            backup = op.rpc == "BackupStore"
            path = f"/v1/stores/{store}:backup" if backup else f"/v1/stores/{store}/drawers:export"
            try:
                async with self._client.stream(
                    "GET", path, headers=self._headers, timeout=deadline_s
                ) as answer:
                    if answer.status_code >= 400:
                        await answer.aread()
                        raise _refusal(answer)
                    if backup:
                        async for piece in answer.aiter_bytes(STREAM_PIECE_BYTES):
                            yield common_pb2.ArchiveChunk(data=piece)
                        return
                    async for line in answer.aiter_lines():
                        if line.strip():
                            yield retrieval_pb2.ExportDrawersChunk(jsonl=(line + "\n").encode())
            except httpx.HTTPError as error:
                raise EngramError(UNAVAILABLE, f"GET {self.address}{path}: {error}") from None
            return
        raise EngramError(UNSUPPORTED, f"{op.name} streams its answer: use gRPC")

    async def _events(self, path: str, deadline_s: float | None) -> AsyncIterator[object]:
        """The `data` of each server-sent event, decoded from JSON."""
        try:
            async with self._client.stream(
                "GET", path, headers=self._headers, timeout=deadline_s
            ) as answer:
                if answer.status_code >= 400:
                    await answer.aread()
                    raise _refusal(answer)
                data: list[str] = []
                async for line in answer.aiter_lines():
                    if line.startswith("data:"):
                        data.append(line[5:].lstrip())
                    elif not line.strip() and data:
                        yield json.loads("\n".join(data))
                        data = []
        except httpx.HTTPError as error:
            raise EngramError(UNAVAILABLE, f"GET {self.address}{path}: {error}") from None

    async def aclose(self) -> None:
        if self._owned:
            await self._client.aclose()
