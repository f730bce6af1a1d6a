"""Synthetic drawers and queries: deterministic, varied, and shaped like real drawers.

No model is loaded here; the embedding cache is tested with a stand-in path that is never
opened because every chunk is already cached.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

import services.embedder.core as embedder_core
from services.bench.synthetic import (
    MAX_WORDS,
    MIN_WORDS,
    ROOMS,
    cached_vectors,
    synthetic_drawers,
    synthetic_queries,
)
from services.retrieval.writes import DRAWER_ID
from services.vocabulary import DEFAULT_INTENTS, V2_TYPES


def test_the_same_seed_gives_the_same_drawers_and_another_seed_others() -> None:
    first, again = synthetic_drawers(300, seed=3), synthetic_drawers(300, seed=3)
    other = synthetic_drawers(300, seed=4)
    assert [d.SerializeToString() for d in first] == [d.SerializeToString() for d in again]
    assert [d.content for d in first] != [d.content for d in other]


def test_a_smaller_store_is_a_prefix_of_a_larger_one() -> None:
    small, large = synthetic_drawers(200), synthetic_drawers(1000)
    assert [d.id for d in small] == [d.id for d in large[:200]]
    assert [d.content for d in small] == [d.content for d in large[:200]]


def test_drawers_come_in_the_requested_count_with_unique_valid_ids_and_contents() -> None:
    drawers = synthetic_drawers(2000)
    assert len(drawers) == 2000
    ids = [d.id for d in drawers]
    assert len(set(ids)) == len(ids), "duplicate drawer ids"
    assert all(DRAWER_ID.match(i) for i in ids), "an id the retrieval tier would refuse"
    assert len({d.content for d in drawers}) == len(drawers), "duplicate contents"


def test_contents_are_one_to_three_sentences_within_the_word_range() -> None:
    for drawer in synthetic_drawers(2000):
        words = len(drawer.content.split())
        assert MIN_WORDS <= words <= MAX_WORDS, f"{words} words: {drawer.content!r}"
        assert 1 <= drawer.content.count(". ") + 1 <= 3, drawer.content
        assert drawer.content.endswith((".", "?")), drawer.content


def test_drawers_mix_every_type_many_rooms_and_all_pin_statuses() -> None:
    drawers = synthetic_drawers(2000)
    types = Counter(d.memory_type for d in drawers)
    assert set(types) == set(V2_TYPES), f"types seen: {sorted(types)}"
    assert max(types.values()) < 0.3 * len(drawers), f"one type dominates: {types}"
    rooms = Counter(d.room for d in drawers)
    assert set(rooms) == set(ROOMS)
    assert {d.wing for d in drawers} == {"projects", "work", "diary"}
    assert all(d.room.startswith(f"{d.wing}/") for d in drawers)
    pins = Counter(d.pin_status for d in drawers)
    assert pins.most_common(1)[0][0] == 1, f"active should be the most common: {pins}"
    assert len(pins) == 3, f"active, pinned and deprecated expected: {pins}"


def test_metadata_is_within_the_documented_ranges() -> None:
    drawers = synthetic_drawers(1000)
    assert all(0.2 <= d.salience <= 0.9 for d in drawers)
    assert len({d.added_by for d in drawers}) > 10
    created = [d.created_at.ToDatetime() for d in drawers]
    assert (max(created) - min(created)).days > 300, "created_at should spread over a year"
    for drawer in drawers:
        assert drawer.last_activity_at.ToDatetime() >= drawer.created_at.ToDatetime()
        if drawer.HasField("signature"):
            assert drawer.signature in drawer.content, "a signature must be verbatim"


def test_queries_are_distinct_new_sentences_covering_every_intent() -> None:
    queries = synthetic_queries(600)
    texts = [q.text for q in queries]
    assert len(set(texts)) == len(texts)
    contents = {d.content for d in synthetic_drawers(5000)}
    assert contents.isdisjoint(texts), "a query copies a drawer's text"
    assert {q.intent for q in queries} == set(DEFAULT_INTENTS)
    assert all(q.room in ROOMS and q.memory_types for q in queries)
    assert [q.text for q in synthetic_queries(600)] == texts


class _FakeModel:
    """Stands in for the embedding model: a deterministic row per text, and a call count."""

    def __init__(self) -> None:
        self.encoded: list[int] = []

    def encode(self, texts: list[str], batch_size: int) -> npt.NDArray[np.float32]:
        self.encoded.append(len(texts))
        return np.array([[len(t), sum(map(ord, t)) % 97] for t in texts], dtype=np.float32)


def test_cached_vectors_embeds_once_and_serves_a_prefix_from_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = _FakeModel()
    monkeypatch.setattr(embedder_core, "load_model", lambda *args, **kwargs: fake)
    texts = [d.content for d in synthetic_drawers(7)]
    model_path = tmp_path / "pkg" / "model"

    first = cached_vectors(texts, tmp_path / "cache", model_path=model_path, chunk_size=3)
    assert fake.encoded == [3, 3, 1]
    assert first.shape == (7, 2) and first.dtype == np.float32

    again = cached_vectors(texts[:6], tmp_path / "cache", model_path=model_path, chunk_size=3)
    assert fake.encoded == [3, 3, 1], "a cached prefix was embedded again"
    np.testing.assert_array_equal(again, first[:6])

    other_model = tmp_path / "pkg" / "other-model"
    cached_vectors(texts[:3], tmp_path / "cache", model_path=other_model, chunk_size=3)
    assert fake.encoded == [3, 3, 1, 3], "the cache must be keyed by the model too"


def test_cached_vectors_of_nothing_is_empty(tmp_path: Path) -> None:
    assert cached_vectors([], tmp_path, model_path=tmp_path / "m").shape[0] == 0


@pytest.mark.parametrize("count", [0, 1, 7])
def test_small_counts_work(count: int) -> None:
    assert len(synthetic_drawers(count)) == count
    assert len(synthetic_queries(count)) == count
