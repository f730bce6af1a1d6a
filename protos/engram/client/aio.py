"""`AsyncClient`: Engram's public API from asyncio code.

Every operation of `engram.v1.Engram` is one call, named as the operation table names it
(``client.search(...)``, ``client.call("add_drawer_signed", ...)``) and taking its request
message (or the request's fields as keywords); the answer is the response message. Nothing
here lists the operations: the typed methods are generated from the table with the protos
(`scripts/gen_client_methods.py`), so a new RPC is callable as soon as `make protos` ran.

Transports: gRPC to the gateway's public port first; REST (`/v1`) when no gRPC address is
given, or as the fallback when the gRPC port cannot be reached (a refusal by the stack is never
retried on the other transport: it would answer the same). One token serves both.

Retries: a call that failed without being carried out — the stack overloaded (it says when to
come back), or its port unreachable — is tried again with a doubling pause (0.25 s … 5 s),
`retries` times; a call cut off mid-way (the stack became unavailable while serving it) is
retried only when the operation is a read or declared idempotent, since trying again could
otherwise do it twice. Deadlines: `timeout_s` per unary call (30 s unless given),
`stream_timeout_s` for uploads, imports, exports and backups (10 minutes), none for
following a job.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, Final

import httpx
from google.protobuf import json_format
from google.protobuf.message import Message

from engram.client._grpc import GrpcTransport
from engram.client._methods import AsyncOperations
from engram.client._rest import RestTransport
from engram.client.errors import OVERLOADED, UNAVAILABLE, EngramError
from engram.operations import OPERATIONS, Operation, message_class
from engram.v1 import common_pb2, corpus_pb2, retrieval_pb2

PIECE_BYTES: Final = 256 * 1024  # of an upload, an import or a restore, per stream message
TERMINAL_JOB_STATES: Final = frozenset(
    {common_pb2.JOB_STATE_DONE, common_pb2.JOB_STATE_FAILED, common_pb2.JOB_STATE_CANCELLED}
)
_FIRST_PAUSE_S: Final = 0.25
_MAX_PAUSE_S: Final = 5.0
_FALLBACK_HOLD_S: Final = 30.0  # after the gRPC port was unreachable, REST for this long


def operation(name: str) -> Operation:
    """An operation by its name ("search") or its RPC's ("Search")."""
    found = OPERATIONS.get(name)
    if found is None:
        found = next((op for op in OPERATIONS.values() if op.rpc == name), None)
    if found is None:
        raise EngramError("invalid_input", f"no operation {name!r} on engram.v1.Engram")
    return found


def build_request(op: Operation, request: Message | None, fields: dict[str, Any]) -> Message:
    """The request message: the one given, or one made from keyword fields (``store="demo"``
    names the store; a nested message may be given as its JSON form, ``spec={"name": …}``)."""
    cls = message_class(op.request)
    if request is not None:
        if not isinstance(request, cls):
            raise TypeError(f"{op.name} takes a {cls.__name__}, got {type(request).__name__}")
        if not fields:
            return request
        merged = cls()
        merged.CopyFrom(request)
        request = merged
    else:
        request = cls()
    store = fields.pop("store", None)
    if store is not None:
        _set_store(op, request, store)
    for key, value in fields.items():
        if key not in request.DESCRIPTOR.fields_by_name:
            raise TypeError(f"{cls.__name__} has no field {key!r}")
        target = getattr(request, key)
        if isinstance(target, Message):
            if isinstance(value, dict):  # a nested message as its JSON form
                target.Clear()
                json_format.ParseDict(value, target)
            else:
                target.CopyFrom(value)
        elif hasattr(target, "extend") and not isinstance(target, str | bytes):
            del target[:]
            target.extend(value)
        elif hasattr(target, "update"):
            target.clear()
            target.update(value)
        else:
            setattr(request, key, value)
    return request


