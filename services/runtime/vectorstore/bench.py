"""Vector-store benchmark: write throughput and query latency, exact and after optimize.

`make bench` calls `bench_vector_store`; by hand:

    python -m services.runtime.vectorstore.bench --backend edge --n 10000 --dim 384

Numbers are printed, never asserted. Vectors are seeded Gaussian noise, which is harder for
HNSW than real embeddings (no cluster structure), so recall here is a floor.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt

from services.runtime.vectorstore import VectorPoint, VectorStore, open_vector_store

_COLLECTION = "bench"
_BATCH = 1000
_TOP_K = 10

BenchResult = dict[str, float | int | str]


def bench_vector_store(
    backend: str,
    n: int,
    dim: int,
    queries: int,
    *,
    path: Path | None = None,
    url: str = ":memory:",
    seed: int = 0,
) -> BenchResult:
    """Write `n` random `dim`-vectors, then time `queries` searches exact and after optimize.

    Edge uses `path` (a temporary folder when None); "qdrant" uses `url` (in-memory local
    mode by default). Returns upsert points/s, query p50/p99 in ms, optimize seconds and
    the ANN recall@10 against the exact results.
    """
    with tempfile.TemporaryDirectory(prefix="engram-bench-") as scratch:
        store_path = path if path is not None else Path(scratch)
        with open_vector_store(backend, path=store_path, url=url) as store:
            return _run(store, backend, n, dim, queries, seed)


def _run(
    store: VectorStore, backend: str, n: int, dim: int, queries: int, seed: int
) -> BenchResult:
    rng = np.random.default_rng(seed)
    data = rng.normal(size=(n, dim)).astype(np.float32)
    probes = rng.normal(size=(queries, dim)).astype(np.float32)
    store.drop_collection(_COLLECTION)
    store.ensure_collection(_COLLECTION, dim)

    started = time.perf_counter()
    for start in range(0, n, _BATCH):
        batch = [
            VectorPoint(f"b_{i}", data[i], {"shard": i % 8})
            for i in range(start, min(n, start + _BATCH))
        ]
        store.upsert(_COLLECTION, batch)
    upsert_s = time.perf_counter() - started

    exact_ms, exact_ids = _timed_searches(store, probes, exact=True)
    started = time.perf_counter()
    store.optimize(_COLLECTION)
    optimize_s = time.perf_counter() - started
    ann_ms, ann_ids = _timed_searches(store, probes, exact=False)
    recall = np.mean(
        [len(set(a) & set(e)) / max(1, len(e)) for a, e in zip(ann_ids, exact_ids, strict=True)]
    )
    store.drop_collection(_COLLECTION)
    return {
        "backend": backend,
        "n": n,
        "dim": dim,
        "queries": queries,
        "upsert_points_per_s": round(n / upsert_s, 1),
        "exact_p50_ms": _percentile(exact_ms, 50),
        "exact_p99_ms": _percentile(exact_ms, 99),
        "optimize_s": round(optimize_s, 3),
        "ann_p50_ms": _percentile(ann_ms, 50),
        "ann_p99_ms": _percentile(ann_ms, 99),
        f"ann_recall_at_{_TOP_K}": round(float(recall), 4),
    }


def _timed_searches(
    store: VectorStore, probes: npt.NDArray[np.float32], *, exact: bool
) -> tuple[list[float], list[list[str]]]:
    def search(probe: npt.NDArray[np.float32]) -> list[str]:
        hits = store.search(_COLLECTION, probe, limit=_TOP_K, exact=exact)
        return [hit.id for hit in hits]

    search(probes[0])  # warm caches and code paths before timing
    latencies_ms: list[float] = []
    results: list[list[str]] = []
    for probe in probes:
        started = time.perf_counter()
        results.append(search(probe))
        latencies_ms.append((time.perf_counter() - started) * 1000)
    return latencies_ms, results


def _percentile(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)), 3)


def main(argv: list[str] | None = None) -> None:
    """Run one benchmark from the command line and print its figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--backend", default="edge", choices=["edge", "qdrant"])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--url", default=":memory:", help="qdrant backend: server url")
    args = parser.parse_args(argv)
    result = bench_vector_store(args.backend, args.n, args.dim, args.queries, url=args.url)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
