"""The gateway's cost: the same searches sent straight to the retrieval tier over gRPC, through
the gateway's REST face, and through its public gRPC face, at 1, 16 and 64 concurrent clients.

Every process is real (embedder, retrieval, corpus, authoring, gateway, each its own process,
as `engram up` runs them) and the clients run in this process. Before the timed rounds every
query is sent once, so the retrieval tier's query-embedding cache holds them all and each
path pays the same (cached) embedding: the differences are what the faces add — HTTP/JSON
parsing, auth, the registry lookup, the extra hop. Errors are counted, never hidden.
"""

from __future__ import annotations

import asyncio
import secrets
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from engram.v1 import common_pb2, gateway_pb2_grpc, retrieval_pb2, retrieval_pb2_grpc

from services.bench.embedder import _free_port
from services.bench.report import markdown_table, percentile
from services.bench.retrieval import running_tier
from services.bench.synthetic import synthetic_drawers, synthetic_queries
from services.launcher.redis_supervisor import ensure_redis
from services.retrieval.core.drawer_jsonl import drawer_to_line
from services.runtime.grpc_client import ClientPolicy, create_channel

STORE = "bench-gateway"
N_RESULTS = 10
CONCURRENCY = (1, 16, 64)
# The gateway may add this much to a search's p50 at concurrency 1 (issue 6's target).
TARGET_OVERHEAD_MS = 3.0
PATHS = ("retrieval tier, gRPC", "gateway REST", "gateway gRPC")


@dataclass(frozen=True)
class Plan:
    drawers: int
    queries: int
    requests: int  # per path and concurrency

    @staticmethod
    def of(quick: bool) -> Plan:
        return Plan(300, 50, 60) if quick else Plan(2000, 400, 600)


Call = Callable[[str], Awaitable[int]]  # one search; returns the number of results


def _say(message: str) -> None:
    print(f"  [gateway] {message}", flush=True)


def summarise(latencies_ms: Sequence[float], errors: int, wall_s: float) -> dict[str, float]:
    return {
        "p50_ms": percentile(latencies_ms, 50),
        "p99_ms": percentile(latencies_ms, 99),
        "requests_per_s": len(latencies_ms) / wall_s if wall_s > 0 else 0.0,
        "errors": float(errors),
        "requests": float(len(latencies_ms) + errors),
    }


async def measure(call: Call, queries: Sequence[str], clients: int) -> dict[str, float]:
    """`queries` spread over `clients` concurrent callers, each sending back to back."""
    latencies: list[float] = []
    errors = 0

    async def caller(mine: Sequence[str]) -> None:
        nonlocal errors
        for text in mine:
            started = time.perf_counter()
            try:
                await call(text)
            except Exception:  # counted: a failure is a figure here, not a crash
                errors += 1
                continue
            latencies.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    await asyncio.gather(*(caller(queries[i::clients]) for i in range(clients)))
    return summarise(latencies, errors, time.perf_counter() - started)


class Paths:
    """One client per path, each reused by every request (as a real caller would)."""

    def __init__(self, retrieval: str, http_url: str, grpc_addr: str, token: str) -> None:
        policy = ClientPolicy(deadline_s=120)
        self._tier_channel = create_channel(retrieval, policy)
        self._tier = retrieval_pb2_grpc.RetrievalServiceStub(self._tier_channel)
        self._gateway_channel = create_channel(grpc_addr, policy)
        self._gateway = gateway_pb2_grpc.EngramStub(self._gateway_channel)
        self._metadata = (("authorization", f"Bearer {token}"),)
        limits = httpx.Limits(max_connections=128, max_keepalive_connections=128)
        self._http = httpx.AsyncClient(
            base_url=http_url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
            limits=limits,
        )
        # What the gateway's registry fills in for this store (a default-mode store).
        self._context = common_pb2.StoreContext(
            name=STORE,
            deployment_mode=common_pb2.DEPLOYMENT_MODE_DEFAULT,
            caller_tier=common_pb2.CALLER_TIER_READ,
        )

    def calls(self) -> dict[str, Call]:
        return {PATHS[0]: self.tier, PATHS[1]: self.rest, PATHS[2]: self.public_grpc}

    async def tier(self, text: str) -> int:
        request = retrieval_pb2.SearchRequest(store=self._context, query=text, n_results=N_RESULTS)
        answer: retrieval_pb2.SearchResponse = await self._tier.Search(request)
        return len(answer.results)

    async def rest(self, text: str) -> int:
        answer = await self._http.post(
            f"/v1/stores/{STORE}/search", json={"query": text, "n_results": N_RESULTS}
        )
        answer.raise_for_status()
        return len(answer.json()["results"])

    async def public_grpc(self, text: str) -> int:
        request = retrieval_pb2.SearchRequest(
            store=common_pb2.StoreContext(name=STORE), query=text, n_results=N_RESULTS
        )
        answer: retrieval_pb2.SearchResponse = await self._gateway.Search(
            request, metadata=self._metadata
        )
        return len(answer.results)

    async def create_store_and_fill(self, drawers: Sequence[common_pb2.Drawer]) -> None:
        created = await self._http.post("/v1/stores", json={"spec": {"name": STORE}})
        created.raise_for_status()
        jsonl = "".join(drawer_to_line(d) + "\n" for d in drawers).encode()
        imported = await self._http.post(
            f"/v1/stores/{STORE}/drawers:import",
            content=jsonl,
            headers={"Content-Type": "application/x-ndjson"},
        )
        imported.raise_for_status()

    async def aclose(self) -> None:
        await self._http.aclose()
        await self._tier_channel.close()
        await self._gateway_channel.close()


