"""The gateway bench's measuring loop and its rendering (no timings asserted: only what is
counted and how the table reads)."""

from __future__ import annotations

import asyncio
import math

from services.bench.gateway import CONCURRENCY, PATHS, measure, render, summarise


async def test_measure_sends_every_query_once_and_counts_failures_apart() -> None:
    seen: list[str] = []
    running, most = 0, 0

    async def call(text: str) -> int:
        nonlocal running, most
        running += 1
        most = max(most, running)
        await asyncio.sleep(0)
        running -= 1
        seen.append(text)
        if text.startswith("bad"):
            raise RuntimeError("refused")
        return 1

    queries = [f"q{i}" for i in range(10)] + ["bad1", "bad2"]
    figures = await measure(call, queries, clients=4)
    assert sorted(seen) == sorted(queries), "every query is sent exactly once"
    assert figures["errors"] == 2 and figures["requests"] == 12
    assert most == 4, f"4 clients should overlap; at most {most} calls ran at once"
    assert figures["p50_ms"] >= 0 and figures["requests_per_s"] > 0


def test_summary_of_nothing_is_not_a_number_rather_than_a_crash() -> None:
    empty = summarise([], errors=3, wall_s=1.0)
    assert math.isnan(empty["p50_ms"]) and empty["errors"] == 3 and empty["requests"] == 3


def test_render_shows_what_the_gateway_adds_and_the_verdict() -> None:
    def cell(p50: float, errors: int = 0) -> dict[str, float]:
        return {
            "p50_ms": p50,
            "p99_ms": p50 * 2,
            "requests_per_s": 100.0,
            "errors": float(errors),
            "requests": 100.0,
        }

    figures = {
        str(c): {PATHS[0]: cell(10.0), PATHS[1]: cell(12.5), PATHS[2]: cell(11.0, errors=c // 64)}
        for c in CONCURRENCY
    }
    text = render({"drawers": 300, "import_s": 4.0, "figures": figures})
    assert "| 1 | gateway REST | 12.5 | +2.50 |" in text
    assert "REST adds 2.50 ms p50 at 1 client (target ≤ 3 ms: met)" in text
    assert "64 concurrent clients: not held (1 errors)" in text
