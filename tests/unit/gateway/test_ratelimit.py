"""Per-token rate limits: a burst passes, the next call waits the refill, tokens are apart."""

from __future__ import annotations

import pytest

from gateway.core.ratelimit import RateLimiter


def test_a_burst_passes_then_calls_wait_for_the_refill() -> None:
    limiter = RateLimiter(rate_per_s=2.0, burst=3)
    assert [limiter.take("a", 0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("a", 0.0) == pytest.approx(0.5), "one call's worth at 2 a second"
    assert limiter.take("b", 0.0) == 0.0, "another token has its own bucket"
    assert limiter.take("a", 0.5) == 0.0, "refilled"
    assert limiter.take("a", 0.5) > 0


def test_a_limit_needs_a_rate_and_a_burst() -> None:
    with pytest.raises(ValueError):
        RateLimiter(rate_per_s=0, burst=1)
