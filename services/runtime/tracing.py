"""Tracing: OpenTelemetry spans from the gateway through every tier, exported over OTLP when an
endpoint is set, off (and free) by default.

- **Switching on.** `ENGRAM_TRACING_OTLP_ENDPOINT` (e.g. ``http://otel-collector:4317``, OTLP
  over gRPC) makes every process install a tracer provider named for its service
  (``engram-gateway``, ``engram-retrieval``, …) with a batching exporter;
  `ENGRAM_TRACING_SAMPLE_RATIO` samples a share of new traces (parents' decisions are kept).
  With no endpoint nothing is installed: the interceptors and `stage` return at once.
- **Across processes.** The W3C ``traceparent`` travels in gRPC metadata: `TraceClient`
  (every channel `grpc_client.create_channel` makes) starts a client span and injects it; the
  tiers' server interceptor (`grpc_server`) extracts it and runs the RPC in a server span. The
  gateway's HTTP faces extract it from request headers (`gateway.tracing`).
- **Inside a tier.** `stage(name)` opens a child span for one stage of work (the search's
  embedding, candidates, scoring and fetch).
- **In the logs.** `JsonFormatter` adds ``trace_id`` and ``span_id`` to every line written
  inside a span, so a log line leads to its trace.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

import grpc
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

TRACER_NAME: Final = "engram"
_state = {"on": False}


class TracingSettings(BaseSettings):
    """OpenTelemetry export (`ENGRAM_TRACING_*`); every process reads the same variables."""

    model_config = SettingsConfigDict(env_prefix="ENGRAM_TRACING_", extra="ignore")

    otlp_endpoint: str = Field(
        "", description="OTLP/gRPC collector to export spans to, e.g. http://collector:4317; "
        "empty = tracing off"
    )  # fmt: skip
    sample_ratio: float = Field(
        1.0, ge=0.0, le=1.0, description="share of new traces recorded (a parent's choice holds)"
    )
    insecure: bool = Field(True, description="plaintext to the collector (no TLS)")


def enabled() -> bool:
    """Whether this process records spans."""
    return _state["on"]


def configure_tracing(
    service: str, settings: TracingSettings | None = None, *, exporter: Any = None
) -> bool:
    """Install this process's tracer provider when an endpoint (or, in tests, an exporter) is
    given; True when tracing is on. Called once, from a process's `__main__`."""
    settings = settings or TracingSettings()
    if not settings.otlp_endpoint and exporter is None:
        return False
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
    from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

    provider = TracerProvider(
        resource=Resource.create({"service.name": f"engram-{service}"}),
        sampler=ParentBased(TraceIdRatioBased(settings.sample_ratio)),
    )
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    else:
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        otlp = OTLPSpanExporter(endpoint=settings.otlp_endpoint, insecure=settings.insecure)
        provider.add_span_processor(BatchSpanProcessor(otlp))
    trace.set_tracer_provider(provider)  # once per process (OpenTelemetry keeps the first)
    _state["on"] = True
    return True


def shutdown_tracing() -> None:
    """Stop recording: export what is pending and turn the hooks off (at exit, and in tests)."""
    if not _state["on"]:
        return
    _state["on"] = False
    provider = trace.get_tracer_provider()
    shutdown = getattr(provider, "shutdown", None)
    if shutdown is not None:
        shutdown()


def tracer() -> trace.Tracer:
    return trace.get_tracer(TRACER_NAME)


@contextlib.contextmanager
def stage(name: str, **attributes: Any) -> Iterator[None]:
    """A child span around one stage of work (nothing when tracing is off)."""
    if not _state["on"]:
        yield
        return
    with tracer().start_as_current_span(name, attributes=attributes or None):
        yield


def current_ids() -> tuple[str, str] | None:
    """(trace id, span id) in hex of the span this code runs in, if one is recording."""
    if not _state["on"]:
        return None
    span_context = trace.get_current_span().get_span_context()
    if not span_context.is_valid:
        return None
    return f"{span_context.trace_id:032x}", f"{span_context.span_id:016x}"


def _carrier(metadata: Sequence[tuple[str, Any]] | None) -> dict[str, str]:
    return {key: value for key, value in metadata or () if isinstance(value, str)}


@contextlib.contextmanager
def server_span(
    name: str, metadata: Callable[[], Sequence[tuple[str, Any]] | None]
) -> Iterator[trace.Span | None]:
    """A server span for one incoming call, continuing the caller's trace from its metadata
    (or HTTP headers), read only when tracing is on; None when it is off."""
    if not _state["on"]:
        yield None
        return
    parent = propagate.extract(_carrier(metadata()))
    token = otel_context.attach(parent)
    try:
        with tracer().start_as_current_span(name, kind=SpanKind.SERVER) as span:
            yield span
    finally:
        otel_context.detach(token)


def failed(span: trace.Span | None, code: str) -> None:
    """Mark a span as ended in error with the call's status code."""
    if span is not None:
        span.set_status(Status(StatusCode.ERROR, code))
        span.set_attribute("rpc.grpc.status_code", code)


def outgoing(metadata: Sequence[tuple[str, Any]] | None) -> list[tuple[str, Any]]:
    """The metadata of an outgoing call with the current trace context added."""
    carrier: dict[str, str] = {}
    propagate.inject(carrier)
    return [*(metadata or ()), *carrier.items()]


class TraceClient(
    grpc.aio.UnaryUnaryClientInterceptor,  # type: ignore[misc]
    grpc.aio.UnaryStreamClientInterceptor,  # type: ignore[misc]
    grpc.aio.StreamUnaryClientInterceptor,  # type: ignore[misc]
    grpc.aio.StreamStreamClientInterceptor,  # type: ignore[misc]
):
    """A gRPC client interceptor (all four shapes): a client span per call, its context sent
    in the call's metadata. Does nothing while tracing is off."""

    def _details(self, details: Any) -> Any:
        return grpc.aio.ClientCallDetails(
            method=details.method,
            timeout=details.timeout,
            metadata=outgoing(details.metadata),
            credentials=details.credentials,
            wait_for_ready=details.wait_for_ready,
        )

    async def _unary(self, continuation: Any, details: Any, request: Any) -> Any:
        if not _state["on"]:
            return await continuation(details, request)
        method = _method_name(details.method)
        with tracer().start_as_current_span(method, kind=SpanKind.CLIENT) as span:
            call = await continuation(self._details(details), request)
            code = await call.code()
            if code.name != "OK":
                failed(span, code.name)
            return call

    async def _streaming(self, continuation: Any, details: Any, request: Any) -> Any:
        if not _state["on"]:
            return await continuation(details, request)
        method = _method_name(details.method)
        span = tracer().start_span(method, kind=SpanKind.CLIENT)
        with trace.use_span(span, end_on_exit=False):
            call = await continuation(self._details(details), request)
        call.add_done_callback(lambda _: span.end())
        return call

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await self._unary(continuation, details, request)

    async def intercept_stream_unary(self, continuation: Any, details: Any, requests: Any) -> Any:
        return await self._unary(continuation, details, requests)

    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await self._streaming(continuation, details, request)

    async def intercept_stream_stream(self, continuation: Any, details: Any, requests: Any) -> Any:
        return await self._streaming(continuation, details, requests)


def _method_name(method: Any) -> str:
    text = method.decode() if isinstance(method, bytes) else str(method)
    return text.lstrip("/")
