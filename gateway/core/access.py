"""What every gateway operation does before it calls a tier: the tier each operation needs
(`REQUIRED_TIER`), the token's store scope, and the StoreContext filled in from the registry.

Order of refusals: the tier, then the store scope, then whether the store exists and is
open — so a token learns nothing about stores outside its scope.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final, TypeVar

import grpc
from engram.v1 import authoring_pb2_grpc, common_pb2, corpus_pb2_grpc, retrieval_pb2_grpc
from google.protobuf.message import Message

from gateway.core.principal import Principal, Tier
from gateway.core.registry import StoreRegistry
from services.runtime.errors import InvalidInput, TooLarge
from services.runtime.grpc_client import call, domain_error

R = TypeVar("R", bound=Message)

_READ, _WRITE, _ADMIN = Tier.READ, Tier.WRITE, Tier.ADMIN

# The tier each operation needs. Reads: gets, lists, searches, context packs, recording a
# retrieval, job status. Writes: drawer and raw writes, files, ingest, compose, dry runs.
# Admin: the store registry, tokens, import/export, prompt promotion, provider and policy.
REQUIRED_TIER: Final[dict[str, Tier]] = {
    "create_store": _ADMIN,
    "list_stores": _READ,
    "get_store": _READ,
    "update_store": _ADMIN,
    "delete_store": _ADMIN,
    "create_token": _ADMIN,
    "list_tokens": _ADMIN,
    "revoke_token": _ADMIN,
    "add_drawer": _WRITE,
    "add_drawer_signed": _WRITE,
    "update_drawer": _WRITE,
    "delete_drawer": _WRITE,
    "get_drawer": _READ,
    "list_drawers": _READ,
    "get_provenance": _READ,
    "stats": _READ,
    "export_drawers": _ADMIN,
    "import_drawers": _ADMIN,
    "search": _READ,
    "search_batch": _READ,
    "build_context_pack": _READ,
    "record_retrieval": _READ,
    "retrieval_usage": _READ,
    "add_raw_memory": _WRITE,
    "add_raw_session": _WRITE,
    "search_raw": _READ,
    "expand_raw": _READ,
    "list_sessions": _READ,
    "get_session_chunks": _READ,
    "upload_file": _WRITE,
    "get_file": _READ,
    "list_files": _READ,
    "get_tree": _READ,
    "create_folder": _WRITE,
    "rename_folder": _WRITE,
    "delete_folder": _WRITE,
    "move_file": _WRITE,
    "delete_file": _WRITE,
    "ingest_files": _WRITE,
    "sync_source": _WRITE,
    "search_source": _READ,
    "query_document": _READ,
    "compose": _WRITE,
    "dry_run": _WRITE,
    "walkback": _WRITE,
    "create_prompt_version": _WRITE,
    "list_prompt_versions": _READ,
    "get_prompt_version": _READ,
    "diff_prompt_versions": _READ,
    "promote_prompt_version": _ADMIN,
    "get_provider_config": _READ,
    "set_provider_config": _ADMIN,
    "smoke_test": _WRITE,
    "get_write_policy": _READ,
    "set_write_policy": _ADMIN,
    "get_job": _READ,
    "list_jobs": _READ,
    "cancel_job": _WRITE,
    "watch_job": _READ,
}


class Tiers:
    """Stubs of the tiers the gateway calls."""

    def __init__(
        self, retrieval: grpc.aio.Channel, corpus: grpc.aio.Channel, authoring: grpc.aio.Channel
    ) -> None:
        self.retrieval = retrieval_pb2_grpc.RetrievalServiceStub(retrieval)
        self.corpus = corpus_pb2_grpc.CorpusServiceStub(corpus)
        self.authoring = authoring_pb2_grpc.AuthoringServiceStub(authoring)


class TierCalls:
    """The checks and call helpers the operation groups share."""

    def __init__(
        self,
        *,
        registry: StoreRegistry,
        tiers: Tiers,
        max_upload_bytes: int,
        stream_deadline_s: float,
    ) -> None:
        self.registry = registry
        self._tiers = tiers
        self._max_upload = max_upload_bytes
        self._stream_deadline = stream_deadline_s

    def authorize(self, principal: Principal, operation: str, store: str) -> None:
        """Check tier, scope and that the store is open, without a request. Faces call this
        before reading a streamed body, so a refused caller is not read 50 MB first."""
        self._enter(principal, operation, common_pb2.StoreContext(name=store))

    def _enter(self, principal: Principal, operation: str, store: common_pb2.StoreContext) -> None:
        """Check tier and scope, then replace `store` with the registry's context."""
        principal.require(REQUIRED_TIER[operation], operation.replace("_", " "))
        name = store.name
        if not name:
            raise InvalidInput("the request names no store", field="store.name")
        principal.require_store(name)
        context = self.registry.context(name)
        context.caller_tier = int(principal.tier)  # type: ignore[assignment]
        context.caller_id = principal.token_id
        store.CopyFrom(context)

    async def _store_call(
        self,
        principal: Principal,
        operation: str,
        request: Any,
        rpc: Callable[..., Awaitable[R]],
    ) -> R:
        self._enter(principal, operation, request.store)
        return await call(rpc, request)

    async def _client_stream(self, rpc: Callable[..., Any], messages: AsyncIterator[Any]) -> Any:
        """A client-streaming call written message by message, so that a refusal from our
        side (too large, a malformed body) cancels the call instead of ending it early —
        an early end would look like a complete, shorter upload."""
        stream = rpc(timeout=self._stream_deadline)
        try:
            async for message in messages:
                await stream.write(message)
            await stream.done_writing()
            return await stream
        except grpc.aio.AioRpcError as error:
            raise domain_error(error) from error
        except BaseException:
            stream.cancel()
            raise


def too_large(size: int, limit: int, name: str) -> TooLarge:
    shown = f"{size / 1e6:.1f} MB" if size > limit * 1.05 else f"over {limit / 1e6:g} MB"
    return TooLarge(
        f"{name or 'the upload'} is {shown}; the limit is {limit / 1e6:g} MB: "
        "split it or upload a summary",
        field="file",
    )
