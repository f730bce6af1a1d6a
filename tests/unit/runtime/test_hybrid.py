"""A collection kept in Qdrant and its FTS5 sidecar: repair on open, and the fused search that
ranks both engines' candidates together."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from services.runtime.fts import FtsIndex
from services.runtime.hybrid import HybridCollection
from services.runtime.vectorstore import VectorPoint, VectorStore, open_vector_store

DIMENSION = 4


def _unit(*values: float) -> np.ndarray[Any, np.dtype[np.float32]]:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def _row(point_id: str, payload: dict[str, Any]) -> dict[str, str]:
    return {"id": point_id, "content": payload["text"]}


@pytest.fixture
def vectors(tmp_path: Path) -> Iterator[VectorStore]:
    store = open_vector_store("edge", path=tmp_path / "vectors")
    yield store
    store.close()


def _collection(vectors: VectorStore, path: Path) -> HybridCollection:
    keywords = FtsIndex(path, columns=("content",))
    return HybridCollection(vectors, "things", DIMENSION, keywords=keywords, keyword_row=_row)


def _points() -> list[VectorPoint]:
    return [
        VectorPoint("near", _unit(1, 0, 0, 0), {"text": "the nightly export job"}),
        VectorPoint("named", _unit(0, 1, 0, 0), {"text": "settle_ledger runs the ledger"}),
        VectorPoint("far", _unit(0, 0, 1, 0), {"text": "unrelated gardening notes"}),
    ]


def test_reconcile_rebuilds_a_lost_sidecar_and_drops_orphans(
    vectors: VectorStore, tmp_path: Path
) -> None:
    collection = _collection(vectors, tmp_path / "k.sqlite")
    collection.upsert(_points())
    assert collection.keywords is not None
    with collection.keywords.transaction():
        collection.keywords.upsert([{"id": "ghost", "content": "a row with no point"}])
    collection.keywords.close()

    (tmp_path / "k.sqlite").unlink()
    reopened = _collection(vectors, tmp_path / "k.sqlite")
    payloads, report = reopened.reconcile()
    assert sorted(payloads) == ["far", "named", "near"]
    assert (report.points, report.keyword_rows_restored, report.keyword_rows_dropped) == (3, 3, 0)
    assert reopened.keyword_search("ledger", limit=5).ids == ["named"]

    assert reopened.keywords is not None
    with reopened.keywords.transaction():
        reopened.keywords.upsert([{"id": "ghost", "content": "a row with no point"}])
    _, again = reopened.reconcile()
    assert (again.keyword_rows_restored, again.keyword_rows_dropped) == (0, 1)
    assert reopened.keyword_search("point", limit=5).ids == []
    reopened.close()


def test_fused_search_reads_a_keyword_only_hits_cosine_from_its_vector(
    vectors: VectorStore, tmp_path: Path
) -> None:
    collection = _collection(vectors, tmp_path / "k.sqlite")
    collection.upsert(_points())
    query = _unit(1, 0.8, 0, 0)
    dense_only = collection.search_fused(query, "zzz", limit=3, depth=1)
    assert [(h.id, h.keyword_hit) for h in dense_only] == [("near", False)]

    hits = collection.search_fused(query, "settle_ledger", limit=3, depth=1)
    by_id = {h.id: h for h in hits}
    assert set(by_id) == {"near", "named"}, "depth 1 per engine: one dense, one keyword hit"
    named = by_id["named"]
    assert named.keyword_hit
    assert named.similarity == pytest.approx(float(np.dot(query, _unit(0, 1, 0, 0))), abs=1e-5)
    assert named.score > named.similarity
    assert hits[0].id == "named", "a full keyword match outranks a slightly closer vector"
    collection.close()


@pytest.mark.parametrize("shared", [False, True], ids=["own engine", "shared server"])
def test_a_drop_keeping_shared_state_keeps_only_a_shared_engines_collection(
    vectors: VectorStore, tmp_path: Path, shared: bool
) -> None:
    """A store moving off a replica drops with keep_shared: a collection on a server every
    replica sees stays for the store's new replica; one in the replica's own engine goes."""
    collection = _collection(vectors, tmp_path / "keywords.sqlite")
    collection.upsert(_points())
    vectors.shared = shared  # what a Qdrant server store says of itself
    collection.drop(keep_shared=True)
    kept = "things" in vectors.collection_names()
    assert kept is shared, f"shared={shared}: the collection {'was' if kept else 'was not'} kept"
    collection.drop()
    assert "things" not in vectors.collection_names(), "a plain drop deletes it either way"