def _set_store(op: Operation, request: Message, store: str | common_pb2.StoreContext) -> None:
    """Put the store where the operation table says the request names it."""
    if op.store_field == "store":
        if isinstance(store, common_pb2.StoreContext):
            request.store.CopyFrom(store)  # type: ignore[attr-defined]
        else:
            request.store.name = store  # type: ignore[attr-defined]
    elif op.store_field == "name" and isinstance(store, str):
        request.name = store  # type: ignore[attr-defined]
    elif "store" in request.DESCRIPTOR.fields_by_name and isinstance(store, str):
        request.store = store  # type: ignore[attr-defined]  # a filter (ListJobsRequest)
    else:
        raise TypeError(f"{type(request).__name__} names no store")


def _pieces(source: Path | BinaryIO) -> Iterator[bytes]:
    """A file's bytes, `PIECE_BYTES` at a time (a path is opened and closed here)."""
    with contextlib.ExitStack() as stack:
        handle = stack.enter_context(source.open("rb")) if isinstance(source, Path) else source
        while piece := handle.read(PIECE_BYTES):
            yield piece


def _unreachable(error: EngramError) -> bool:
    """The port could not be reached at all (so nothing was carried out)."""
    return error.code == UNAVAILABLE and error.unreachable


def _may_retry(op: Operation, error: EngramError) -> bool:
    if error.code == OVERLOADED or _unreachable(error):
        return True
    return error.code == UNAVAILABLE and (op.effect == "reads" or op.idempotent)


