"""The intent classifier's pure parts: sure vs mixture, the shipped
models and their freshness against the labelled data."""

from __future__ import annotations

import numpy as np
import pytest

from services.retrieval.core.constants import INTENT_CONFIDENT, INTENT_MIXTURE_MIN
from services.retrieval.core.intent import IntentModel, load_intent_model
from services.retrieval.intent_training import (
    HELD_OUT_THESIS,
    THESIS_DIR,
    THESIS_QUERY_WEIGHT,
    data_files,
    load_queries,
    thesis_files,
    thesis_queries,
)
from services.runtime.textclass_training import data_digest
from services.vocabulary import library_for


def _two_word_model(strength: float, fingerprint: str = "") -> IntentModel:
    """A 2-dimensional model over the default intents: 'crash' → debugging, 'plan' → planning.
    The embedding part is ignored (zero weights)."""
    intents = library_for("default").intents
    vocabulary = ("crash", "plan")
    weights = np.zeros((2 + len(vocabulary), len(intents)))
    weights[2, intents.index("debugging")] = strength
    weights[3, intents.index("planning")] = strength
    return IntentModel(
        library="default",
        labels=intents,
        vocabulary=vocabulary,
        weights=weights,
        bias=np.zeros(len(intents)),
        dimension=2,
        metadata={"embedding_fingerprint": fingerprint} if fingerprint else {},
    )


def test_a_sure_guess_is_used_alone_with_its_reasons() -> None:
    guess = _two_word_model(20.0).classify("the crash again", np.array([1.0, 0.0]))
    assert guess.intent == "debugging" and guess.weights is None, guess
    assert guess.confidence >= INTENT_CONFIDENT
    assert any("crash" in reason for reason in guess.reasons), guess.reasons


def test_an_unsure_guess_is_a_mixture_of_the_likely_intents() -> None:
    # One word each for planning and debugging at equal strength: a near tie between them.
    guess = _two_word_model(3.0).classify("plan for the crash", np.array([1.0, 0.0]))
    assert guess.weights is not None, f"expected a mixture, got {guess}"
    assert set(guess.weights) == {"planning", "debugging"}, guess.weights
    assert sum(guess.weights.values()) == pytest.approx(1.0)
    assert all(w >= INTENT_MIXTURE_MIN for w in guess.weights.values())
    assert any("mixture" in reason for reason in guess.reasons), guess.reasons


def test_a_model_refuses_an_embedding_of_the_wrong_dimension() -> None:
    with pytest.raises(ValueError, match="2-dimensional"):
        _two_word_model(1.0).probabilities("plan", np.zeros(384))


def test_another_models_query_vector_is_set_aside_and_the_words_decide() -> None:
    """A store embedded by another model (another dimension, or a fingerprint the classifier
    was not trained on) still gets an intent: from the query's words, saying so."""
    model = _two_word_model(20.0, fingerprint="aaaa")
    for vector, fingerprint in ((np.zeros(384), ""), (np.array([1.0, 0.0]), "bbbb")):
        guess = model.classify("the crash again", vector, fingerprint=fingerprint)
        assert guess.intent == "debugging", guess
        assert any(r.startswith("words only") and "retrain" in r for r in guess.reasons), guess
    same = model.classify("the crash again", np.array([1.0, 0.0]), fingerprint="aaaa")
    assert not any(r.startswith("words only") for r in same.reasons), same.reasons


def test_the_shipped_models_name_the_embedding_model_they_were_trained_on() -> None:
    for library in ("default", "companion"):
        assert load_intent_model(library).metadata.get("embedding_fingerprint"), library


def test_model_json_round_trip_keeps_every_probability() -> None:
    model = _two_word_model(2.0)
    again = IntentModel.from_json(model.to_json())
    vector = np.array([0.3, 0.7])
    assert again.probabilities("plan a crash", vector) == pytest.approx(
        model.probabilities("plan a crash", vector), abs=1e-6
    )


@pytest.mark.parametrize("library", ["default", "companion"])
def test_the_shipped_model_covers_its_library(library: str) -> None:
    model = load_intent_model(library)
    assert model.intents == library_for(library).intents
    assert model.dimension == 384, "trained on the bundled all-MiniLM-L6-v2"
    assert model.metadata["validation_accuracy"] >= 0.8, model.metadata


@pytest.mark.parametrize("library", ["default", "companion"])
def test_the_shipped_model_is_trained_on_the_current_labelled_data(library: str) -> None:
    shipped = load_intent_model(library).metadata["data_sha256"]
    current = data_digest(data_files(library))
    assert shipped == current, (
        f"eval/sets/intent (or, for companion, eval/sets/thesis) changed since the {library} "
        "intent model was trained: "
        "run `engram intent-model train` and commit the model"
    )


@pytest.mark.parametrize("library", ["default", "companion"])
def test_the_labelled_sets_are_large_and_split(library: str) -> None:
    queries = load_queries(library)
    for intent in library_for(library).intents:
        train = [q for q in queries if q.label == intent and q.split == "train"]
        validation = [q for q in queries if q.label == intent and q.split == "validation"]
        assert len(train) >= 100 and len(validation) >= 20, (intent, len(train), len(validation))
    texts = [q.text.lower() for q in queries]
    assert len(texts) == len(set(texts)), "a query text appears twice"
    validation_texts = {q.text.lower() for q in queries if q.split == "validation"}
    train_texts = {q.text.lower() for q in queries if q.split == "train"}
    assert not validation_texts & train_texts, "a validation query is also a training query"


def test_thesis_queries_train_only_the_libraries_they_were_measured_to_help() -> None:
    companion = thesis_queries("companion")
    assert len(companion) >= 200, "the companion thesis sets' labelled queries"
    assert {q.split for q in companion} == {"train"}, "a thesis query is never validation"
    assert {q.weight for q in companion} == {THESIS_QUERY_WEIGHT["companion"]}
    assert set(thesis_files("companion")) <= set(data_files("companion")), "in the digest"
    assert thesis_queries("default") == [] and thesis_files("default") == []


def test_a_held_out_thesis_set_never_trains_the_classifier() -> None:
    held = {path.stem for path in THESIS_DIR.glob("companion_*.json")} & HELD_OUT_THESIS
    assert held, "a companion thesis set is kept out of training"
    assert not held & {path.stem for path in thesis_files("companion")}
