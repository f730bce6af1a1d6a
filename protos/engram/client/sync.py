"""`Client`: the same API as `AsyncClient` for code that does not run an event loop.

It owns one background thread running an event loop with an `AsyncClient` on it; each call is
handed to that loop and waited for, and iterators are stepped the same way. The gRPC channel
and the HTTP client live on that loop only, so a `Client` may be used from any thread (calls
from several threads are served one loop turn at a time) and even from inside another event
loop (the call then blocks that loop, as any synchronous I/O does).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from google.protobuf.message import Message

from engram.client._methods import Operations
from engram.client.aio import AsyncClient
from engram.v1 import corpus_pb2, retrieval_pb2

T = TypeVar("T")


class Client(Operations):
    """Engram's public API, blocking; see `AsyncClient` for the arguments."""

    def __init__(self, **options: Any) -> None:
        self._start(lambda: AsyncClient(**options))

    @classmethod
    def from_env(cls, **overrides: Any) -> Client:
        """ENGRAM_GRPC_ADDR and/or ENGRAM_URL (default http://127.0.0.1:8080), ENGRAM_TOKEN."""
        client = cls.__new__(cls)
        client._start(lambda: AsyncClient.from_env(**overrides))
        return client

    def _start(self, make: Callable[[], AsyncClient]) -> None:
        self._closed = False
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="engram-client", daemon=True
        )
        self._thread.start()

        async def build() -> AsyncClient:  # on the loop: channels bind to the loop they start on
            return make()

        self._async = self._run(build())

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        if self._closed:
            coroutine.close()
            raise RuntimeError("this engram Client is closed")
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    def _iterate(self, items: AsyncIterator[T]) -> Iterator[T]:
        async def step() -> tuple[bool, T | None]:
            try:
                return True, await items.__anext__()
            except StopAsyncIteration:
                return False, None

        try:
            while True:
                more, item = self._run(step())
                if not more:
                    return
                yield item  # type: ignore[misc]
        finally:
            if not self._closed:
                self._run(_close(items))

    @property
    def transport(self) -> str:
        return self._async.transport

    def call(
        self,
        name: str,
        request: Message | None = None,
        /,
        *,
        deadline_s: float | None = None,
        **fields: Any,
    ) -> Any:
        """One unary operation (see `AsyncClient.call`)."""
        return self._run(self._async.call(name, request, deadline_s=deadline_s, **fields))

    def stream(self, name: str, request: Message | None = None, /, **fields: Any) -> Iterator[Any]:
        return self._iterate(self._async.stream(name, request, **fields))

    def pages(self, name: str, request: Message | None = None, /, **fields: Any) -> Iterator[Any]:
        return self._iterate(self._async.pages(name, request, **fields))

    def watch_job(self, job_id: str, *, poll_s: float = 1.0) -> Iterator[Any]:
        return self._iterate(self._async.watch_job(job_id, poll_s=poll_s))

    def wait_job(self, job_id: str, *, on_progress: Callable[[Any], None] | None = None) -> Any:
        last = None
        for job in self.watch_job(job_id):
            last = job
            if on_progress is not None:
                on_progress(job)
        return last

    def upload_file(
        self, store: str, name: str, body: bytes | Path | BinaryIO, *, folder: str = ""
    ) -> corpus_pb2.CorpusFile:
        return self._run(self._async.upload_file(store, name, body, folder=folder))

    def import_drawers(
        self, store: str, jsonl: bytes, *, replace_existing: bool = False
    ) -> retrieval_pb2.ImportDrawersResponse:
        return self._run(
            self._async.import_drawers(store, jsonl, replace_existing=replace_existing)
        )

    def export_drawers(self, store: str) -> Iterator[bytes]:
        return self._iterate(self._async.export_drawers(store))

    def backup_store(self, store: str) -> Iterator[bytes]:
        return self._iterate(self._async.backup_store(store))

    def restore_store(self, name: str, archive: Path) -> Any:
        return self._run(self._async.restore_store(name, archive))

    def close(self) -> None:
        if self._closed:
            return
        self._run(self._async.aclose())
        self._closed = True
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        self._loop.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def _close(items: AsyncIterator[Any]) -> None:
    aclose = getattr(items, "aclose", None)
    if aclose is not None:
        await aclose()