async def _bench(paths: Paths, plan: Plan) -> dict[str, Any]:
    drawers = synthetic_drawers(plan.drawers, seed=0)
    _say(f"importing {len(drawers)} drawers through REST (the tier embeds them)")
    started = time.perf_counter()
    await paths.create_store_and_fill(drawers)
    import_s = time.perf_counter() - started
    texts = [q.text for q in synthetic_queries(plan.queries, seed=3)]
    _say(f"warming the query cache with {len(texts)} queries")
    for text in texts:
        await paths.tier(text)
    requests = [texts[i % len(texts)] for i in range(plan.requests)]
    figures: dict[str, dict[str, dict[str, float]]] = {}
    for clients in CONCURRENCY:
        for name, call in paths.calls().items():
            _say(f"{name}: {len(requests)} searches, {clients} clients")
            figures.setdefault(str(clients), {})[name] = await measure(call, requests, clients)
    return {"drawers": len(drawers), "import_s": import_s, "figures": figures}


def run(quick: bool) -> dict[str, Any]:
    """Start the stack, measure the three paths, stop everything."""
    plan = Plan.of(quick)
    token = "egm_bench-" + secrets.token_urlsafe(24)
    with tempfile.TemporaryDirectory(prefix="engram-bench-gateway-") as tmp_name:
        tmp = Path(tmp_name)
        logs = tmp / "logs"
        redis_url = f"redis://127.0.0.1:{_free_port()}/0"
        redis = ensure_redis(redis_url, tmp / "redis", allow_start=True)
        common = {"ENGRAM_REDIS_URL": redis.url, "ENGRAM_GATEWAY_DATA_DIR": str(tmp / "data")}
        for tier in ("embedder", "retrieval", "corpus", "authoring"):
            common[f"ENGRAM_{tier.upper()}_DATA_DIR"] = str(tmp / "data" / tier)
        try:
            with running_tier(
                "embedder", {**common, "ENGRAM_EMBEDDER_ALLOW_CPU": "1"}, logs, 300
            ) as embedder:
                common["ENGRAM_EMBEDDER_ADDR"] = embedder
                with (
                    running_tier("retrieval", common, logs, 120) as retrieval,
                    running_tier("corpus", common, logs, 120) as corpus,
                ):
                    common.update(ENGRAM_RETRIEVAL_ADDR=retrieval, ENGRAM_CORPUS_ADDR=corpus)
                    with running_tier("authoring", common, logs, 120) as authoring:
                        grpc_port = _free_port()
                        gateway_env = {
                            **common,
                            "ENGRAM_AUTHORING_ADDR": authoring,
                            "ENGRAM_GATEWAY_ADMIN_TOKEN": token,
                            # The overhead measured, not the per-token limit's throttle.
                            "ENGRAM_GATEWAY_RATE_LIMIT_PER_S": "0",
                            "ENGRAM_GATEWAY_GRPC_PORT": str(grpc_port),
                            "ENGRAM_GATEWAY_LOG_LEVEL": "WARNING",
                        }
                        with running_tier("gateway", gateway_env, logs, 120) as gateway:

                            async def main() -> dict[str, Any]:
                                # Channels belong to the loop they are made on: make them here.
                                paths = Paths(
                                    retrieval, f"http://{gateway}", f"127.0.0.1:{grpc_port}", token
                                )
                                try:
                                    return await _bench(paths, plan)
                                finally:
                                    await paths.aclose()

                            results = asyncio.run(main())
        finally:
            if redis.process is not None:
                redis.process.terminate()
                redis.process.wait(timeout=10)
    results["markdown"] = render(results)
    return results


def render(results: dict[str, Any]) -> str:
    rows = []
    for clients, by_path in results["figures"].items():
        base = by_path[PATHS[0]]["p50_ms"]
        for name in PATHS:
            f = by_path[name]
            added = "" if name == PATHS[0] else f"{f['p50_ms'] - base:+.2f}"
            rows.append(
                [
                    clients,
                    name,
                    f["p50_ms"],
                    added,
                    f["p99_ms"],
                    f["requests_per_s"],
                    int(f["errors"]),
                ]
            )
    table = markdown_table(
        ["clients", "path", "p50 ms", "added p50 ms", "p99 ms", "req/s", "errors"], rows
    )
    return (
        "### Gateway overhead: search straight to the tier vs through the gateway\n\n"
        f"{results['drawers']} drawers (imported through REST in {results['import_s']:.1f} s); "
        "every query embedded once before timing, so each path pays the same cached "
        "embedding.\n\n" + table + "\n\n" + verdict(results)
    )


def verdict(results: dict[str, Any]) -> str:
    one = results["figures"][str(CONCURRENCY[0])]
    added = one[PATHS[1]]["p50_ms"] - one[PATHS[0]]["p50_ms"]
    most = results["figures"][str(CONCURRENCY[-1])]
    errors = sum(int(f["errors"]) for f in most.values())
    met = "met" if added <= TARGET_OVERHEAD_MS else "not met"
    held = "held" if errors == 0 else f"not held ({errors} errors)"
    return (
        f"REST adds {added:.2f} ms p50 at 1 client (target ≤ {TARGET_OVERHEAD_MS:g} ms: {met}); "
        f"{CONCURRENCY[-1]} concurrent clients: {held}."
    )
