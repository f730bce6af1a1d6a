"""Per-token rate limits: a burst passes, the next call waits the refill, tokens are apart; on
Redis, one bucket per token across every gateway, gone from Redis once full again."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import cast

import pytest

from gateway.core.ratelimit import RateLimiter
from gateway.core.redis_state import Keyspace, RedisBuckets


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


@pytest.fixture
def limiter_on(
    backend: str, request: pytest.FixtureRequest
) -> Callable[[float, float], RateLimiter]:
    """Makes a limiter over the backend's buckets (on Redis, every one shares them)."""
    keys: Keyspace | None = request.getfixturevalue("keyspace") if backend == "redis" else None

    def make(rate_per_s: float, burst: float) -> RateLimiter:
        return RateLimiter(rate_per_s, burst, RedisBuckets(keys) if keys else None)

    return make


def test_a_burst_passes_and_the_next_call_waits_on_every_backend(
    limiter_on: Callable[[float, float], RateLimiter],
) -> None:
    limiter = limiter_on(20.0, 3)
    assert [limiter.take("a", time.monotonic()) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = limiter.take("a", time.monotonic())
    assert 0 < wait <= 0.05, f"one call's worth at 20 a second is at most 0.05 s, got {wait}"
    assert limiter.take("b", time.monotonic()) == 0.0, "another token has its own bucket"
    deadline = time.monotonic() + 5
    while limiter.take("a", time.monotonic()) > 0:
        assert time.monotonic() < deadline, "the bucket did not refill within 5 s"
        time.sleep(0.01)


def test_two_gateways_share_one_bucket_per_token(keyspace: Keyspace) -> None:
    one = RateLimiter(0.01, 3, RedisBuckets(keyspace))
    other = RateLimiter(0.01, 3, RedisBuckets(keyspace))
    assert [one.take("tok", 0.0), other.take("tok", 0.0), one.take("tok", 0.0)] == [0.0] * 3
    assert other.take("tok", 0.0) > 0, "the burst was spent across both gateways"
    assert one.take("another", 0.0) == 0.0


def test_a_bucket_key_expires_once_the_bucket_would_be_full(keyspace: Keyspace) -> None:
    limiter = RateLimiter(2.0, 4, RedisBuckets(keyspace))
    limiter.take("tok", 0.0)
    ttl_ms = cast(int, keyspace.client.pttl(keyspace.key("rate", "tok")))
    assert 0 < ttl_ms <= 500, f"one spent call refills in 0.5 s; the key lives {ttl_ms} ms"
    deadline = time.monotonic() + 5
    while keyspace.client.exists(keyspace.key("rate", "tok")):
        assert time.monotonic() < deadline, "the full bucket's key was still there after 5 s"
        time.sleep(0.05)
    assert [limiter.take("tok", 0.0) for _ in range(4)] == [0.0] * 4, "a missing key is full"
