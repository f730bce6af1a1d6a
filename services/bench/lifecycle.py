"""The memory-lifecycle figures (issue 15): link traversal, a drawer's links, session-start
priming and search with supersession binding, at 100k drawers and 200k links (10k and 20k
with --quick), through a real retrieval tier process over gRPC.

The pool is the synthetic one of the retrieval section (same drawers and cached vectors);
links are generated deterministically: each drawer gets two outgoing links, a fifth of them
`supersedes` within its room (newer → older), the rest `relates_to`, `caused_by` and
`implements` anywhere; one in ten has ended. Figures are p50 / p99 in milliseconds of the
whole call as a client sees it.
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engram.v1 import common_pb2, retrieval_pb2, retrieval_pb2_grpc

from services.bench.report import markdown_table, percentile
from services.bench.retrieval import build_pool, running_tier
from services.bench.synthetic import ROOMS, cached_vectors, synthetic_drawers, synthetic_queries
from services.retrieval.core.links import Link
from services.retrieval.pool.links import LinkStore
from services.retrieval.writes import prepare
from services.runtime.grpc_client import ClientPolicy, create_channel
from services.runtime.stores import store_dir

STORE = "bench"
_CONTEXT = common_pb2.StoreContext(name=STORE, caller_tier=common_pb2.CALLER_TIER_ADMIN)
LINKS_PER_DRAWER = 2
SUPERSEDES_SHARE = 0.2
ENDED_SHARE = 0.1
OTHER_TYPES = ("relates_to", "caused_by", "implements")


@dataclass(frozen=True)
class Plan:
    drawers: int
    calls: int  # per measured operation

    @classmethod
    def of(cls, quick: bool) -> Plan:
        return cls(10_000, 30) if quick else cls(100_000, 200)


def generate_links(drawers: Sequence[common_pb2.Drawer], *, seed: int = 7) -> list[Link]:
    """LINKS_PER_DRAWER outgoing links per drawer (deterministic)."""
    rng = random.Random(seed)
    by_room: dict[str, list[common_pb2.Drawer]] = {}
    for drawer in drawers:
        by_room.setdefault(drawer.room, []).append(drawer)
    links: list[Link] = []
    base = datetime(2025, 1, 1, tzinfo=UTC).timestamp()
    for index, drawer in enumerate(drawers):
        for slot in range(LINKS_PER_DRAWER):
            if rng.random() < SUPERSEDES_SHARE:
                kind, other = "supersedes", rng.choice(by_room[drawer.room])
            else:
                kind, other = rng.choice(OTHER_TYPES), rng.choice(drawers)
            if other.id == drawer.id:
                continue
            valid_from = base + rng.random() * 3.0e7
            ended = rng.random() < ENDED_SHARE
            links.append(
                Link(
                    id=f"l_{index}_{slot}",
                    from_id=drawer.id,
                    to_id=other.id,
                    type=kind,
                    valid_from=valid_from,
                    valid_to=valid_from + 1.0e6 if ended else None,
                    asserted_by="bench",
                    reason="",
                    evidence_ids=(),
                    created_at=valid_from,
                )
            )
    return links


async def _timed(calls: Sequence[Callable[[], Awaitable[Any]]]) -> dict[str, float]:
    times: list[float] = []
    for call in calls:
        started = time.perf_counter()
        await call()
        times.append((time.perf_counter() - started) * 1000)
    return {"p50": percentile(times, 50), "p99": percentile(times, 99), "n": float(len(times))}


async def measure(target: str, drawer_ids: Sequence[str], plan: Plan) -> dict[str, Any]:
    channel = create_channel(target, ClientPolicy(deadline_s=600))
    stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
    rng = random.Random(11)
    starts = [rng.choice(drawer_ids) for _ in range(plan.calls)]
    contexts = [q.text for q in synthetic_queries(plan.calls, seed=5)]
    figures: dict[str, Any] = {}
    try:
        started = time.perf_counter()
        await stub.Stats(retrieval_pb2.StatsRequest(store=_CONTEXT))  # opens the pool
        figures["open_s"] = time.perf_counter() - started
        reached: dict[int, list[int]] = {}
        for depth in (1, 2, 3):
            sizes: list[int] = []

            def walk(start: str, depth: int = depth, sizes: list[int] = sizes) -> Any:
                async def call() -> None:
                    answer = await stub.TraverseLinks(
                        retrieval_pb2.TraverseLinksRequest(
                            store=_CONTEXT, drawer_id=start, depth=depth
                        )
                    )
                    sizes.append(len(answer.drawer_ids))

                return call

            figures[f"traverse depth {depth}"] = await _timed([walk(s) for s in starts])
            reached[depth] = sizes
        figures["reached_p50"] = {
            d: percentile([float(x) for x in v], 50) for d, v in reached.items()
        }

        def listed(start: str) -> Any:
            return lambda: stub.ListLinks(
                retrieval_pb2.ListLinksRequest(store=_CONTEXT, drawer_id=start)
            )

        figures["list a drawer's links"] = await _timed([listed(s) for s in starts])
        prime = retrieval_pb2.PrimeRequest(store=_CONTEXT)
        figures["prime, no context"] = await _timed(
            [lambda: stub.Prime(prime) for _ in range(plan.calls)]
        )

        def primed(text: str) -> Any:
            return lambda: stub.Prime(retrieval_pb2.PrimeRequest(store=_CONTEXT, context=text))

        figures["prime with a context"] = await _timed([primed(t) for t in contexts])

        def searched(text: str) -> Any:
            return lambda: stub.Search(retrieval_pb2.SearchRequest(store=_CONTEXT, query=text))

        figures["search (supersession bound)"] = await _timed([searched(t) for t in contexts])

        # What the operator dashboard asks of a store this size (issue 16): the chrome's and
        # the insight page's stats, the drawers page (50 and the facets of the filter), and
        # the insight page's per-room type counts (one room, facets only).
        few = max(5, plan.calls // 10)
        figures["dashboard: stats"] = await _timed(
            [lambda: stub.Stats(retrieval_pb2.StatsRequest(store=_CONTEXT)) for _ in range(few)]
        )
        page = retrieval_pb2.ListDrawersRequest(
            store=_CONTEXT, page=common_pb2.PageRequest(page_size=50), include_facets=True
        )
        figures["dashboard: drawers page + facets"] = await _timed(
            [lambda: stub.ListDrawers(page) for _ in range(few)]
        )
        room = retrieval_pb2.ListDrawersRequest(
            store=_CONTEXT,
            filter=retrieval_pb2.DrawerFilter(room=ROOMS[0]),
            page=common_pb2.PageRequest(page_size=1),
            include_facets=True,
        )
        figures["dashboard: one room's type counts"] = await _timed(
            [lambda: stub.ListDrawers(room) for _ in range(few)]
        )
    finally:
        await channel.close()
    return figures


def run(quick: bool) -> dict[str, Any]:
    plan = Plan.of(quick)
    print(f"lifecycle: {plan.drawers:,} drawers", flush=True)
    drawers = synthetic_drawers(plan.drawers, seed=0)
    vectors = cached_vectors([d.content for d in drawers], progress=print)
    now = datetime.now(UTC)
    prepared = [prepare(d, now, 0.5) for d in drawers]
    links = generate_links(prepared)
    results: dict[str, Any] = {
        "drawers": plan.drawers,
        "links": len(links),
        "pinned": sum(1 for d in prepared if d.pin_status == common_pb2.PIN_STATUS_PINNED),
        "signed": sum(1 for d in prepared if d.HasField("signature")),
    }
    with tempfile.TemporaryDirectory(prefix="engram-bench-lifecycle-") as tmp_name:
        root = Path(tmp_name) / "retrieval"
        build_pool(root, prepared, vectors)
        started = time.perf_counter()
        store = LinkStore(store_dir(root, STORE) / "links.sqlite")
        try:
            store.add_many(links)
        finally:
            store.close()
        results["links_written_per_s"] = len(links) / (time.perf_counter() - started)
        logs = Path(tmp_name) / "logs"
        with running_tier("embedder", {"ENGRAM_EMBEDDER_ALLOW_CPU": "1"}, logs, 300) as embedder:
            env = {
                "ENGRAM_RETRIEVAL_DATA_DIR": str(root),
                "ENGRAM_RETRIEVAL_EMBEDDER_ADDR": embedder,
                "ENGRAM_VECTOR_BACKEND": "edge",
            }
            with running_tier("retrieval", env, logs, 300) as target:
                results["calls"] = asyncio.run(measure(target, [d.id for d in prepared], plan))
    results["markdown"] = render(results)
    return results


def render(results: dict[str, Any]) -> str:
    calls = results["calls"]
    rows = [
        [name, figures["p50"], figures["p99"], int(figures["n"])]
        for name, figures in calls.items()
        if isinstance(figures, dict) and "p50" in figures
    ]
    reached = ", ".join(f"depth {d}: {n:.0f}" for d, n in calls["reached_p50"].items())
    return "\n".join(
        [
            f"### Lifecycle: {results['drawers']:,} drawers, {results['links']:,} links "
            f"({results['pinned']:,} pinned, {results['signed']:,} signed)",
            "",
            markdown_table(
                ["call (through the retrieval tier)", "p50 ms", "p99 ms", "calls"], rows
            ),
            "",
            f"Drawers reached per traversal (p50): {reached}. Links written "
            f"{results['links_written_per_s']:,.0f}/s in one transaction; the tier opened the "
            f"store in {calls['open_s']:.1f} s.",
        ]
    )
