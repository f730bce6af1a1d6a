"""The shared linear text classifier: its terms, the softmax fit, prediction and JSON."""

from __future__ import annotations

import numpy as np
import pytest

from services.runtime.textclass import (
    LinearTextClassifier,
    fit_classifier,
    fit_softmax,
    learn_vocabulary,
    text_terms,
)


def test_text_terms_are_words_and_adjacent_pairs() -> None:
    assert text_terms("Why is Staging rate-limited?") == {
        "why",
        "is",
        "staging",
        "rate",
        "limited",
        "why_is",
        "is_staging",
        "staging_rate",
        "rate_limited",
    }
    assert text_terms("It’s late") == {"it's", "late", "it's_late"}, "curly apostrophe folds"


def test_fit_softmax_separates_a_toy_problem_deterministically() -> None:
    features = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    labels = [0, 0, 1, 1]
    w1, b1 = fit_softmax(features, labels, 2, l2=1e-3, iterations=500)
    w2, b2 = fit_softmax(features, labels, 2, l2=1e-3, iterations=500)
    assert np.array_equal(w1, w2) and np.array_equal(b1, b2), "same data, same weights"
    predicted = (features @ w1 + b1).argmax(axis=1).tolist()
    assert predicted == labels, f"expected {labels}, got {predicted}"


def test_a_sample_weight_counts_a_row_as_that_many_copies() -> None:
    features = np.array([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    weighted, weighted_bias = fit_softmax(
        features, [0, 1, 1], 2, l2=1e-3, iterations=300, sample_weights=[1.0, 1.0, 3.0]
    )
    copied, copied_bias = fit_softmax(
        features[[0, 1, 2, 2, 2]], [0, 1, 1, 1, 1], 2, l2=1e-3, iterations=300
    )
    assert np.allclose(weighted, copied) and np.allclose(weighted_bias, copied_bias)
    for bad in ([1.0, 1.0], [1.0, 0.0, 1.0], [1.0, float("nan"), 1.0]):
        with pytest.raises(ValueError, match="3 positive numbers"):
            fit_softmax(features, [0, 1, 1], 2, l2=1e-3, iterations=1, sample_weights=bad)


def test_fit_classifier_learns_words_and_predicts_them() -> None:
    texts = ["the build crashed", "crashed again on start", "we plan the launch", "plan q3"]
    labels = ["bug", "bug", "plan", "plan"]
    vectors = np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0]])
    vocabulary, weights, bias = fit_classifier(
        texts, vectors, labels, ("bug", "plan"), l2=1e-3, min_term_texts=2
    )
    assert vocabulary == ("crashed", "plan", "the"), "only terms in two texts are learned"
    model = LinearTextClassifier(
        labels=("bug", "plan"), vocabulary=vocabulary, weights=weights, bias=bias, dimension=2
    )
    assert model.predict("crashed", np.array([0.5, 0.5]))[0] == "bug"
    assert model.top_terms("it crashed", "bug") == ["crashed"]
    assert model.accuracy(texts, list(vectors), labels) == 1.0
    assert learn_vocabulary(texts, 1)[0] == "again"


def test_mismatched_shapes_and_dimensions_are_refused() -> None:
    with pytest.raises(ValueError, match="do not match"):
        LinearTextClassifier(
            labels=("a", "b"),
            vocabulary=("x",),
            weights=np.zeros((2, 2)),
            bias=np.zeros(2),
            dimension=2,
        )
    model = LinearTextClassifier(
        labels=("a", "b"), vocabulary=(), weights=np.zeros((2, 2)), bias=np.zeros(2), dimension=2
    )
    with pytest.raises(ValueError, match="expects 2-dimensional embeddings, got 3"):
        model.features("text", np.zeros(3))
