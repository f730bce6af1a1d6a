"""Fixtures for the vector-store suites: one store per backend, and a small seeded corpus."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from services.runtime.vectorstore import VectorPoint, VectorStore, open_vector_store

DIM = 16
COLLECTION = "drawers"

WINGS = ("eng", "ops", "hr")
MEMORY_TYPES = ("fact", "event", "diary", "decision")
PIN_STATUSES = ("pinned", "normal", "deprecated")


@dataclass(frozen=True)
class Corpus:
    """Points as written, plus their vectors as a matrix for numpy ground truth."""

    points: list[VectorPoint]
    matrix: npt.NDArray[np.float32]

    @property
    def ids(self) -> list[str]:
        return [point.id for point in self.points]

    def payload(self, point_id: str) -> dict[str, Any]:
        return next(point.payload for point in self.points if point.id == point_id)

    def ids_where(self, predicate: Callable[[dict[str, Any]], bool]) -> set[str]:
        return {point.id for point in self.points if predicate(point.payload)}

    def cosine_top_k(self, query: npt.NDArray[np.float32], k: int) -> list[tuple[str, float]]:
        """Brute-force cosine ranking in numpy: the ground truth for both backends."""
        norms = np.linalg.norm(self.matrix, axis=1) * np.linalg.norm(query)
        scores = (self.matrix @ query) / norms
        order = np.argsort(-scores, kind="stable")[:k]
        return [(self.points[i].id, float(scores[i])) for i in order]


def make_corpus(n: int = 60, dim: int = DIM, seed: int = 7) -> Corpus:
    """`n` points with arbitrary string ids and payloads shaped like drawers."""
    rng = np.random.default_rng(seed)
    matrix = rng.normal(size=(n, dim)).astype(np.float32)
    points = []
    for i in range(n):
        payload: dict[str, Any] = {
            "wing": WINGS[i % len(WINGS)],
            "room": i % 4,
            "memory_type": MEMORY_TYPES[i % len(MEMORY_TYPES)],
            "salience": round(i / n, 4),
            "active": i % 2 == 0,
            "session_id": f"s{i // 10}",
        }
        # Every fifth point has no pin status, to pin down how not-equals treats a missing key.
        if i % 5:
            payload["pin_status"] = PIN_STATUSES[i % len(PIN_STATUSES)]
        points.append(VectorPoint(f"d_{i:03d}_{rng.integers(1 << 32):08x}", matrix[i], payload))
    return Corpus(points, matrix)


def open_store(backend: str, tmp_path: Path) -> VectorStore:
    """A fresh store: Edge in `tmp_path`, qdrant-client in memory."""
    if backend == "edge":
        return open_vector_store("edge", path=tmp_path / "vectors")
    return open_vector_store("qdrant", path=None, url=":memory:")


@pytest.fixture(params=["edge", "qdrant"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VectorStore]:
    """An empty store of each backend, with the `drawers` collection created."""
    opened = open_store(request.param, tmp_path)
    opened.ensure_collection(COLLECTION, DIM)
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    """The seeded test corpus (60 points, 16 dims)."""
    return make_corpus()


@pytest.fixture
def filled(store: VectorStore, corpus: Corpus) -> VectorStore:
    """The store with the corpus written to `drawers`."""
    store.upsert(COLLECTION, corpus.points)
    return store
