"""The gRPC server every tier runs: the error→status interceptor, metrics, health and reflection.

A tier's `server.py` calls `build_server(...)` from its own `create_server(settings, deps)`;
tests bind `127.0.0.1:0` and read back the port.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from services.runtime.errors import EngramError, InvalidInput, Overloaded, status_for
from services.runtime.metrics import RpcMetrics
from services.runtime.settings import TierSettings
from services.runtime.tls import TlsSettings, server_credentials
from services.runtime.tracing import failed, server_span

logger = logging.getLogger(__name__)

STATUS_DETAILS_KEY = "grpc-status-details-bin"
ERROR_DOMAIN = "engram"


def status_details(error: EngramError, grpc_code: grpc.StatusCode) -> bytes:
    """A serialized google.rpc.Status carrying the domain code as an ErrorInfo."""
    info = error_details_pb2.ErrorInfo(
        reason=error.code,
        domain=ERROR_DOMAIN,
        metadata={"field": error.field} if error.field else {},
    )
    detail = any_pb2.Any()
    detail.Pack(info)
    details = [detail]
    if isinstance(error, Overloaded) and error.retry_after_s > 0:
        # When to come back, as google.rpc.RetryInfo: the next tier (and the gateway's 429
        # Retry-After) passes it on instead of guessing.
        retry = error_details_pb2.RetryInfo()
        retry.retry_delay.FromNanoseconds(int(error.retry_after_s * 1e9))
        packed = any_pb2.Any()
        packed.Pack(retry)
        details.append(packed)
    status = status_pb2.Status(code=grpc_code.value[0], message=error.message, details=details)
    serialized: bytes = status.SerializeToString()
    return serialized


async def _abort_with(context: grpc.aio.ServicerContext[Any, Any], error: EngramError) -> None:
    code = status_for(error).grpc_code
    await context.abort(
        code, error.message, trailing_metadata=((STATUS_DETAILS_KEY, status_details(error, code)),)
    )


class ErrorAndMetricsInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Maps domain errors to statuses (once, here) and records count/latency per RPC.

    Only the unknown becomes INTERNAL, logged with its traceback and an id the caller can quote.
    """

    def __init__(self, metrics: RpcMetrics) -> None:
        self._metrics = metrics

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = handler_call_details.method.rsplit("/", 1)[-1]
        traced = handler_call_details.method.lstrip("/")  # the span's name: service/method
        deserializer = _tolerant(handler.request_deserializer)
        if handler.unary_unary:
            return grpc.unary_unary_rpc_method_handler(
                self._wrap_unary(handler.unary_unary, method, traced),
                request_deserializer=deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_unary:
            return grpc.stream_unary_rpc_method_handler(
                self._wrap_unary(handler.stream_unary, method, traced),
                request_deserializer=deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_stream:
            return grpc.unary_stream_rpc_method_handler(
                self._wrap_stream(handler.unary_stream, method, traced),
                request_deserializer=deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.stream_stream:
            return grpc.stream_stream_rpc_method_handler(
                self._wrap_stream(handler.stream_stream, method, traced),
                request_deserializer=deserializer,
                response_serializer=handler.response_serializer,
            )
        return handler

    async def _fail(
        self,
        context: grpc.aio.ServicerContext[Any, Any],
        method: str,
        started: float,
        error: BaseException,
    ) -> None:
        """Record the failure, then end the call with its status. Recording comes first so the
        metric is there by the time the caller sees the error."""
        if isinstance(error, EngramError):
            self._metrics.observe(method, status_for(error).grpc_code.name, _since(started))
            await _abort_with(context, error)
        else:  # the unknown becomes INTERNAL
            self._metrics.observe(method, "INTERNAL", _since(started))
            await _abort_internal(context, method, error)

    async def _ended(
        self,
        span: Any,
        context: grpc.aio.ServicerContext[Any, Any],
        method: str,
        started: float,
        error: BaseException,
    ) -> None:
        """A call that did not end OK: its span and metric, then its status (re-raised when
        the servicer already aborted it)."""
        if isinstance(error, grpc.aio.AbortError):
            code = _context_code(context)
            failed(span, code)
            self._metrics.observe(method, code, _since(started))
            raise error
        failed(span, _code_of(error))
        await self._fail(context, method, started, error)

    def _wrap_unary(
        self, behaviour: Callable[..., Any], method: str, traced: str
    ) -> Callable[..., Any]:
        async def wrapped(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            started = time.perf_counter()
            with server_span(traced, context.invocation_metadata) as span:
                try:
                    result = await behaviour(_checked(request), context)
                except Exception as error:  # the top-level handler of every RPC
                    await self._ended(span, context, method, started, error)
                    return None
            self._metrics.observe(method, "OK", _since(started))
            return result

        return wrapped

    def _wrap_stream(
        self, behaviour: Callable[..., Any], method: str, traced: str
    ) -> Callable[..., Any]:
        async def wrapped(
            request: Any, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            started = time.perf_counter()
            with server_span(traced, context.invocation_metadata) as span:
                try:
                    async for item in behaviour(_checked(request), context):
                        yield item
                except Exception as error:  # the top-level handler of every RPC
                    await self._ended(span, context, method, started, error)
                    return
            self._metrics.observe(method, "OK", _since(started))

        return wrapped


def _code_of(error: BaseException) -> str:
    return status_for(error).grpc_code.name if isinstance(error, EngramError) else "INTERNAL"


def _since(started: float) -> float:
    return time.perf_counter() - started


@dataclass(frozen=True)
class _Undecodable:
    """Stands in for a request whose bytes are not a valid message (e.g. invalid UTF-8 in a
    string field), so the handler can answer INVALID_ARGUMENT instead of gRPC's INTERNAL."""

    reason: str


def _tolerant(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    if deserializer is None:
        return None

    def deserialize(data: bytes) -> Any:
        try:
            return deserializer(data)
        except DecodeError as error:
            return _Undecodable(str(error) or "malformed message")

    return deserialize


def _undecodable_error(request: _Undecodable) -> InvalidInput:
    return InvalidInput(
        "the request is not a valid protobuf message (string fields must be UTF-8): "
        f"{request.reason}"
    )


def _checked(request: Any) -> Any:
    """The request itself, or for a streamed request an iterator that checks each message."""
    if isinstance(request, _Undecodable):
        raise _undecodable_error(request)
    if hasattr(request, "__aiter__"):
        return _checked_stream(request)
    return request


async def _checked_stream(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for request in requests:
        if isinstance(request, _Undecodable):
            raise _undecodable_error(request)
        yield request


def _context_code(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    code = context.code()
    return code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"


async def _abort_internal(
    context: grpc.aio.ServicerContext[Any, Any], method: str, error: BaseException
) -> None:
    incident = uuid.uuid4().hex[:12]
    logger.exception("unhandled error in %s (incident %s)", method, incident, exc_info=error)
    internal = EngramError(f"internal error in {method}; quote incident {incident} when reporting")
    await _abort_with(context, internal)


@dataclass
class TierServer:
    """A built, not yet started, gRPC server of one tier."""

    server: grpc.aio.Server
    port: int
    health: HealthServicer
    metrics: RpcMetrics
    service_names: tuple[str, ...]

    async def start(self) -> None:
        """Start accepting RPCs; health says NOT_SERVING until `set_serving(True)`."""
        await self.set_serving(False)
        await self.server.start()

    async def set_serving(self, serving: bool) -> None:
        """Flip every service (and the overall "" entry) to SERVING or NOT_SERVING."""
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for name in ("", *self.service_names):
            await self.health.set(name, status)

    async def stop(self, grace_s: float) -> None:
        """Graceful stop: report NOT_SERVING, then let in-flight RPCs finish within the grace."""
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace_s)


def build_server(
    settings: TierSettings,
    *,
    tier: str,
    register: Callable[[grpc.aio.Server], None],
    service_names: Sequence[str],
    tls: TlsSettings | None = None,
) -> TierServer:
    """Create a tier's aio server with the standard interceptor, health and reflection.

    `register` adds the tier's servicers. Health starts NOT_SERVING unless `serving`; the tier
    flips it when its dependencies are ready.
    """
    metrics = RpcMetrics(tier)
    options = [
        ("grpc.max_send_message_length", settings.max_message_bytes),
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.keepalive_time_ms", 30_000),
        ("grpc.keepalive_timeout_ms", 10_000),
        ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ("grpc.keepalive_permit_without_calls", 1),
    ]
    server = grpc.aio.server(interceptors=[ErrorAndMetricsInterceptor(metrics)], options=options)
    register(server)
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    names = tuple(service_names)
    reflection.enable_server_reflection(
        (
            *names,
            health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
            reflection.SERVICE_NAME,
        ),
        server,
    )
    credentials = server_credentials(tls or TlsSettings())  # ENGRAM_TLS_* unless given
    where = f"{settings.host}:{settings.port}"
    port = (
        server.add_secure_port(where, credentials)
        if credentials is not None
        else server.add_insecure_port(where)
    )
    if port == 0:
        raise OSError(f"cannot bind {settings.host}:{settings.port}")
    return TierServer(server, port, health, metrics, names)
