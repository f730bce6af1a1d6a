"""Vector-store benchmarks: write throughput, query latency, ANN recall and index builds.

Run by hand (the engine-level figures behind decision 0005; `make bench` measures the tiers):

    python -m services.bench.vectorstore --backend edge --n 10000 --dim 384
    python -m services.bench.vectorstore --ann --vectors /tmp/engram-ann.npy --n 100000

`bench_vector_store` uses seeded Gaussian noise, which is harder for HNSW than real
embeddings (no cluster structure), so its recall is a floor. `bench_ann` uses real MiniLM
embeddings of synthetic drawers (`--embed` makes the file once; about 5 minutes per 100k on
the 2-core dev machine) and builds the index the way a serving process does, through
`IndexBuilder`, while it keeps searching and writing. Numbers are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import string
import tempfile
import threading
import time
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from services.runtime.vectorstore import (
    FieldEquals,
    Filter,
    VectorPoint,
    VectorStore,
    open_vector_store,
)
from services.runtime.vectorstore.edge import EdgeVectorStore
from services.runtime.vectorstore.indexing import DEFAULT_MIN_UNINDEXED_POINTS, IndexBuilder

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


# -- ANN on real embeddings ------------------------------------------------------------------

_ANN_COLLECTION = "bench_ann"
_INLINE_COLLECTION = "bench_inline"
_RECALL_KS = (10, 50)
# `room` takes 10 values uniformly: a filter on one of them keeps ~10% of the points.
_ROOMS = 10
_FILTER = Filter([FieldEquals("room", 3)])
_HEARTBEAT_S = 0.005
# Traffic during the build: a paced searcher (about what one busy agent session sends) and
# a writer. An unpaced searcher would take a core by itself and mostly measure contention.
_SEARCH_EVERY_S = 0.05
_WRITE_EVERY_S = 0.02


def bench_ann(
    n: int,
    queries: int,
    vectors_path: Path,
    *,
    path: Path | None = None,
    max_indexing_threads: int = 1,
    payload_index: bool = True,
    inline_optimize: bool = False,
) -> BenchResult:
    """Exact vs HNSW search on `n` real embeddings, and what the background build costs.

    `vectors_path` is a float32 .npy matrix (`write_ann_vectors` makes one): its first `n`
    rows are the drawers, its last `queries` rows the probes (new sentences, not drawers).
    Measures exact search p50/p99 with no filter and with a ~10% payload filter (on a field
    with a payload index unless `payload_index` is False), then builds the index with
    `IndexBuilder` (`max_indexing_threads` in the child, 0 = one per core) while a thread
    keeps searching and another keeps writing (their latencies, and the event loop's longest
    stall, are reported), then HNSW search p50/p99 and recall@10/@50 against exact,
    unfiltered and filtered. `inline_optimize` also times the in-process `optimize()` on a
    copy of the data, with the stall it causes to another thread.
    """
    matrix = np.load(vectors_path, mmap_mode="r")
    if n + queries > matrix.shape[0]:
        raise ValueError(
            f"{vectors_path} has {matrix.shape[0]} rows; {n} drawers + {queries} queries need"
            f" {n + queries}"
        )
    data = np.asarray(matrix[:n], dtype=np.float32)
    probes = np.asarray(matrix[matrix.shape[0] - queries :], dtype=np.float32)
    with tempfile.TemporaryDirectory(prefix="engram-bench-ann-") as scratch:
        store_path = path if path is not None else Path(scratch)
        with open_vector_store("edge", path=store_path) as store:
            return _run_ann(
                store, data, probes, max_indexing_threads, payload_index, inline_optimize
            )


def _run_ann(
    store: VectorStore,
    data: npt.NDArray[np.float32],
    probes: npt.NDArray[np.float32],
    threads: int,
    payload_index: bool,
    inline_optimize: bool,
) -> BenchResult:
    n, dim = data.shape
    result: BenchResult = {"n": n, "dim": dim, "queries": len(probes)}
    result["payload_index"] = str(payload_index)
    started = time.perf_counter()
    _fill_ann(store, _ANN_COLLECTION, data, payload_index)
    result["upsert_points_per_s"] = round(n / (time.perf_counter() - started), 1)

    exact: dict[tuple[bool, int], list[list[str]]] = {}
    for filtered in (False, True):
        for k in _RECALL_KS:
            latencies, exact[filtered, k] = _ann_searches(store, probes, k, filtered, exact=True)
            name = f"exact{'_filtered' if filtered else ''}_k{k}"
            result[f"{name}_p50_ms"] = _percentile(latencies, 50)
            result[f"{name}_p99_ms"] = _percentile(latencies, 99)

    builder = IndexBuilder(
        store,
        _ANN_COLLECTION,
        min_unindexed_points=min(n, DEFAULT_MIN_UNINDEXED_POINTS),
        min_interval_s=0,
        max_indexing_threads=threads,
    )
    result["build_indexing_threads"] = threads  # 0: one per core
    result.update(asyncio.run(_build_under_load(store, builder, probes, dim)))

    for filtered in (False, True):
        for k in _RECALL_KS:
            latencies, found = _ann_searches(store, probes, k, filtered, exact=False)
            name = f"hnsw{'_filtered' if filtered else ''}_k{k}"
            result[f"{name}_p50_ms"] = _percentile(latencies, 50)
            result[f"{name}_p99_ms"] = _percentile(latencies, 99)
            result[f"{name}_recall"] = _recall(found, exact[filtered, k])

    if inline_optimize:
        _fill_ann(store, _INLINE_COLLECTION, data, payload_index)
        with _Heartbeat() as heartbeat:
            started = time.perf_counter()
            store.optimize(_INLINE_COLLECTION)
            result["inline_optimize_s"] = round(time.perf_counter() - started, 3)
        result["inline_optimize_max_stall_ms"] = round(heartbeat.max_stall_s * 1000, 1)
        store.drop_collection(_INLINE_COLLECTION)
    store.drop_collection(_ANN_COLLECTION)
    return result


def _fill_ann(
    store: VectorStore, collection: str, data: npt.NDArray[np.float32], payload_index: bool
) -> None:
    store.drop_collection(collection)
    store.ensure_collection(collection, data.shape[1])
    if payload_index and isinstance(store, EdgeVectorStore):
        # Made while empty, as a tier should: cheap now, and in the HNSW graph later.
        store.ensure_payload_index(collection, "room", "integer")
    for start in range(0, len(data), _BATCH):
        batch = [
            VectorPoint(f"d_{i}", data[i], {"room": i % _ROOMS})
            for i in range(start, min(len(data), start + _BATCH))
        ]
        store.upsert(collection, batch)


async def _build_under_load(
    store: VectorStore, builder: IndexBuilder, probes: npt.NDArray[np.float32], dim: int
) -> BenchResult:
    """Run one background build while a searcher and a writer thread keep going."""
    stop = threading.Event()
    search_ms: list[float] = []
    write_ms: list[float] = []
    written: list[str] = []

    def searcher() -> None:
        i = 0
        while not stop.wait(_SEARCH_EVERY_S):
            started = time.perf_counter()
            exact = builder.use_exact(None)
            store.search(_ANN_COLLECTION, probes[i % len(probes)], limit=10, exact=exact)
            search_ms.append((time.perf_counter() - started) * 1000)
            i += 1

    def writer() -> None:
        rng = np.random.default_rng(1)
        while not stop.wait(_WRITE_EVERY_S):
            point_id = f"w_{len(written)}"
            vector = rng.normal(size=dim).astype(np.float32)
            started = time.perf_counter()
            store.upsert(_ANN_COLLECTION, [VectorPoint(point_id, vector, {"room": 0})])
            write_ms.append((time.perf_counter() - started) * 1000)
            written.append(point_id)

    loop_lag = 0.0

    async def heartbeat() -> None:
        nonlocal loop_lag
        while True:
            started = time.perf_counter()
            await asyncio.sleep(_HEARTBEAT_S)
            loop_lag = max(loop_lag, time.perf_counter() - started - _HEARTBEAT_S)

    threads = [threading.Thread(target=searcher), threading.Thread(target=writer)]
    for thread in threads:
        thread.start()
    beat = asyncio.create_task(heartbeat())
    try:
        report = await builder.build_in_background()
    finally:
        stop.set()
        beat.cancel()
        for thread in threads:
            thread.join()
    present = len(store.retrieve(_ANN_COLLECTION, written)) if written else 0
    store.delete(_ANN_COLLECTION, written)
    return {
        "build_total_s": report.total_s,
        "build_child_s": report.build_s,
        "optimize_s": report.optimize_s,
        "build_writes_paused_ms": round(report.writes_paused_s * 1000, 1),
        "build_load_ms": round(report.load_s * 1000, 1),
        "build_swap_paused_ms": round(report.swap_paused_s * 1000, 2),
        "build_replayed_ops": report.replayed_ops,
        "build_segments": report.segments,
        "build_indexed_vectors": report.indexed_vectors,
        "during_build_searches": len(search_ms),
        "during_build_search_p50_ms": _percentile(search_ms, 50),
        "during_build_search_p99_ms": _percentile(search_ms, 99),
        "during_build_search_max_ms": round(max(search_ms), 1),
        "during_build_writes": len(written),
        "during_build_writes_kept": present,
        "during_build_write_p99_ms": _percentile(write_ms, 99) if write_ms else 0.0,
        "during_build_write_max_ms": round(max(write_ms), 1) if write_ms else 0.0,
        "during_build_max_loop_stall_ms": round(loop_lag * 1000, 1),
    }


def _ann_searches(
    store: VectorStore,
    probes: npt.NDArray[np.float32],
    k: int,
    filtered: bool,
    *,
    exact: bool,
) -> tuple[list[float], list[list[str]]]:
    flt = _FILTER if filtered else None
    store.search(_ANN_COLLECTION, probes[0], limit=k, flt=flt, exact=exact)  # warm up
    latencies_ms: list[float] = []
    results: list[list[str]] = []
    for probe in probes:
        started = time.perf_counter()
        hits = store.search(_ANN_COLLECTION, probe, limit=k, flt=flt, exact=exact)
        latencies_ms.append((time.perf_counter() - started) * 1000)
        results.append([hit.id for hit in hits])
    return latencies_ms, results


def _recall(found: Sequence[list[str]], truth: Sequence[list[str]]) -> float:
    shares = [len(set(f) & set(t)) / max(1, len(t)) for f, t in zip(found, truth, strict=True)]
    return round(float(np.mean(shares)), 4)


class _Heartbeat:
    """A thread that ticks every 5 ms and records the longest it was kept from ticking."""

    def __init__(self) -> None:
        self.max_stall_s = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run)

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while True:
            started = time.perf_counter()
            if self._stop.wait(_HEARTBEAT_S):
                return
            self.max_stall_s = max(self.max_stall_s, time.perf_counter() - started - _HEARTBEAT_S)


def write_ann_vectors(path: Path, n: int, queries: int, *, seed: int = 1) -> None:
    """Embed `n` synthetic drawers then `queries` new synthetic sentences into `path` (.npy).

    Loads the bundled MiniLM on the CPU with every core; ~330 sentences/s on the dev machine.
    """
    from services.embedder.core import load_model, resolve_model_path

    drawers = synthetic_drawers(n, seed=seed)
    probes = synthetic_drawers(queries, seed=seed + 1, max_sentences=2, exclude=set(drawers))
    model = load_model(resolve_model_path(""), device="cpu", fp16=False, torch_threads=2)
    vectors = model.encode(drawers + probes, batch_size=64)
    np.save(path, vectors)


# -- synthetic drawers -----------------------------------------------------------------------
# Realistic-looking memory drawers for ANN measurements: 15 topics x 20 templates whose slots
# draw from shared vocabularies, 1-3 sentences per drawer, mostly on one topic. Real embeddings
# of these cluster by topic and template like real notes do, without being near-duplicates.

_VOCAB: dict[str, tuple[str, ...]] = {
    "name": (
        "Alice",
        "Bob",
        "Priya",
        "Chen",
        "Marta",
        "Jonas",
        "Aisha",
        "Diego",
        "Yuki",
        "Omar",
        "Sofia",
        "Liam",
        "Fatima",
        "Noah",
        "Elena",
        "Kwame",
        "Hana",
        "Lucas",
        "Ingrid",
        "Ravi",
        "Zoe",
        "Mateo",
        "Amara",
        "Felix",
        "Leila",
        "Tomasz",
        "Nadia",
        "Sven",
        "Grace",
        "Arjun",
    ),
    "day": (
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "yesterday",
        "last week",
        "this morning",
        "tonight",
        "the weekend",
        "next month",
    ),
    "month": (
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ),
    "city": (
        "Berlin",
        "Lisbon",
        "Tokyo",
        "Nairobi",
        "Toronto",
        "Austin",
        "Madrid",
        "Seoul",
        "Oslo",
        "Lima",
        "Mumbai",
        "Dublin",
        "Prague",
        "Cape Town",
        "Melbourne",
        "Montreal",
        "Hanoi",
    ),
    "n": tuple(str(v) for v in (2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 45, 60, 90)),
    "pct": tuple(f"{v}%" for v in (3, 5, 8, 10, 12, 15, 20, 25, 30, 40, 50, 70)),
    "money": (
        "$40",
        "$85",
        "$120",
        "$250",
        "$499",
        "$1,200",
        "$3,000",
        "$7,500",
        "$12,000",
        "$45,000",
        "€60",
        "€900",
    ),
    "time": ("7am", "8:30", "9am", "10:15", "noon", "2pm", "3:30", "5pm", "6pm", "9pm"),
    "service": (
        "auth service",
        "billing API",
        "search index",
        "payment gateway",
        "ingestion pipeline",
        "notification worker",
        "image resizer",
        "session store",
        "recommendation model",
        "export job",
        "rate limiter",
        "reporting dashboard",
        "webhook dispatcher",
        "feature flag service",
        "user profile API",
        "email sender",
    ),
    "tool": (
        "Postgres",
        "Redis",
        "Kafka",
        "Terraform",
        "Kubernetes",
        "gRPC",
        "Nginx",
        "Grafana",
        "Prometheus",
        "SQLite",
        "RabbitMQ",
        "Elasticsearch",
        "Docker",
        "GitHub Actions",
        "Sentry",
        "Airflow",
    ),
    "lang": ("Python", "Rust", "Go", "TypeScript", "Java", "Kotlin", "C++", "Elixir"),
    "bug": (
        "memory leak",
        "race condition",
        "deadlock",
        "timeout",
        "off-by-one error",
        "null pointer crash",
        "connection pool exhaustion",
        "clock skew issue",
        "encoding bug",
        "retry storm",
        "cache stampede",
        "stale read",
    ),
    "metric": (
        "p99 latency",
        "error rate",
        "CPU usage",
        "queue depth",
        "disk usage",
        "cache hit rate",
        "request throughput",
        "cold start time",
        "memory footprint",
    ),
    "team": (
        "platform team",
        "design team",
        "data team",
        "mobile team",
        "security team",
        "growth team",
        "infra team",
        "support team",
        "sales team",
        "finance team",
    ),
    "role": (
        "staff engineer",
        "product manager",
        "designer",
        "data scientist",
        "SRE",
        "engineering manager",
        "QA lead",
        "technical writer",
        "recruiter",
        "intern",
    ),
    "product": (
        "mobile app",
        "admin dashboard",
        "onboarding flow",
        "checkout page",
        "public API",
        "pricing page",
        "browser extension",
        "desktop client",
        "analytics portal",
    ),
    "feature": (
        "dark mode",
        "CSV export",
        "single sign-on",
        "offline sync",
        "bulk editing",
        "two-factor login",
        "saved searches",
        "audit log",
        "team invites",
        "usage alerts",
    ),
    "customer": (
        "Acme Corp",
        "Globex",
        "Initech",
        "Umbrella Health",
        "Stark Logistics",
        "Wayne Retail",
        "Hooli",
        "Soylent Foods",
        "Tyrell Labs",
        "Cyberdyne Energy",
    ),
    "dish": (
        "mushroom risotto",
        "lentil soup",
        "banana bread",
        "chicken curry",
        "pad thai",
        "shakshuka",
        "sourdough",
        "ramen",
        "vegetable lasagna",
        "fish tacos",
        "pancakes",
        "chili",
        "miso salmon",
        "apple pie",
    ),
    "ingredient": (
        "garlic",
        "ginger",
        "smoked paprika",
        "coriander",
        "fresh basil",
        "lemon zest",
        "coconut milk",
        "brown butter",
        "soy sauce",
        "cumin",
        "feta",
        "chickpeas",
    ),
    "exercise": (
        "5k run",
        "yoga class",
        "swim",
        "bike ride",
        "strength session",
        "hike",
        "climbing session",
        "pilates class",
        "rowing workout",
        "long walk",
    ),
    "body": ("left knee", "lower back", "right shoulder", "ankle", "wrist", "neck", "hip"),
    "relative": (
        "mom",
        "dad",
        "sister",
        "brother",
        "grandma",
        "uncle",
        "cousin",
        "daughter",
        "son",
        "partner",
        "aunt",
    ),
    "event": (
        "birthday party",
        "wedding",
        "graduation",
        "anniversary dinner",
        "family reunion",
        "school play",
        "housewarming",
        "baby shower",
    ),
    "book": (
        "a book on distributed systems",
        "a history of the Roman empire",
        "a thriller",
        "a biography of Ada Lovelace",
        "a novel set in Lagos",
        "a guide to sourdough",
        "a book about sleep science",
        "a collection of short stories",
        "a poetry anthology",
    ),
    "subject": (
        "linear algebra",
        "Spanish",
        "Japanese",
        "statistics",
        "music theory",
        "woodworking",
        "photography",
        "watercolor painting",
        "machine learning",
        "economics",
    ),
    "plant": (
        "tomatoes",
        "basil",
        "the lemon tree",
        "roses",
        "the fiddle leaf fig",
        "strawberries",
        "lavender",
        "the succulents",
        "zucchini",
        "the hedge",
    ),
    "room": ("kitchen", "garage", "bathroom", "attic", "living room", "basement", "bedroom"),
    "repair": (
        "the leaking tap",
        "the broken fence",
        "a cracked tile",
        "the squeaky door",
        "the dishwasher",
        "the boiler",
        "a blocked drain",
        "the garage door",
    ),
    "instrument": ("guitar", "piano", "violin", "drums", "cello", "ukulele", "saxophone"),
    "hobby": (
        "chess",
        "birdwatching",
        "pottery",
        "board games",
        "knitting",
        "astronomy",
        "rock climbing",
        "film photography",
        "bouldering",
    ),
    "transport": ("train", "flight", "ferry", "overnight bus", "rental car", "red-eye flight"),
    "expense": (
        "rent",
        "car insurance",
        "the electricity bill",
        "the phone plan",
        "gym membership",
        "school fees",
        "the mortgage",
        "streaming subscriptions",
        "internet bill",
    ),
    "doc": (
        "the lease",
        "the NDA",
        "the employment contract",
        "the tax return",
        "the passport",
        "the visa application",
        "the vendor agreement",
        "the insurance claim",
        "the will",
    ),
    "pet": ("the dog", "the cat", "the puppy", "the parrot", "the rabbit", "the goldfish"),
    "reason": (
        "the budget was cut",
        "nobody owned it",
        "it kept failing at night",
        "the customer asked twice",
        "it was cheaper",
        "the deadline moved",
        "it saves an hour a week",
        "the old one was deprecated",
        "legal asked for it",
    ),
}

_TOPICS: dict[str, tuple[str, ...]] = {
    "engineering": (
        "{name} refactored the {service} to use {tool} instead of the homegrown queue.",
        "The {service} is being rewritten in {lang} because {reason}.",
        "We found a {bug} in the {service} that only shows up under load.",
        "{name} prefers {lang} for new services and {tool} for storage.",
        "Code review for the {service} migration is waiting on {other}.",
        "The {service} tests take {n} minutes on CI; {name} wants them under five.",
        "Upgrading {tool} broke the {service} build on {day}.",
        "The {service} reads from {tool} and writes audit events to Kafka.",
        "{name} wrote a design doc for splitting the {service} into two parts.",
        "Flaky test in the {service} suite traced to a {bug}.",
        "We pinned {tool} to the previous version until the {bug} is fixed upstream.",
        "The {service} caches responses for {n} seconds to protect {tool}.",
        "{name} added tracing to the {service}; {metric} is now visible per endpoint.",
        "Schema migration for the {service} must run before the {day} deploy.",
        "{name} suggested batching writes to {tool} to cut {metric} by {pct}.",
        "The {lang} client for the {service} leaks connections when retries are on.",
        "Dependency bump of {tool} is blocked by a license review.",
        "The monorepo build for the {service} now uses remote caching.",
        "{name} paired with {other} on the {service} pagination fix.",
        "Feature branch for the {service} was merged after {n} review rounds.",
    ),
    "incidents": (
        "Incident on {day}: the {service} returned errors for {n} minutes.",
        "Root cause of the outage was a {bug} in the {service}.",
        "{metric} on the {service} spiked to {n} times normal after the deploy.",
        "{name} was on call and rolled back the {service} at {time}.",
        "The pager fired for {tool} disk usage above {pct} on {day}.",
        "Postmortem action item: add an alert on {metric} for the {service}.",
        "Failover of {tool} to the replica took {n} seconds longer than planned.",
        "Customers in {city} saw slow page loads because of the {service}.",
        "The runbook for the {service} was missing the step to drain {tool}.",
        "{name} declared a sev-2 when the {service} started dropping messages.",
        "A bad config push took down the {service} for {n} minutes.",
        "We rate limited one tenant who caused a {bug} in the {service}.",
        "The status page was updated {n} minutes after the {service} went down.",
        "Certificates for the {service} expired on {day} and broke logins.",
        "{other} is writing the postmortem for the {tool} outage.",
        "Error budget for the {service} is {pct} spent this quarter.",
        "Backups of {tool} were verified after the incident on {day}.",
        "The {service} autoscaler did not react because {metric} lagged.",
        "Alert fatigue: the {service} paged {n} times overnight for nothing.",
        "Chaos test showed the {service} survives losing one {tool} node.",
    ),
    "people": (
        "{name} joined the {team} as a {role} on {day}.",
        "We are hiring a {role} for the {team}; {name} is the hiring manager.",
        "{name} asked for feedback on their promotion case to {role}.",
        "Interview loop for the {role} candidate is scheduled for {day} at {time}.",
        "{name} is going on parental leave in {month}.",
        "{other} will mentor the new {role} during onboarding.",
        "The {team} offsite is planned for {month} in {city}.",
        "{name} mentioned feeling burned out after the {service} launch.",
        "One-on-one with {name}: they want to move to the {team}.",
        "{name} is leaving the company at the end of {month}.",
        "The {team} is shrinking from {n} to {n2} people after the reorg.",
        "Performance reviews for the {team} are due in {month}.",
        "{name} gave a great talk about {tool} at the all-hands.",
        "The candidate for {role} declined the offer because of salary.",
        "{name} and {other} do not get along on the {team}; keep an eye on it.",
        "Onboarding checklist for new hires now includes {tool} access.",
        "{name} is the new manager of the {team} starting {month}.",
        "Team lunch on {day} to welcome the new {role}.",
        "{name} wants to work four days a week from {month}.",
        "Referral bonus paid to {name} for the {role} hire.",
    ),
    "product": (
        "Users keep asking for {feature} in the {product}.",
        "{name} thinks {feature} should ship before the {product} redesign.",
        "The {product} conversion rate dropped {pct} after the last release.",
        "A/B test of the new {product} layout ends on {day}.",
        "Roadmap for {month}: {feature} and a faster {product}.",
        "The {team} wants {feature} gated behind a flag at first.",
        "Beta users of {feature} reported confusion about the settings page.",
        "{name} drafted the spec for {feature} in the {product}.",
        "We cut {feature} from the launch because {reason}.",
        "Churn interviews mention the {product} being slow on phones.",
        "The {product} now supports {feature} for enterprise plans only.",
        "Usability test: {n} of 8 people could not find {feature}.",
        "{name} wants to sunset the old {product} by {month}.",
        "Pricing change for the {product} goes live in {month}.",
        "Support tickets about {feature} doubled since {day}.",
        "Design review of the {product} empty states is on {day}.",
        "Analytics show {pct} of users never open the {product} settings.",
        "The {product} launch in {city} needs translated copy.",
        "{other} proposed a waitlist for {feature}.",
        "Dogfooding {feature} internally before the public {product} release.",
    ),
    "decisions": (
        "Decided to use {tool} for the {service} because {reason}.",
        "We agreed to freeze deploys of the {service} until {day}.",
        "Decision: the {team} owns the {service} from {month}.",
        "We will not build {feature} this quarter because {reason}.",
        "{name} decided to postpone the {product} launch to {month}.",
        "Meeting with the {team}: migrate off {tool} by {month}.",
        "The architecture board approved moving the {service} to {lang}.",
        "We chose the cheaper vendor for {tool} hosting, saving {money} a month.",
        "Agreed with {name} that the {service} gets an owner and an SLO.",
        "The standup moves to {time} starting {day}.",
        "We decided to keep {tool} after the benchmark showed only {pct} gain elsewhere.",
        "Budget for the {team} is capped at {money} for {month}.",
        "Retro outcome: fewer meetings on {day} for the {team}.",
        "{name} and {other} agreed to split the {service} work by endpoint.",
        "Decided against a rewrite; we will refactor the {service} in place.",
        "The {team} will adopt trunk-based development starting {month}.",
        "Security sign-off is now required before {feature} ships.",
        "We settled on weekly releases for the {product}.",
        "Vote in the planning meeting: {feature} first, then {feature2}.",
        "The quarterly goal is to reduce {metric} of the {service} by {pct}.",
    ),
    "support": (
        "{customer} reported that {feature} fails for their admins.",
        "{customer} wants a discount of {pct} to renew in {month}.",
        "Ticket from {customer}: the {product} logs them out every hour.",
        "{name} is the account manager for {customer}.",
        "{customer} threatened to churn over the {service} outage.",
        "Call with {customer} on {day} about their {product} rollout.",
        "{customer} asked for an SLA credit of {money}.",
        "{customer} has {n} seats and wants to add {n2} more.",
        "Escalation: {customer} cannot export data from the {product}.",
        "{customer} praised the support team in their quarterly review.",
        "The {customer} integration uses our {service} webhooks.",
        "{customer} needs {feature} before signing the contract.",
        "Renewal for {customer} is due in {month}; {name} owns it.",
        "{customer} found a {bug} in the public API and sent a repro.",
        "{name} promised {customer} a fix by {day}.",
        "{customer} is piloting the {product} in {city}.",
        "Support backlog is {n} tickets, mostly about {feature}.",
        "{customer} wants a dedicated {tool} instance for compliance.",
        "Churned: {customer} moved to a competitor because {reason}.",
        "{customer} signed a two-year deal worth {money}.",
    ),
    "finance": (
        "Paid {expense} of {money} on {day}.",
        "{expense} went up by {pct} this year.",
        "Set a monthly budget of {money} for groceries.",
        "Savings goal: put away {money} by {month}.",
        "{name} owes me {money} for the concert tickets.",
        "Cancelled {expense} to save {money} a month.",
        "The tax refund of {money} arrived in {month}.",
        "Moved {money} into the emergency fund.",
        "Split the dinner bill with {name}, {money} each.",
        "Reminder to pay {expense} before the {n}th.",
        "Invested {money} in an index fund in {month}.",
        "The accountant needs receipts for {expense} by {month}.",
        "Spent {money} on a new laptop for work.",
        "Bank charged a {money} fee by mistake; call them on {day}.",
        "Salary raise of {pct} takes effect in {month}.",
        "Credit card statement shows {money} on subscriptions.",
        "Lent {money} to my {relative} for the car repair.",
        "Holiday budget is {money} including flights.",
        "{expense} is now on autopay.",
        "Compared three offers for {expense}; the cheapest saves {money}.",
    ),
    "travel": (
        "Booked a {transport} to {city} for {month}.",
        "The hotel in {city} is near the old town and costs {money} a night.",
        "{name} recommended a small restaurant in {city}.",
        "Passport needs renewing before the {city} trip.",
        "The {transport} to {city} was delayed by {n} hours.",
        "Conference in {city} in {month}; {name} is speaking.",
        "Packed light for {city}: one bag and the laptop.",
        "Visa for {city} takes {n} days to process.",
        "Met {name} for coffee in {city} on {day}.",
        "Lost luggage on the {transport} back from {city}.",
        "Day trip from {city} to the coast with {name}.",
        "Travel insurance for {city} costs {money}.",
        "Jet lag after {city} lasted {n} days.",
        "{name} is visiting from {city} in {month}.",
        "Rented an apartment in {city} for {n} nights.",
        "The museum pass in {city} was worth it.",
        "Hiked above {city} at sunrise with {other}.",
        "Missed the {transport} in {city} and took the next one at {time}.",
        "Favourite street food in {city} was the grilled corn.",
        "Want to go back to {city} in {month} with my {relative}.",
    ),
    "cooking": (
        "Made {dish} with extra {ingredient}; it was great.",
        "The {dish} recipe needs {n} minutes in the oven.",
        "{name} taught me how to make {dish}.",
        "Out of {ingredient}; add it to the shopping list.",
        "Tried {dish} with {ingredient} instead of {ingredient2}.",
        "Meal prep on {day}: {dish} for the week.",
        "The {dish} burned because the oven runs hot.",
        "My {relative} loves {dish} with {ingredient}.",
        "Hosting dinner on {day}: {dish} and a salad.",
        "The {dish} from the place in {city} was better than mine.",
        "Halved the sugar in the {dish} and nobody noticed.",
        "{name} is allergic to {ingredient}; avoid it when cooking.",
        "Froze {n} portions of {dish}.",
        "Sourdough starter needs feeding every {n} hours.",
        "Bought a cast iron pan for {money}.",
        "The secret to good {dish} is {ingredient} at the end.",
        "Cooking class on {day} covers {dish}.",
        "Leftover {dish} keeps for {n} days in the fridge.",
        "{name} brought {dish} to the potluck.",
        "Grew enough {ingredient} for the whole summer.",
    ),
    "health": (
        "Did a {exercise} on {day}; felt strong.",
        "My {body} hurts after the {exercise}.",
        "Physio appointment for the {body} on {day} at {time}.",
        "Slept only {n} hours; need to go to bed earlier.",
        "Doctor said to rest the {body} for {n} days.",
        "Training plan: {exercise} three times a week until {month}.",
        "Blood test results are normal; next check in {month}.",
        "Started taking vitamin D in {month}.",
        "{name} and I signed up for a {exercise} in {city}.",
        "Resting heart rate dropped to {n2} this month.",
        "Dentist appointment on {day} at {time}.",
        "Skipped the {exercise} because the {body} was sore.",
        "Cut caffeine after {time} and sleep improved.",
        "The gym raised its price to {money} a month.",
        "Meditated for {n} minutes before work.",
        "Allergy season started; pollen is high in {month}.",
        "New running shoes fixed the {body} pain.",
        "Walked {n} thousand steps on {day}.",
        "Flu shot booked for {month}.",
        "Personal best on the {exercise} on {day}.",
    ),
    "family": (
        "My {relative}'s {event} is in {month}.",
        "Called my {relative} on {day}; they sound well.",
        "Need a gift for my {relative}'s {event}.",
        "My {relative} is moving to {city} in {month}.",
        "Picked up my {relative} from school at {time}.",
        "{pet} has a vet appointment on {day}.",
        "My {relative} started a new job in {city}.",
        "Family video call every {day} at {time}.",
        "My {relative} needs help with homework in {subject}.",
        "{pet} ate something odd and was sick on {day}.",
        "Planning the {event} with my {relative}; budget {money}.",
        "My {relative} is recovering from surgery on the {body}.",
        "Babysitter is booked for {day} evening.",
        "My {relative} visited for {n} days and we went to the lake.",
        "Walk {pet} twice a day while {name} is away.",
        "My {relative} recommended {book}.",
        "Photos from the {event} are in the shared album.",
        "My {relative} wants to learn {instrument}.",
        "{name} is the godparent at the {event} in {month}.",
        "My {relative} and I had an argument about money on {day}.",
    ),
    "learning": (
        "Reading {book}; halfway through.",
        "Studying {subject} for {n} minutes every morning.",
        "{name} recommended {book}.",
        "Signed up for an evening course on {subject} in {month}.",
        "Finished {book}; the ending was disappointing.",
        "Flashcards for {subject}: {n} new cards a day.",
        "The {subject} exam is on {day} at {time}.",
        "Online course on {subject} costs {money}.",
        "Book club on {day} is discussing {book}.",
        "Learned a trick in {lang} for faster string parsing.",
        "{name} tutors me in {subject} on {day}.",
        "Wrote a summary of {book} for the team wiki.",
        "Want to read {book} before {month}.",
        "Watched a lecture series on {subject}.",
        "Practising {subject} with an app on the {transport}.",
        "The library hold for {book} is ready.",
        "{name} and I are learning {subject} together.",
        "Gave up on {book} after {n} chapters.",
        "Certificate in {subject} arrives in {month}.",
        "Podcast episode about {subject} was excellent.",
    ),
    "home": (
        "Watered {plant} on {day}; the soil was dry.",
        "Need to fix {repair} in the {room}.",
        "The plumber is coming on {day} at {time} for {repair}.",
        "Planted {plant} in the back garden in {month}.",
        "Painted the {room} a pale green.",
        "{plant} got aphids; sprayed with soapy water.",
        "Landlord agreed to pay for {repair}.",
        "Bought shelves for the {room} for {money}.",
        "{name} helped me move the sofa into the {room}.",
        "The {room} smells damp; check for mould.",
        "Harvested {plant} on {day}.",
        "Quote for {repair} was {money}.",
        "Decluttered the {room} and donated {n} bags.",
        "Smoke alarm in the {room} needs a new battery.",
        "Pruned {plant} before the frost in {month}.",
        "Neighbour {name} borrowed the ladder on {day}.",
        "Compost bin is full; turn it on {day}.",
        "New lock on the {room} door; spare key is with {name}.",
        "Electricity went out in the {room} on {day}.",
        "{plant} needs repotting in {month}.",
    ),
    "hobbies": (
        "Practised {instrument} for {n} minutes on {day}.",
        "Band rehearsal on {day} at {time} with {name}.",
        "Learning a new piece on the {instrument}.",
        "Chess club meets on {day}; I lost twice.",
        "Bought a second-hand {instrument} for {money}.",
        "{name} got me into {hobby}.",
        "Spent {day} on {hobby} with {other}.",
        "The {hobby} meetup in {city} is in {month}.",
        "My {instrument} teacher says to slow down.",
        "Joined a {hobby} group with {n} members.",
        "Entered a {hobby} competition in {month}.",
        "Recorded a cover song on the {instrument}.",
        "Gear for {hobby} cost more than expected: {money}.",
        "{name} plays {instrument} in a jazz trio.",
        "Went {hobby} with {name} on {day}; great weather.",
        "Tuned the {instrument} before the concert on {day}.",
        "Want to take {hobby} more seriously this year.",
        "Open mic in {city} on {day}; played {n} songs.",
        "Lesson with {name} on {instrument} moved to {time}.",
        "Sold the old {instrument} to {other}.",
    ),
    "admin": (
        "Renew {doc} before {month}.",
        "Signed {doc} on {day}.",
        "Lawyer is reviewing {doc}; fee is {money}.",
        "Scanned {doc} and saved it to the shared drive.",
        "{name} needs a copy of {doc}.",
        "Deadline for {doc} is the end of {month}.",
        "The notary appointment for {doc} is on {day} at {time}.",
        "Filed {doc} online; confirmation number is in email.",
        "{doc} was rejected because a page was missing.",
        "Asked {name} to witness {doc}.",
        "Updated my address on {doc} after moving to {city}.",
        "Insurance renewal for the car is {money} this year.",
        "Keep {doc} in the fireproof box.",
        "The council replied about the parking permit on {day}.",
        "{doc} expires in {month}; set a reminder.",
        "HR asked for {doc} before the start date.",
        "Paid {money} in fees for {doc}.",
        "{other} from legal flagged a clause in {doc}.",
        "Translation of {doc} for {city} costs {money}.",
        "Shredded old bank statements except for {doc}.",
    ),
}

# Slot names that reuse another vocabulary (a second person, a second number, ...).
_ALIASES = {"other": "name", "n2": "n", "feature2": "feature", "ingredient2": "ingredient"}
_FORMATTER = string.Formatter()


def synthetic_drawers(
    n: int, *, seed: int = 0, max_sentences: int = 3, exclude: Collection[str] = ()
) -> list[str]:
    """`n` distinct synthetic drawer texts of 1..max_sentences sentences, none in `exclude`.

    Deterministic per seed. Texts are distinct because identical texts embed identically,
    and tied scores make recall against exact search ambiguous.
    """
    rng = random.Random(seed)
    topics = sorted(_TOPICS)
    sizes = list(range(1, max_sentences + 1))
    weights = [0.45, 0.35, 0.2][:max_sentences]
    seen = set(exclude)
    texts: list[str] = []
    while len(texts) < n:
        topic = rng.choice(topics)
        sentences = []
        for _ in range(rng.choices(sizes, weights)[0]):
            # Most drawers stay on one topic; some wander, as real notes do.
            source = topic if rng.random() < 0.85 else rng.choice(topics)
            sentences.append(_fill(rng.choice(_TOPICS[source]), rng))
        text = " ".join(sentences)
        if text not in seen:
            seen.add(text)
            texts.append(text)
    return texts


def _fill(template: str, rng: random.Random) -> str:
    values: dict[str, str] = {}
    for _, slot, _, _ in _FORMATTER.parse(template):
        if slot and slot not in values:
            vocabulary = _VOCAB[_ALIASES.get(slot, slot)]
            values[slot] = rng.choice(vocabulary)
    return template.format(**values)


def main(argv: list[str] | None = None) -> None:
    """Run one benchmark from the command line and print its figures as JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else "")
    parser.add_argument("--backend", default="edge", choices=["edge", "qdrant"])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--url", default=":memory:", help="qdrant backend: server url")
    parser.add_argument("--ann", action="store_true", help="run bench_ann (edge, real vectors)")
    parser.add_argument("--vectors", type=Path, help="--ann: the .npy of embeddings")
    parser.add_argument("--embed", action="store_true", help="--ann: write --vectors first")
    parser.add_argument("--inline-optimize", action="store_true")
    parser.add_argument("--indexing-threads", type=int, default=1, help="0: one per core")
    parser.add_argument("--no-payload-index", action="store_true")
    args = parser.parse_args(argv)
    if args.ann:
        if args.vectors is None:
            parser.error("--ann needs --vectors")
        if args.embed:
            write_ann_vectors(args.vectors, args.n, args.queries)
        result = bench_ann(
            args.n,
            args.queries,
            args.vectors,
            max_indexing_threads=args.indexing_threads,
            payload_index=not args.no_payload_index,
            inline_optimize=args.inline_optimize,
        )
    else:
        result = bench_vector_store(args.backend, args.n, args.dim, args.queries, url=args.url)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
