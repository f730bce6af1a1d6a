"""Prometheus metrics of the gateway's HTTP face: requests and latency by operation.

A plain ASGI middleware (not BaseHTTPMiddleware), so streamed answers (SSE, JSONL export)
pass through untouched. The `operation` label is the matched route's name — for REST routes
the gateway operation (`search`, `search_raw`, ...) — which keeps label cardinality bounded
(a raw path would not be).
"""

from __future__ import annotations

import time

from prometheus_client import CollectorRegistry, Counter, Histogram
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HttpMetrics:
    """The gateway's collectors, in a registry of its own (one per app)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "engram_http_requests_total",
            "HTTP requests answered, by method, operation and status",
            ["method", "operation", "status"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "engram_http_request_seconds",
            "HTTP request latency until the answer's headers, by method and operation",
            ["method", "operation"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=self.registry,
        )


class MetricsMiddleware:
    def __init__(self, app: ASGIApp, metrics: HttpMetrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def observe(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                self.metrics.latency.labels(scope["method"], _route(scope)).observe(
                    time.perf_counter() - started
                )
            await send(message)

        try:
            await self.app(scope, receive, observe)
        finally:
            self.metrics.requests.labels(scope["method"], _route(scope), str(status)).inc()


def _route(scope: Scope) -> str:
    name = getattr(scope.get("route"), "name", None)
    return str(name) if name else "unmatched"
