"""`engram.v1.Engram` over `Gateway`: protobuf in, the core's operation, protobuf out.

Generic over the service descriptor: a unary RPC is the `Gateway` method whose name is the
RPC's in snake_case (`BuildContextPack` → `build_context_pack`, also its `REQUIRED_TIER`
key), called with the caller's principal and the request as it came. The four streaming RPCs
have small handlers that hand the core what the REST routes hand it (a header and an iterator
of bytes; an iterator of answers). Errors are the core's `EngramError`s, mapped to statuses
once, by the shared server interceptor (`services.runtime.grpc_server`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Final, TypeAlias

import grpc
from engram.v1 import common_pb2, corpus_pb2, gateway_pb2, retrieval_pb2
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.protobuf.message import Message

from gateway.core.operations import operation_name
from gateway.core.principal import Principal
from gateway.core.service import Gateway
from gateway.core.tokens import bearer_credentials
from services.runtime.errors import InvalidInput, Unauthenticated

Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]
Metadata: TypeAlias = Sequence[tuple[str, str | bytes]]

SERVICE: Final[ServiceDescriptor] = gateway_pb2.DESCRIPTOR.services_by_name["Engram"]

# grpc's handler factory for each (client streams, server streams) shape.
_HANDLER_OF: Final[dict[tuple[bool, bool], Callable[..., grpc.RpcMethodHandler]]] = {
    (False, False): grpc.unary_unary_rpc_method_handler,
    (True, False): grpc.stream_unary_rpc_method_handler,
    (False, True): grpc.unary_stream_rpc_method_handler,
    (True, True): grpc.stream_stream_rpc_method_handler,
}


def bearer_token(metadata: Metadata) -> str:
    """The token of the `authorization: Bearer <token>` metadata (Unauthenticated without)."""
    for key, value in metadata:
        if key.lower() != "authorization":
            continue
        token = bearer_credentials(value.decode() if isinstance(value, bytes) else value)
        if token is None:
            raise Unauthenticated(
                "the authorization metadata must be 'Bearer <token>' "
                "(create a token with engram token create)"
            )
        return token
    raise Unauthenticated(
        "this RPC needs the metadata authorization: Bearer <token> "
        "(create a token with engram token create)"
    )


class EngramServicer:
    """The handlers of `engram.v1.Engram`; `handler()` registers them with a server."""

    def __init__(self, gateway: Gateway) -> None:
        self._gateway = gateway

    def handler(self) -> grpc.GenericRpcHandler:
        """Every RPC of the descriptor. A unary RPC without a Gateway operation of its name,
        or a streaming RPC without a handler here, is refused now, not at the first call."""
        handlers = {method.name: self._method_handler(method) for method in SERVICE.methods}
        return grpc.method_handlers_generic_handler(SERVICE.full_name, handlers)

    def _method_handler(self, method: MethodDescriptor) -> grpc.RpcMethodHandler:
        shape = (method.client_streaming, method.server_streaming)
        behaviour = self._unary(method.name) if shape == (False, False) else self._streamed(method)
        request = message_factory.GetMessageClass(method.input_type)
        answer = message_factory.GetMessageClass(method.output_type)
        return _HANDLER_OF[shape](
            behaviour,
            request_deserializer=request.FromString,
            response_serializer=answer.SerializeToString,
        )

    def _unary(self, rpc: str) -> Callable[[Message, Context], Awaitable[Message]]:
        name = operation_name(rpc)
        operation = self._gateway.operation(name)

        async def unary(request: Message, context: Context) -> Message:
            answer: Message = await operation(self._principal(context), request)
            return answer

        return unary

    def _streamed(self, method: MethodDescriptor) -> Callable[..., Any]:
        handler: Callable[..., Any] | None = getattr(self, method.name, None)
        if handler is None:
            raise LookupError(
                f"engram.v1.Engram/{method.name} streams and has no handler in "
                "gateway/rpc/servicer.py: add one that calls the Gateway operation"
            )
        return handler

    def _principal(self, context: Context) -> Principal:
        return self._gateway.authenticate(bearer_token(context.invocation_metadata() or ()))

    # ------------------------------------------------------------------ streams

    async def UploadFile(
        self, chunks: AsyncIterator[corpus_pb2.UploadFileChunk], context: Context
    ) -> corpus_pb2.CorpusFile:
        """The first chunk carries the header; the rest are the file's bytes, passed on as
        they arrive (the core enforces the size limit and cancels the tier's call)."""
        principal = self._principal(context)
        first = await anext(chunks, None)
        if first is None or first.WhichOneof("part") != "header":
            raise InvalidInput(
                "the first UploadFileChunk must carry the header (store, name, folder)",
                field="header",
            )

        async def data() -> AsyncIterator[bytes]:
            async for chunk in chunks:
                if chunk.WhichOneof("part") == "header":
                    raise InvalidInput(
                        "only the first UploadFileChunk may carry a header", field="header"
                    )
                yield chunk.data

        return await self._gateway.upload_file(principal, first.header, data())

    async def ImportDrawers(
        self, chunks: AsyncIterator[retrieval_pb2.ImportDrawersChunk], context: Context
    ) -> retrieval_pb2.ImportDrawersResponse:
        """The first chunk names the store and `replace_existing`; every chunk's `jsonl` is
        imported."""
        principal = self._principal(context)
        first = await anext(chunks, retrieval_pb2.ImportDrawersChunk())

        async def jsonl() -> AsyncIterator[bytes]:
            async for chunk in chunks:
                yield chunk.jsonl

        return await self._gateway.import_drawers(principal, first, jsonl())

    async def ExportDrawers(
        self, request: retrieval_pb2.ExportDrawersRequest, context: Context
    ) -> AsyncIterator[retrieval_pb2.ExportDrawersChunk]:
        pieces = await self._gateway.export_drawers(self._principal(context), request)
        async for piece in pieces:
            yield retrieval_pb2.ExportDrawersChunk(jsonl=piece)

    async def BackupStore(
        self, request: common_pb2.BackupStoreRequest, context: Context
    ) -> AsyncIterator[common_pb2.ArchiveChunk]:
        backup = self._gateway.operation("backup_store")
        async for piece in await backup(self._principal(context), request):
            yield common_pb2.ArchiveChunk(data=piece)

    async def RestoreStore(
        self, chunks: AsyncIterator[common_pb2.ArchiveChunk], context: Context
    ) -> gateway_pb2.StoreInfo:
        """The first chunk names the new store (`store.name`); every chunk's `data` is the
        archive."""
        principal = self._principal(context)
        first = await anext(chunks, common_pb2.ArchiveChunk())

        async def rest() -> AsyncIterator[bytes]:
            async for chunk in chunks:
                yield chunk.data

        restore = self._gateway.operation("restore_store")
        info: gateway_pb2.StoreInfo = await restore(principal, first, rest())
        return info

    async def WatchJob(
        self, request: gateway_pb2.GetJobRequest, context: Context
    ) -> AsyncIterator[common_pb2.Job]:
        """The job now and after every change; the stream ends with its terminal state."""
        jobs = await self._gateway.watch_job(self._principal(context), request)
        async for job in jobs:
            yield job
