"""The one way a tier (or the gateway) talks to another tier over gRPC.

Every call gets a deadline (a default one when the caller gives none); UNAVAILABLE is retried
with exponential backoff by gRPC's own retry machinery (configured through the service
config, so retries are transparent and bounded); keepalive keeps idle channels honest; and
failures come back as domain errors (`EngramError` subclasses), never raw `AioRpcError`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cache
from typing import Any, TypeVar

import grpc
from engram.v1 import authoring_pb2, corpus_pb2, embedder_pb2, options_pb2, retrieval_pb2
from google.rpc import error_details_pb2, status_pb2

from services.runtime.errors import EngramError, Overloaded, error_from_code, error_from_grpc
from services.runtime.grpc_server import ERROR_DOMAIN, STATUS_DETAILS_KEY
from services.runtime.tls import TlsSettings, channel_credentials, channel_options
from services.runtime.tracing import TraceClient

T = TypeVar("T")


@dataclass(frozen=True)
class ClientPolicy:
    """Deadline and retry policy of one channel."""

    deadline_s: float = 10.0
    max_attempts: int = 4  # first try + 3 retries (gRPC caps this at 5)
    initial_backoff_s: float = 0.1
    max_backoff_s: float = 2.0
    backoff_multiplier: float = 2.0
    max_message_bytes: int = 64 * 1024 * 1024
    # How soon a channel tries again to reach a peer that went away (a restarted tier): gRPC's
    # own default backs off to 120 s, so a tier back within seconds would look down for
    # minutes. Capped low: a reconnect attempt to a loopback or cluster address is cheap.
    max_reconnect_backoff_s: float = 2.0


@cache
def replay_unsafe_methods() -> tuple[tuple[str, str], ...]:
    """(service, method) of every tier RPC the protos mark `replay_unsafe`: sent again after
    a lost answer it would do its work twice, so no channel retries it."""
    found = [
        (service.full_name, method.name)
        for module in (authoring_pb2, corpus_pb2, embedder_pb2, retrieval_pb2)
        for service in module.DESCRIPTOR.services_by_name.values()
        for method in service.methods
        if method.GetOptions().Extensions[options_pb2.replay_unsafe]
    ]
    return tuple(sorted(found))


def _service_config(policy: ClientPolicy) -> str:
    retried = {
        "name": [{}],  # every service and method on this channel...
        "retryPolicy": {
            "maxAttempts": policy.max_attempts,
            "initialBackoff": f"{policy.initial_backoff_s}s",
            "maxBackoff": f"{policy.max_backoff_s}s",
            "backoffMultiplier": policy.backoff_multiplier,
            "retryableStatusCodes": ["UNAVAILABLE"],
        },
    }
    # ...but these (the most specific entry wins). gRPC still retries a call that never
    # reached the peer, which is safe for any method.
    not_retried = {
        "name": [
            {"service": service, "method": method} for service, method in replay_unsafe_methods()
        ]
    }
    return json.dumps({"methodConfig": [retried, not_retried]})


class _DefaultDeadline(
    grpc.aio.UnaryUnaryClientInterceptor,  # type: ignore[misc]
    grpc.aio.UnaryStreamClientInterceptor,  # type: ignore[misc]
    grpc.aio.StreamUnaryClientInterceptor,  # type: ignore[misc]
    grpc.aio.StreamStreamClientInterceptor,  # type: ignore[misc]
):
    """Gives every call a deadline: a call without one could hang forever on a stuck peer."""

    def __init__(self, deadline_s: float) -> None:
        self._deadline_s = deadline_s

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        if details.timeout is not None:
            return details
        return grpc.aio.ClientCallDetails(
            method=details.method,
            timeout=self._deadline_s,
            metadata=details.metadata,
            credentials=details.credentials,
            wait_for_ready=details.wait_for_ready,
        )

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)

    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)

    async def intercept_stream_unary(
        self, continuation: Any, details: Any, request_iterator: Any
    ) -> Any:
        return await continuation(self._details(details), request_iterator)

    async def intercept_stream_stream(
        self, continuation: Any, details: Any, request_iterator: Any
    ) -> Any:
        return await continuation(self._details(details), request_iterator)


def create_channel(
    target: str, policy: ClientPolicy | None = None, tls: TlsSettings | None = None
) -> grpc.aio.Channel:
    """An aio channel to `host:port` with deadlines, retries and keepalive: TLS when the TLS
    settings (default: `ENGRAM_TLS_*`) name a CA, else plaintext."""
    policy = policy or ClientPolicy()
    tls = tls or TlsSettings()
    credentials = channel_credentials(tls)
    options = [
        ("grpc.enable_retries", 1),
        ("grpc.service_config", _service_config(policy)),
        ("grpc.keepalive_time_ms", 30_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.max_send_message_length", policy.max_message_bytes),
        ("grpc.max_receive_message_length", policy.max_message_bytes),
        ("grpc.initial_reconnect_backoff_ms", 250),
        ("grpc.min_reconnect_backoff_ms", 250),
        ("grpc.max_reconnect_backoff_ms", int(policy.max_reconnect_backoff_s * 1000)),
    ]
    interceptors: list[Any] = [_DefaultDeadline(policy.deadline_s), TraceClient()]
    if credentials is not None:
        return grpc.aio.secure_channel(
            target,
            credentials,
            options=[*options, *channel_options(tls)],
            interceptors=interceptors,
        )
    return grpc.aio.insecure_channel(target, options=options, interceptors=interceptors)


def domain_error(error: grpc.aio.AioRpcError) -> EngramError:
    """Turn a failed call into the domain error the far side raised (or the closest one)."""
    metadata = error.trailing_metadata() or ()
    for key, value in metadata:
        if key != STATUS_DETAILS_KEY or not isinstance(value, bytes):
            continue
        status = status_pb2.Status.FromString(value)
        found: EngramError | None = None
        retry_after_s = 0.0
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            retry = error_details_pb2.RetryInfo()
            if detail.Unpack(info) and info.domain == ERROR_DOMAIN:
                found = error_from_code(info.reason, status.message, info.metadata.get("field", ""))
            elif detail.Unpack(retry):
                retry_after_s = retry.retry_delay.ToNanoseconds() / 1e9
        if found is not None:
            if isinstance(found, Overloaded):
                found.retry_after_s = retry_after_s
            return found
    code = error.code()
    message = error.details() or code.name
    if code is grpc.StatusCode.DEADLINE_EXCEEDED:
        message = f"deadline exceeded waiting for the tier: {message}"
    elif code is grpc.StatusCode.UNAVAILABLE:
        message = f"tier unavailable: {message}"
    return error_from_grpc(code, message)


async def call(rpc: Callable[..., Awaitable[T]], request: Any, **kwargs: Any) -> T:
    """Invoke one unary RPC, converting gRPC failures into domain errors."""
    try:
        return await rpc(request, **kwargs)
    except grpc.aio.AioRpcError as error:
        raise domain_error(error) from error
