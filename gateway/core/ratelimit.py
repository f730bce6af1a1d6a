"""Per-token rate limits: a token bucket for each token, refilled at `rate_per_s` up to
`burst`. A call that finds its token's bucket empty is refused with Overloaded and the seconds
until one call will pass (HTTP 429 with Retry-After), so one runaway client cannot starve the
others. Pure: the caller passes the clock. Buckets idle long enough to be full again are
forgotten, so the table stays as small as the set of active tokens.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass


@dataclass
class _Bucket:
    tokens: float
    at: float


class RateLimiter:
    def __init__(self, rate_per_s: float, burst: float) -> None:
        if rate_per_s <= 0 or burst < 1:
            raise ValueError("a rate limit needs rate_per_s > 0 and burst >= 1")
        self.rate_per_s, self.burst = rate_per_s, burst
        self._buckets: dict[str, _Bucket] = {}
        self._lock = threading.Lock()

    def take(self, key: str, now: float) -> float:
        """Spend one call of `key`'s bucket: 0.0 when it passes, else the seconds to wait."""
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = _Bucket(self.burst, now)
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.at) * self.rate_per_s)
            bucket.at = now
            if bucket.tokens >= 1.0:
                bucket.tokens -= 1.0
                if len(self._buckets) > 10_000:
                    self._forget_full(now)
                return 0.0
            return (1.0 - bucket.tokens) / self.rate_per_s

    def _forget_full(self, now: float) -> None:
        full_after = self.burst / self.rate_per_s
        for key in [k for k, b in self._buckets.items() if now - b.at >= full_after]:
            del self._buckets[key]
