"""An evaluation target without a running stack: the embedder, retrieval and corpus tiers
started in this process (real gRPC on 127.0.0.1, the real model, embedded Qdrant Edge and FTS5
in a temporary directory), addressed through their own tier APIs.

It is the developer's loop for retrieval quality (`engram eval --in-process`): the same
runners, requests and scoring code as a run through the gateway, minus the gateway's
translation and Redis, so a scoring change is measured in minutes on a laptop. What needs
the authoring tier and its job queue (LoCoMo through composed drawers) is not offered here;
the runner is told so and skips that mode.

Decisions:

- Stores exist only as the `StoreContext` this target sends (the gateway's registry does that
  job in a real stack): `create_store` remembers the deployment mode, every call carries it.
- The tiers' data lives in a temporary directory removed on `aclose`, so nothing a user keeps
  is touched.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

import grpc
from engram.v1 import (
    authoring_pb2,
    common_pb2,
    corpus_pb2,
    corpus_pb2_grpc,
    gateway_pb2,
    retrieval_pb2,
    retrieval_pb2_grpc,
)
from google.protobuf.message import Message

from services.embedder.client import EmbedderClient
from services.evaluation.target import EvalTargetError

# Drawers per IndexDrawers call (the tier embeds each batch in one request).
INDEX_BATCH = 256


class InProcessTarget:
    """Embedder + retrieval + corpus tiers in this process, spoken to over their gRPC APIs."""

    def __init__(self) -> None:
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self._stores: dict[str, common_pb2.StoreContext] = {}
        self._tiers: list[Any] = []  # TierServer, stopped in reverse start order
        self._async_closers: list[Any] = []  # channels and embedder clients
        self._sync_closers: list[Any] = []  # pool and corpus registries
        self._batcher: Any = None
        self._retrieval: retrieval_pb2_grpc.RetrievalServiceStub | None = None
        self._corpus: corpus_pb2_grpc.CorpusServiceStub | None = None

    @property
    def description(self) -> str:
        return "in-process tiers (embedder, retrieval, corpus; no gateway)"

    async def start(self, *, torch_threads: int = 2) -> InProcessTarget:
        """Load the model and start the three tiers on 127.0.0.1:0."""
        from services.runtime.lifecycle import single_threaded_blas

        single_threaded_blas()  # as each tier process does (serve_until_signalled)
        from services.corpus.__main__ import build_deps as corpus_deps
        from services.corpus.server import create_server as corpus_server
        from services.corpus.settings import CorpusSettings
        from services.embedder.core import load_model, resolve_model_path
        from services.embedder.server import serve_loaded_model
        from services.embedder.settings import EmbedderSettings
        from services.retrieval.__main__ import build_deps as retrieval_deps
        from services.retrieval.server import create_server as retrieval_server
        from services.retrieval.settings import RetrievalSettings
        from services.runtime.settings import StorageSettings

        self._tmp = tempfile.TemporaryDirectory(prefix="engram-eval-")
        root = Path(self._tmp.name)
        model = load_model(
            resolve_model_path(""), device="cpu", fp16=False, torch_threads=torch_threads
        )
        embedder_settings = EmbedderSettings(host="127.0.0.1", port=0, allow_cpu=True)
        embedder_tier, embedder_deps = await serve_loaded_model(model, embedder_settings)
        self._tiers.append(embedder_tier)
        self._batcher = embedder_deps.batcher
        address = f"127.0.0.1:{embedder_tier.port}"
        storage = StorageSettings(vector_backend="edge")

        r_tier = await self._start_tier(
            RetrievalSettings(host="127.0.0.1", port=0, data_dir=root / "retrieval"),
            lambda settings, embedder: retrieval_deps(settings, storage, embedder),
            retrieval_server,
            lambda deps: deps.pools,
            address,
        )
        c_tier = await self._start_tier(
            CorpusSettings(host="127.0.0.1", port=0, data_dir=root / "corpus"),
            lambda settings, embedder: corpus_deps(settings, storage, embedder),
            corpus_server,
            lambda deps: deps.stores,
            address,
        )

        options = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]
        r_channel = grpc.aio.insecure_channel(f"127.0.0.1:{r_tier.port}", options=options)
        c_channel = grpc.aio.insecure_channel(f"127.0.0.1:{c_tier.port}", options=options)
        self._async_closers[:0] = [r_channel, c_channel]
        self._retrieval = retrieval_pb2_grpc.RetrievalServiceStub(r_channel)
        self._corpus = corpus_pb2_grpc.CorpusServiceStub(c_channel)
        return self

    async def _start_tier(
        self,
        settings: Any,
        build_deps: Callable[[Any, EmbedderClient], Any],
        create_server: Callable[[Any, Any], Any],
        registry_of: Callable[[Any], Any],
        embedder_address: str,
    ) -> Any:
        """Wire, start and register for shutdown one store-owning tier (retrieval, corpus)."""
        embedder = EmbedderClient(embedder_address)
        deps = build_deps(settings, embedder)
        registry = registry_of(deps)
        registry.set_dimension((await embedder.info()).dimension)
        tier = create_server(settings, deps)
        await tier.start()
        await tier.set_serving(True)
        self._tiers.append(tier)
        self._sync_closers.append(registry)
        self._async_closers.append(embedder)
        return tier

    def _context(self, store: str) -> common_pb2.StoreContext:
        context = self._stores.get(store)
        if context is None:
            raise EvalTargetError(f"store {store!r} was not created by this target")
        return context

    def _stub(self) -> retrieval_pb2_grpc.RetrievalServiceStub:
        if self._retrieval is None:
            raise EvalTargetError("the in-process target was not started")
        return self._retrieval

    def _corpus_stub(self) -> corpus_pb2_grpc.CorpusServiceStub:
        if self._corpus is None:
            raise EvalTargetError("the in-process target was not started")
        return self._corpus

    async def _call(self, rpc: Any, request: Any) -> Any:
        try:
            return await rpc(request, timeout=600.0)
        except grpc.aio.AioRpcError as error:
            raise EvalTargetError(f"{error.code().name}: {error.details()}") from error

    async def create_store(self, spec: gateway_pb2.StoreSpec) -> None:
        self._stores[spec.name] = common_pb2.StoreContext(
            name=spec.name,
            deployment_mode=spec.deployment_mode,
            legacy_authority=spec.legacy_authority,
        )

    async def import_drawers(self, store: str, drawers: Sequence[common_pb2.Drawer]) -> int:
        context = self._context(store)
        for start in range(0, len(drawers), INDEX_BATCH):
            batch = list(drawers[start : start + INDEX_BATCH])
            await self._call(
                self._stub().IndexDrawers,
                retrieval_pb2.IndexDrawersRequest(store=context, drawers=batch),
            )
        return len(drawers)

    async def _store_call(self, rpc: Any, store: str, request: Message) -> Any:
        """`request` sent to `rpc` with the store's context filled in (the gateway's job)."""
        sent = type(request)()
        sent.CopyFrom(request)
        sent.store.CopyFrom(self._context(store))  # type: ignore[attr-defined]
        return await self._call(rpc, sent)

    async def search(
        self, store: str, request: retrieval_pb2.SearchRequest
    ) -> retrieval_pb2.SearchResponse:
        return cast(
            retrieval_pb2.SearchResponse,
            await self._store_call(self._stub().Search, store, request),
        )

    async def create_link(
        self, store: str, request: retrieval_pb2.CreateLinkRequest
    ) -> retrieval_pb2.DrawerLink:
        rpc = self._stub().CreateLink
        return cast(retrieval_pb2.DrawerLink, await self._store_call(rpc, store, request))

    async def add_raw_session(
        self, store: str, request: corpus_pb2.AddRawSessionRequest
    ) -> corpus_pb2.AddRawSessionResponse:
        rpc = self._corpus_stub().AddRawSession
        return cast(corpus_pb2.AddRawSessionResponse, await self._store_call(rpc, store, request))

    async def search_raw(
        self, store: str, request: corpus_pb2.SearchRawRequest
    ) -> corpus_pb2.SearchRawResponse:
        rpc = self._corpus_stub().SearchRaw
        return cast(corpus_pb2.SearchRawResponse, await self._store_call(rpc, store, request))

    async def list_drawers(
        self, store: str, request: retrieval_pb2.ListDrawersRequest
    ) -> retrieval_pb2.ListDrawersResponse:
        rpc = self._stub().ListDrawers
        return cast(retrieval_pb2.ListDrawersResponse, await self._store_call(rpc, store, request))

    async def compose(self, store: str, request: authoring_pb2.ComposeRequest) -> common_pb2.Job:
        raise EvalTargetError(
            "composing drawers needs the authoring tier and its job queue: "
            "run the evaluation against `make run` for LoCoMo's authored mode"
        )

    async def get_job(self, job_id: str) -> common_pb2.Job:
        raise EvalTargetError("the in-process target runs no jobs")

    async def drop_store(self, store: str) -> None:
        context = self._stores.pop(store, None)
        if context is None:
            return
        request = common_pb2.DropStoreRequest(store=context)
        await self._call(self._stub().DropStore, request)
        await self._call(self._corpus_stub().DropStore, request)

    async def aclose(self) -> None:
        for closer in self._async_closers:
            await closer.close()
        for tier in reversed(self._tiers):
            await tier.stop(0.5)
        for registry in self._sync_closers:
            registry.close()
        if self._batcher is not None:
            await self._batcher.close()
        self._tiers, self._async_closers, self._sync_closers, self._batcher = [], [], [], None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
