"""Per-token rate limits: a token bucket for each token, refilled at `rate_per_s` up to
`burst`. A call that finds its token's bucket empty is refused with Overloaded and the seconds
until one call will pass (HTTP 429 with Retry-After), so one runaway client cannot starve the
others. Buckets idle long enough to be full again are forgotten, so they take no more room
than the set of active tokens.

Where the buckets are kept is a `Buckets`: `MemoryBuckets` (one gateway; pure, the caller
passes the clock) or `RedisBuckets` (`redis_state.py`: one bucket per token across every
gateway replica, on the Redis server's clock).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Protocol


class Buckets(Protocol):
    def take(self, key: str, now: float, rate_per_s: float, burst: float) -> float:
        """Spend one call of `key`'s bucket: 0.0 when it passes, else the seconds to wait."""


class RateLimiter:
    def __init__(self, rate_per_s: float, burst: float, buckets: Buckets | None = None) -> None:
        if rate_per_s <= 0 or burst < 1:
            raise ValueError("a rate limit needs rate_per_s > 0 and burst >= 1")
        self.rate_per_s, self.burst = rate_per_s, burst
        self._buckets = buckets if buckets is not None else MemoryBuckets()

    def take(self, key: str, now: float) -> float:
        """Spend one call of `key`'s bucket: 0.0 when it passes, else the seconds to wait."""
        return self._buckets.take(key, now, self.rate_per_s, self.burst)


@dataclass
class _Bucket:
    tokens: float
    at: float


class MemoryBuckets:
    """The buckets of one gateway process."""

    def __init__(self) -> None:
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, key: str, now: float, rate_per_s: float, burst: float) -> float:
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = _Bucket(burst, now)
            bucket.tokens = min(burst, bucket.tokens + (now - bucket.at) * rate_per_s)
            bucket.at = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                if len(self._buckets) > 10_000:
                    self._forget_full(now, burst / rate_per_s)
                return 0.0
            return (1.0 - bucket.tokens) / rate_per_s

    def _forget_full(self, now: float, full_after: float) -> None:
        for key in [k for k, b in self._buckets.items() if now - b.at >= full_after]:
            del self._buckets[key]
