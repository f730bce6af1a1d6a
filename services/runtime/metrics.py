"""Prometheus metrics of one tier process: request count and latency per RPC.

Each server owns its registry (no process-global collectors), so tests can build many servers
in one process and `/metrics` shows exactly one tier.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, start_http_server


class RpcMetrics:
    """Counters and histograms for the RPCs of one tier."""

    def __init__(self, tier: str) -> None:
        self.tier = tier
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "engram_grpc_requests_total",
            "gRPC requests handled, by method and status code",
            ["tier", "method", "code"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "engram_grpc_request_seconds",
            "gRPC request latency in seconds, by method",
            ["tier", "method"],
            buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
            registry=self.registry,
        )

    def observe(self, method: str, code: str, seconds: float) -> None:
        """Record one finished RPC."""
        self.requests.labels(self.tier, method, code).inc()
        self.latency.labels(self.tier, method).observe(seconds)

    def serve(self, port: int, host: str = "127.0.0.1") -> None:
        """Expose `/metrics` on its own port (0 = disabled)."""
        if port:
            start_http_server(port, addr=host, registry=self.registry)