class AsyncClient(AsyncOperations):
    """Engram's public API over gRPC (REST as the fallback); see the module docstring.

    ``AsyncClient(grpc="127.0.0.1:50050", rest="http://127.0.0.1:8080", token=...)``; either
    address may be left out. `from_env` reads ENGRAM_GRPC_ADDR, ENGRAM_URL and ENGRAM_TOKEN.
    `http_client` is an httpx client REST calls go through (its transport, its limits);
    `transports` replaces both transports outright (tests).
    """

    def __init__(
        self,
        *,
        grpc: str | None = None,
        rest: str | None = None,
        token: str = "",
        timeout_s: float = 30.0,
        stream_timeout_s: float = 600.0,
        retries: int = 4,
        http_client: httpx.AsyncClient | None = None,
        transports: Iterable[Any] | None = None,
    ) -> None:
        if transports is not None:
            self._transports = list(transports)
        else:
            self._transports = []
            if grpc:
                self._transports.append(GrpcTransport(grpc, token))
            if rest:
                self._transports.append(RestTransport(rest, token, client=http_client))
        if not self._transports:
            raise ValueError("give the gateway's gRPC address, its REST URL, or both")
        self.timeout_s = timeout_s
        self.stream_timeout_s = stream_timeout_s
        self.retries = retries
        self._fallback_until = 0.0

    @classmethod
    def from_env(cls, **overrides: Any) -> AsyncClient:
        """ENGRAM_GRPC_ADDR and/or ENGRAM_URL (default http://127.0.0.1:8080), ENGRAM_TOKEN."""
        grpc = overrides.pop("grpc", None) or os.environ.get("ENGRAM_GRPC_ADDR") or None
        rest = overrides.pop("rest", None) or os.environ.get("ENGRAM_URL") or None
        if not grpc and not rest:
            rest = "http://127.0.0.1:8080"
        token = overrides.pop("token", None) or os.environ.get("ENGRAM_TOKEN", "")
        return cls(grpc=grpc, rest=rest, token=token, **overrides)

    @property
    def transport(self) -> str:
        """The transport calls go to now: "grpc" or "rest"."""
        return str(self._ordered()[0].name)

    def _ordered(self) -> list[Any]:
        if len(self._transports) > 1 and time.monotonic() < self._fallback_until:
            return self._transports[1:] + self._transports[:1]
        return self._transports

    async def _attempt(self, op: Operation, send: Callable[[Any], Any]) -> Any:
        """One call through the preferred transport, the fallback when its port is down."""
        ordered = self._ordered()
        for index, transport in enumerate(ordered):
            try:
                return await send(transport)
            except EngramError as error:
                last = index == len(ordered) - 1
                if last or not _unreachable(error):
                    raise
                if transport is self._transports[0]:
                    self._fallback_until = time.monotonic() + _FALLBACK_HOLD_S
        raise AssertionError("unreachable")

    async def _with_retries(self, op: Operation, send: Callable[[Any], Any]) -> Any:
        pause = _FIRST_PAUSE_S
        for attempt in range(self.retries + 1):
            try:
                return await self._attempt(op, send)
            except EngramError as error:
                if attempt == self.retries or not _may_retry(op, error):
                    raise
                await asyncio.sleep(error.retry_after_s or pause)
                pause = min(pause * 2, _MAX_PAUSE_S)
        raise AssertionError("unreachable")

    # ------------------------------------------------------------ every operation

    async def call(
        self,
        name: str,
        request: Message | None = None,
        /,
        *,
        deadline_s: float | None = None,
        **fields: Any,
    ) -> Any:
        """One unary operation: its request (or fields) in, its response message out."""
        op = operation(name)
        if op.client_streaming or op.server_streaming:
            raise TypeError(f"{op.name} streams: use stream(), upload_file(), import_drawers()")
        message = build_request(op, request, dict(fields))
        deadline = deadline_s if deadline_s is not None else self.timeout_s
        return await self._with_retries(op, lambda t: t.unary(op, message, deadline))

    async def stream(
        self,
        name: str,
        request: Message | None = None,
        /,
        *,
        deadline_s: float | None = None,
        **fields: Any,
    ) -> AsyncIterator[Any]:
        """A server-streaming operation's messages (ExportDrawers, BackupStore, WatchJob),
        within `stream_timeout_s` unless `deadline_s` says otherwise."""
        deadline = deadline_s if deadline_s is not None else self.stream_timeout_s
        async for item in self._stream(name, request, fields, deadline):
            yield item

    async def _stream(
        self, name: str, request: Message | None, fields: dict[str, Any], deadline: float | None
    ) -> AsyncIterator[Any]:
        op = operation(name)
        if not op.server_streaming or op.client_streaming:
            raise TypeError(f"{op.name} does not stream its answer: use call()")
        message = build_request(op, request, dict(fields))
        async for item in self._ordered()[0].server_stream(op, message, deadline):
            yield item

    async def send_stream(
        self, name: str, requests: AsyncIterable[Message], *, deadline_s: float | None = None
    ) -> Any:
        """A client-streaming operation (UploadFile, ImportDrawers, RestoreStore), sent once:
        a stream cannot be replayed, so it is never retried."""
        op = operation(name)
        if not op.client_streaming:
            raise TypeError(f"{op.name} does not stream its request: use call()")
        deadline = deadline_s if deadline_s is not None else self.stream_timeout_s
        return await self._attempt(op, lambda t: t.client_stream(op, requests, deadline))

    # ------------------------------------------------------------ conveniences

    async def pages(
        self, name: str, request: Message | None = None, /, *, page_size: int = 0, **fields: Any
    ) -> AsyncIterator[Any]:
        """Every item of a paged list (ListDrawers, ListFiles, ListJobs, …), page after page."""
        op = operation(name)
        message = build_request(op, request, dict(fields))
        response_fields = message_class(op.response).DESCRIPTOR.fields
        listed = [f.name for f in response_fields if f.is_repeated]
        if "page" not in message.DESCRIPTOR.fields_by_name or not listed:
            raise TypeError(f"{op.name} is not a paged list")
        if page_size:
            message.page.page_size = page_size  # type: ignore[attr-defined]
        while True:
            answer = await self.call(name, message)
            for item in getattr(answer, listed[0]):
                yield item
            token = answer.page.next_page_token
            if not token:
                return
            message.page.page_token = token  # type: ignore[attr-defined]

    async def watch_job(self, job_id: str, *, poll_s: float = 1.0) -> AsyncIterator[Any]:
        """A job's states as it runs, until it is done, failed or cancelled. Follows the
        stream (gRPC WatchJob, REST server-sent events); polls when a stream breaks off."""
        last: Any = None
        try:
            async for job in self._stream("watch_job", None, {"id": job_id}, None):  # no end
                last = job
                yield job
        except EngramError as error:
            if error.code in ("not_found", "permission_denied", "unauthenticated"):
                raise
        while last is None or last.state not in TERMINAL_JOB_STATES:
            job = await self.call("get_job", id=job_id)
            if last is None or job != last:
                yield job
            last = job
            if job.state not in TERMINAL_JOB_STATES:
                await asyncio.sleep(poll_s)

    async def wait_job(
        self, job_id: str, *, on_progress: Callable[[Any], None] | None = None
    ) -> Any:
        """The job once it ended; `on_progress` sees each state on the way."""
        last: Any = None
        async for job in self.watch_job(job_id):
            last = job
            if on_progress is not None:
                on_progress(job)
        return last

    async def upload_file(
        self,
        store: str,
        name: str,
        body: bytes | Path | BinaryIO,
        *,
        folder: str = "",
        deadline_s: float | None = None,
    ) -> corpus_pb2.CorpusFile:
        """Upload one file into the store's corpus (streamed over gRPC)."""
        header = corpus_pb2.UploadFileHeader(name=name, folder=folder)
        header.store.name = store
        if isinstance(body, bytes):
            header.declared_size = len(body)

        async def pieces() -> AsyncIterator[corpus_pb2.UploadFileChunk]:
            yield corpus_pb2.UploadFileChunk(header=header)
            if isinstance(body, bytes):
                for start in range(0, len(body), PIECE_BYTES):
                    yield corpus_pb2.UploadFileChunk(data=body[start : start + PIECE_BYTES])
                return
            for piece in _pieces(body):
                yield corpus_pb2.UploadFileChunk(data=piece)

        answer: corpus_pb2.CorpusFile = await self.send_stream(
            "upload_file", pieces(), deadline_s=deadline_s
        )
        return answer

    async def import_drawers(
        self, store: str, jsonl: bytes, *, replace_existing: bool = False
    ) -> retrieval_pb2.ImportDrawersResponse:
        """Import drawers from JSONL (one drawer a line, as export_drawers writes them)."""

        async def pieces() -> AsyncIterator[retrieval_pb2.ImportDrawersChunk]:
            first = retrieval_pb2.ImportDrawersChunk(replace_existing=replace_existing)
            first.store.name = store
            for start in range(0, max(len(jsonl), 1), PIECE_BYTES):
                chunk = retrieval_pb2.ImportDrawersChunk(jsonl=jsonl[start : start + PIECE_BYTES])
                if start == 0:
                    chunk.MergeFrom(first)
                yield chunk

        answer: retrieval_pb2.ImportDrawersResponse = await self.send_stream(
            "import_drawers", pieces()
        )
        return answer

    async def export_drawers(self, store: str) -> AsyncIterator[bytes]:
        """The store's drawers as JSONL, a piece of whole lines at a time."""
        async for chunk in self.stream("export_drawers", store=store):
            yield chunk.jsonl

    async def backup_store(self, store: str) -> AsyncIterator[bytes]:
        """One archive of the store (every tier's snapshot), a piece at a time (admin)."""
        async for chunk in self.stream("backup_store", store=store):
            yield chunk.data

    async def restore_store(
        self, name: str, archive: Path | AsyncIterable[bytes], *, deadline_s: float | None = None
    ) -> Any:
        """A new store `name` from an archive `backup_store` wrote (admin); its StoreInfo."""

        async def pieces() -> AsyncIterator[common_pb2.ArchiveChunk]:
            first = common_pb2.ArchiveChunk()
            first.store.name = name
            yield first
            if isinstance(archive, Path):
                for piece in _pieces(archive):
                    yield common_pb2.ArchiveChunk(data=piece)
            else:
                async for piece in archive:
                    yield common_pb2.ArchiveChunk(data=piece)

        return await self.send_stream("restore_store", pieces(), deadline_s=deadline_s)

    async def aclose(self) -> None:
        for transport in self._transports:
            await transport.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
