"""One suite, two backends: Qdrant Edge and qdrant-client must behave the same.

Every test runs once per backend (the `store` fixture is parametrized) against the same
ground truth: the corpus as written and numpy's cosine. The last test also runs both
backends side by side and compares their answers directly.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from services.runtime.errors import InvalidInput, NotFound, Unavailable
from services.runtime.vectorstore import (
    FieldEquals,
    FieldIn,
    FieldNotEquals,
    FieldRange,
    Filter,
    VectorPoint,
    VectorStore,
    open_vector_store,
)
from tests.unit.runtime.vectorstore.conftest import COLLECTION, DIM, Corpus, open_store

SCORE_TOLERANCE = 1e-4


def test_upsert_then_retrieve_returns_string_ids_and_payloads(
    filled: VectorStore, corpus: Corpus
) -> None:
    wanted = [corpus.ids[5], "d_never_written", corpus.ids[0]]
    got = filled.retrieve(COLLECTION, wanted)
    assert [point.id for point in got] == [corpus.ids[5], corpus.ids[0]], (
        f"expected the two stored ids in request order, got {[point.id for point in got]}"
    )
    for point in got:
        assert point.payload == corpus.payload(point.id), (
            f"payload of {point.id}: expected {corpus.payload(point.id)}, got {point.payload}"
        )
        assert point.vector is None, "vectors were not asked for but came back"


def test_retrieve_with_vectors_returns_the_unit_normalised_vector(
    filled: VectorStore, corpus: Corpus
) -> None:
    (point,) = filled.retrieve(COLLECTION, [corpus.ids[3]], with_vectors=True)
    expected = corpus.matrix[3] / np.linalg.norm(corpus.matrix[3])
    assert point.vector is not None, "asked for the vector, got None"
    assert np.allclose(point.vector, expected, atol=1e-5), (
        f"expected the normalised vector {expected}, got {point.vector}"
    )


def test_upsert_of_an_existing_id_replaces_it_without_growing_the_count(
    filled: VectorStore, corpus: Corpus
) -> None:
    before = filled.count(COLLECTION)
    target = corpus.points[10]
    filled.upsert(COLLECTION, [VectorPoint(target.id, corpus.matrix[11], {"wing": "new"})])
    after = filled.count(COLLECTION)
    assert after == before == len(corpus.points), f"expected count {before}, got {after}"
    (point,) = filled.retrieve(COLLECTION, [target.id])
    assert point.payload == {"wing": "new"}, f"expected the payload replaced, got {point.payload}"
    top = filled.search(COLLECTION, corpus.matrix[11], limit=2, exact=True)
    assert {hit.id for hit in top} == {target.id, corpus.ids[11]}, (
        f"expected the replaced vector to match point 11 exactly, got {[h.id for h in top]}"
    )


def test_duplicate_ids_in_one_upsert_keep_the_last_point(store: VectorStore) -> None:
    vectors = np.eye(DIM, dtype=np.float32)
    store.upsert(
        COLLECTION,
        [VectorPoint("d_dup", vectors[0], {"v": 1}), VectorPoint("d_dup", vectors[1], {"v": 2})],
    )
    (point,) = store.retrieve(COLLECTION, ["d_dup"], with_vectors=True)
    assert point.payload == {"v": 2}, f"expected the last payload, got {point.payload}"
    assert point.vector is not None and np.allclose(point.vector, vectors[1]), (
        f"expected the last vector {vectors[1]}, got {point.vector}"
    )


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "default"])
def test_search_with_vectors_returns_each_hits_stored_vector(
    filled: VectorStore, corpus: Corpus, exact: bool
) -> None:
    query = np.random.default_rng(2).normal(size=DIM).astype(np.float32)
    plain = filled.search(COLLECTION, query, limit=5, exact=exact)
    hits = filled.search(COLLECTION, query, limit=5, exact=exact, with_vectors=True)
    assert [h.id for h in hits] == [h.id for h in plain], "vectors must not change the order"
    assert all(h.vector is None for h in plain), "vectors were not asked for but came back"
    for hit in hits:
        row = corpus.matrix[corpus.ids.index(hit.id)]
        expected = row / np.linalg.norm(row)
        assert hit.vector is not None and np.allclose(hit.vector, expected, atol=1e-5), hit.id


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "default"])
def test_reads_without_payloads_give_the_same_ids_scores_and_vectors(
    filled: VectorStore, corpus: Corpus, exact: bool
) -> None:
    query = np.random.default_rng(4).normal(size=DIM).astype(np.float32)
    full = filled.search(COLLECTION, query, limit=6, exact=exact, with_vectors=True)
    bare = filled.search(
        COLLECTION, query, limit=6, exact=exact, with_vectors=True, with_payload=False
    )
    assert [(h.id, round(h.score, 5)) for h in bare] == [(h.id, round(h.score, 5)) for h in full]
    assert all(h.payload == {} for h in bare), "payloads were left out but came back"
    assert all(h.payload for h in full), "the default read must keep the payloads"
    for with_, without in zip(full, bare, strict=True):
        assert without.vector is not None and with_.vector is not None
        assert np.allclose(without.vector, with_.vector), with_.id
    wanted = [corpus.ids[2], corpus.ids[7]]
    points = filled.retrieve(COLLECTION, wanted, with_vectors=True, with_payload=False)
    assert [p.id for p in points] == wanted and all(p.payload == {} for p in points), (
        f"expected {wanted} without payloads, got {[(p.id, p.payload) for p in points]}"
    )


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "default"])
def test_search_returns_cosine_order_and_scores(
    filled: VectorStore, corpus: Corpus, exact: bool
) -> None:
    query = np.random.default_rng(1).normal(size=DIM).astype(np.float32)
    hits = filled.search(COLLECTION, query, limit=10, exact=exact)
    expected = corpus.cosine_top_k(query, 10)
    assert [hit.id for hit in hits] == [pid for pid, _ in expected], (
        f"expected ids {[pid for pid, _ in expected]}, got {[hit.id for hit in hits]}"
    )
    for hit, (_, score) in zip(hits, expected, strict=True):
        assert abs(hit.score - score) < SCORE_TOLERANCE, (
            f"{hit.id}: expected cosine {score:.6f}, got {hit.score:.6f}"
        )
        assert hit.payload == corpus.payload(hit.id), f"{hit.id}: payload differs"


def test_exact_search_equals_brute_force_numpy_top_k(store: VectorStore) -> None:
    rng = np.random.default_rng(3)
    matrix = rng.normal(size=(300, DIM)).astype(np.float32)
    store.upsert(COLLECTION, [VectorPoint(f"p{i}", row, {}) for i, row in enumerate(matrix)])
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    for query in rng.normal(size=(5, DIM)).astype(np.float32):
        scores = unit @ (query / np.linalg.norm(query))
        expected = [f"p{i}" for i in np.argsort(-scores)[:15]]
        got = [hit.id for hit in store.search(COLLECTION, query, limit=15, exact=True)]
        assert got == expected, f"expected numpy's top 15 {expected}, got {got}"


FilterCase = tuple[Filter, Callable[[dict[str, Any]], bool]]

FILTER_CASES: dict[str, FilterCase] = {
    "equals-str": (Filter([FieldEquals("wing", "ops")]), lambda p: p["wing"] == "ops"),
    "equals-int": (Filter([FieldEquals("room", 2)]), lambda p: p["room"] == 2),
    "equals-bool": (Filter([FieldEquals("active", True)]), lambda p: p["active"] is True),
    "in-str": (
        Filter([FieldIn("memory_type", ["fact", "decision"])]),
        lambda p: p["memory_type"] in ("fact", "decision"),
    ),
    "in-int": (Filter([FieldIn("room", [0, 3])]), lambda p: p["room"] in (0, 3)),
    "not-equals-includes-missing-key": (
        Filter([FieldNotEquals("pin_status", "deprecated")]),
        lambda p: p.get("pin_status") != "deprecated",
    ),
    "not-equals-bool": (
        Filter([FieldNotEquals("active", True)]),
        lambda p: p["active"] is not True,
    ),
    "range-both-bounds": (
        Filter([FieldRange("salience", gte=0.25, lte=0.5)]),
        lambda p: 0.25 <= p["salience"] <= 0.5,
    ),
    "range-lower-bound": (
        Filter([FieldRange("salience", gte=0.8)]),
        lambda p: p["salience"] >= 0.8,
    ),
    "drawer-query": (
        Filter(
            [
                FieldEquals("wing", "eng"),
                FieldIn("memory_type", ["fact", "event", "decision"]),
                FieldNotEquals("pin_status", "deprecated"),
            ]
        ),
        lambda p: (
            p["wing"] == "eng"
            and p["memory_type"] in ("fact", "event", "decision")
            and p.get("pin_status") != "deprecated"
        ),
    ),
}


@pytest.mark.parametrize("case", list(FILTER_CASES), ids=list(FILTER_CASES))
def test_filters_select_exactly_the_matching_points(
    filled: VectorStore, corpus: Corpus, case: str
) -> None:
    flt, predicate = FILTER_CASES[case]
    expected = corpus.ids_where(predicate)
    assert expected, "the case must match something to prove anything"

    count = filled.count(COLLECTION, flt)
    assert count == len(expected), f"count: expected {len(expected)}, got {count}"

    page, _ = filled.scroll(COLLECTION, flt=flt, limit=1000)
    assert {point.id for point in page} == expected, (
        f"scroll: expected {sorted(expected)}, got {sorted(point.id for point in page)}"
    )

    hits = filled.search(COLLECTION, corpus.matrix[0], limit=1000, flt=flt, exact=True)
    assert {hit.id for hit in hits} == expected, (
        f"search: expected {sorted(expected)}, got {sorted(hit.id for hit in hits)}"
    )


def test_delete_removes_points_and_ignores_unknown_ids(filled: VectorStore, corpus: Corpus) -> None:
    gone = corpus.ids[:5]
    filled.delete(COLLECTION, [*gone, "d_never_written"])
    assert filled.count(COLLECTION) == len(corpus.points) - 5, "expected 5 points fewer"
    left = filled.retrieve(COLLECTION, gone)
    assert left == [], f"expected the deleted ids gone, got {[point.id for point in left]}"
    hits = filled.search(COLLECTION, corpus.matrix[0], limit=5, exact=True)
    assert corpus.ids[0] not in {hit.id for hit in hits}, "a deleted point still comes up"


def test_delete_by_filter_returns_how_many_it_deleted(filled: VectorStore, corpus: Corpus) -> None:
    flt = Filter([FieldEquals("session_id", "s2")])
    expected = corpus.ids_where(lambda p: p["session_id"] == "s2")
    deleted = filled.delete_by_filter(COLLECTION, flt)
    assert deleted == len(expected), f"expected {len(expected)} deleted, got {deleted}"
    assert filled.count(COLLECTION, flt) == 0, "points matching the filter remain"
    remaining = filled.count(COLLECTION)
    assert remaining == len(corpus.points) - len(expected), f"got {remaining} left"
    assert filled.delete_by_filter(COLLECTION, flt) == 0, "a second delete found points"


def test_delete_by_filter_without_conditions_is_refused(filled: VectorStore) -> None:
    with pytest.raises(InvalidInput, match="at least one condition"):
        filled.delete_by_filter(COLLECTION, Filter())
    assert filled.count(COLLECTION) > 0, "a refused delete must change nothing"


@pytest.mark.parametrize("with_filter", [False, True], ids=["all", "filtered"])
def test_scroll_pages_through_every_point_exactly_once(
    filled: VectorStore, corpus: Corpus, with_filter: bool
) -> None:
    flt = Filter([FieldEquals("active", True)]) if with_filter else None
    expected = corpus.ids_where(lambda p: p["active"]) if with_filter else set(corpus.ids)
    seen: list[str] = []
    offset: str | None = None
    for _ in range(100):
        page, offset = filled.scroll(COLLECTION, flt=flt, limit=7, offset=offset)
        assert len(page) <= 7, f"a page of limit 7 held {len(page)} points"
        seen.extend(point.id for point in page)
        if offset is None:
            break
    assert offset is None, "scroll did not finish within 100 pages"
    assert sorted(seen) == sorted(expected), (
        f"expected each of {len(expected)} ids once, got {len(seen)} ({len(set(seen))} distinct)"
    )


def test_scroll_with_a_forged_offset_is_refused(filled: VectorStore) -> None:
    with pytest.raises(InvalidInput, match="not a cursor"):
        filled.scroll(COLLECTION, offset="d_001")


def test_set_payload_merges_keys_into_existing_payloads(
    filled: VectorStore, corpus: Corpus
) -> None:
    ids = corpus.ids[:3]
    filled.set_payload(COLLECTION, ids, {"pin_status": "pinned", "reviewed": True})
    for point in filled.retrieve(COLLECTION, ids):
        expected = {**corpus.payload(point.id), "pin_status": "pinned", "reviewed": True}
        assert point.payload == expected, f"{point.id}: expected {expected}, got {point.payload}"


def test_set_payload_on_a_missing_id_raises_not_found_and_changes_nothing(
    filled: VectorStore, corpus: Corpus
) -> None:
    with pytest.raises(NotFound, match="d_never_written"):
        filled.set_payload(COLLECTION, [corpus.ids[0], "d_never_written"], {"flag": 1})
    (point,) = filled.retrieve(COLLECTION, [corpus.ids[0]])
    assert "flag" not in point.payload, f"expected no change, got {point.payload}"


def test_ensure_collection_is_idempotent_and_keeps_points(
    filled: VectorStore, corpus: Corpus
) -> None:
    filled.ensure_collection(COLLECTION, DIM)
    assert filled.count(COLLECTION) == len(corpus.points), "ensure_collection lost points"


def test_ensure_collection_with_another_dimension_raises_invalid_input(
    filled: VectorStore,
) -> None:
    with pytest.raises(InvalidInput, match=f"dimension {DIM}, not {DIM * 2}"):
        filled.ensure_collection(COLLECTION, DIM * 2)


@pytest.mark.parametrize(
    "vector",
    [np.ones(DIM + 1), np.zeros(DIM), np.full(DIM, np.nan)],
    ids=["wrong-dimension", "all-zeros", "nan"],
)
def test_a_bad_vector_is_refused_and_nothing_is_written(
    store: VectorStore, vector: np.ndarray[Any, Any]
) -> None:
    good = VectorPoint("d_good", np.ones(DIM), {})
    with pytest.raises(InvalidInput):
        store.upsert(COLLECTION, [good, VectorPoint("d_bad", vector, {})])
    assert store.count(COLLECTION) == 0, "a refused batch must write nothing"
    with pytest.raises(InvalidInput):
        store.search(COLLECTION, vector, limit=3)


def test_the_reserved_id_key_cannot_be_written(store: VectorStore) -> None:
    with pytest.raises(InvalidInput, match="reserved"):
        store.upsert(COLLECTION, [VectorPoint("d_1", np.ones(DIM), {"_id": "other"})])


def test_an_unknown_collection_raises_not_found(store: VectorStore) -> None:
    with pytest.raises(NotFound, match="does not exist"):
        store.count("nowhere")
    with pytest.raises(NotFound):
        store.search("nowhere", np.ones(DIM), limit=1)


def test_a_bad_collection_name_is_refused(store: VectorStore) -> None:
    with pytest.raises(InvalidInput, match="not allowed"):
        store.ensure_collection("../escape", DIM)


def test_collections_are_listed_and_dropped(store: VectorStore) -> None:
    store.ensure_collection("chunks", 8)
    assert store.collection_names() == ["chunks", COLLECTION], (
        f"expected both collections, got {store.collection_names()}"
    )
    store.drop_collection("chunks")
    store.drop_collection("chunks")  # dropping twice is not an error
    assert store.collection_names() == [COLLECTION], f"got {store.collection_names()}"
    store.ensure_collection("chunks", 32)  # a dropped name is free for any dimension
    assert store.count("chunks") == 0, "a re-created collection must start empty"


def test_optimize_keeps_every_point_findable(filled: VectorStore, corpus: Corpus) -> None:
    filled.optimize(COLLECTION)
    assert filled.count(COLLECTION) == len(corpus.points), "optimize changed the count"
    hits = filled.search(COLLECTION, corpus.matrix[7], limit=1)
    assert hits[0].id == corpus.ids[7], f"expected {corpus.ids[7]} first, got {hits[0].id}"


def test_a_closed_store_raises_unavailable(store: VectorStore) -> None:
    store.close()
    store.close()  # closing twice is harmless
    with pytest.raises(Unavailable, match="closed"):
        store.count(COLLECTION)


def test_both_backends_give_the_same_answers(tmp_path: Path, corpus: Corpus) -> None:
    stores = {backend: open_store(backend, tmp_path) for backend in ("edge", "qdrant")}
    flt = Filter([FieldIn("wing", ["eng", "hr"]), FieldRange("salience", lte=0.7)])
    query = np.random.default_rng(5).normal(size=DIM)
    answers: dict[str, tuple[object, ...]] = {}
    for backend, opened in stores.items():
        with opened:
            opened.ensure_collection(COLLECTION, DIM)
            opened.upsert(COLLECTION, corpus.points)
            opened.set_payload(COLLECTION, corpus.ids[:4], {"pin_status": "deprecated"})
            deleted = opened.delete_by_filter(COLLECTION, Filter([FieldEquals("room", 1)]))
            hits = opened.search(COLLECTION, query, limit=12, flt=flt, exact=True)
            answers[backend] = (
                deleted,
                opened.count(COLLECTION, flt),
                [(hit.id, round(hit.score, 4), hit.payload) for hit in hits],
            )
    assert answers["edge"] == answers["qdrant"], (
        f"edge answered {answers['edge']}\nqdrant answered {answers['qdrant']}"
    )


def test_an_unknown_backend_is_refused() -> None:
    with pytest.raises(InvalidInput, match="unknown vector store backend"):
        open_vector_store("faiss", path=None)
