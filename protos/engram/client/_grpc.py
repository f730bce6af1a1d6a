"""gRPC transport: the gateway's public `engram.v1.Engram` service, every method called by its
name from the operation table (no hand-written stub)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, Final

import grpc
from google.protobuf.message import Message

from engram.client.errors import EngramError, code_for_grpc
from engram.operations import Operation, message_class

SERVICE: Final = "/engram.v1.Engram/"
STATUS_DETAILS_KEY: Final = "grpc-status-details-bin"
ERROR_DOMAIN: Final = "engram"
MAX_MESSAGE_BYTES: Final = 64 * 1024 * 1024
# How gRPC says a call never reached the server (as against a connection lost mid-call).
_NOT_CONNECTED: Final = re.compile(
    r"failed to connect|connection refused|dns resolution failed|no address", re.IGNORECASE
)


def _error(error: grpc.aio.AioRpcError) -> EngramError:
    """The stack's refusal: its ErrorInfo (code, field) and RetryInfo when it sent them."""
    code = code_for_grpc(error.code().name)
    message = error.details() or error.code().name
    field = ""
    retry_after_s = 0.0
    ours = False  # the stack's own refusal (ErrorInfo in its domain), not the channel's
    for key, value in error.trailing_metadata() or ():
        if key != STATUS_DETAILS_KEY or not isinstance(value, bytes):
            continue
        try:
            from google.rpc import error_details_pb2, status_pb2
        except ImportError:  # googleapis-common-protos absent: the status code is enough
            break
        status = status_pb2.Status.FromString(value)
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            retry = error_details_pb2.RetryInfo()
            if detail.Unpack(info) and info.domain == ERROR_DOMAIN:
                code = info.reason or code
                ours = True
                field = info.metadata.get("field", "")
                message = status.message or message
            elif detail.Unpack(retry):
                retry_after_s = retry.retry_delay.ToNanoseconds() / 1e9
    return EngramError(
        code,
        message,
        field=field,
        retry_after_s=retry_after_s,
        transport="grpc",
        unreachable=(
            error.code() is grpc.StatusCode.UNAVAILABLE
            and not ours
            and _NOT_CONNECTED.search(message) is not None
        ),
    )


class GrpcTransport:
    """One channel to the gateway's public gRPC port, the token in every call's metadata."""

    name = "grpc"

    def __init__(
        self,
        address: str,
        token: str,
        *,
        credentials: grpc.ChannelCredentials | None = None,
    ) -> None:
        self.address = address
        options = [
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ]
        if credentials is not None:
            self._channel = grpc.aio.secure_channel(address, credentials, options=options)
        else:
            self._channel = grpc.aio.insecure_channel(address, options=options)
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()

    def _method(self, op: Operation) -> Any:
        path = SERVICE + op.rpc
        serialize = message_class(op.request).SerializeToString
        parse = message_class(op.response).FromString
        if op.client_streaming:
            return self._channel.stream_unary(path, serialize, parse)
        if op.server_streaming:
            return self._channel.unary_stream(path, serialize, parse)
        return self._channel.unary_unary(path, serialize, parse)

    async def unary(self, op: Operation, request: Message, deadline_s: float | None) -> Message:
        try:
            answer: Message = await self._method(op)(
                request, metadata=self._metadata, timeout=deadline_s
            )
        except grpc.aio.AioRpcError as error:
            raise _error(error) from None
        return answer

    async def client_stream(
        self, op: Operation, requests: AsyncIterable[Message], deadline_s: float | None
    ) -> Message:
        try:
            answer: Message = await self._method(op)(
                requests.__aiter__(), metadata=self._metadata, timeout=deadline_s
            )
        except grpc.aio.AioRpcError as error:
            raise _error(error) from None
        return answer

    async def server_stream(
        self, op: Operation, request: Message, deadline_s: float | None
    ) -> AsyncIterator[Message]:
        call = self._method(op)(request, metadata=self._metadata, timeout=deadline_s)
        try:
            async for message in call:
                yield message
        except grpc.aio.AioRpcError as error:
            raise _error(error) from None
        finally:
            call.cancel()

    async def aclose(self) -> None:
        await self._channel.close()
