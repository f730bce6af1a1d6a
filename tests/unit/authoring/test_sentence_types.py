"""The composer's shipped sentence type classifiers: their labels, their accuracy on the
validation split, their freshness against the labelled sentences, and the data's shape."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from services.authoring.core.sentence_types import (
    NOT_A_MEMORY,
    SentenceTypeModel,
    load_type_model,
    type_labels,
)
from services.authoring.type_training import (
    data_files,
    load_sentences,
    prior_files,
    session_prior,
)
from services.runtime.textclass_training import data_digest
from services.vocabulary import COMPANION_TYPES, V2_TYPES

LIBRARIES = ["default", "companion"]


def test_the_labels_are_the_librarys_new_types_and_not_a_memory() -> None:
    assert type_labels("default") == (*V2_TYPES, NOT_A_MEMORY)
    assert type_labels("companion") == (*COMPANION_TYPES, NOT_A_MEMORY)


@pytest.mark.parametrize("library", LIBRARIES)
def test_the_shipped_model_covers_its_library_and_meets_the_bar(library: str) -> None:
    model = load_type_model(library)
    assert model.labels == type_labels(library)
    assert model.dimension == 384, "trained on the bundled all-MiniLM-L6-v2"
    assert model.metadata["validation_accuracy"] >= 0.8, model.metadata
    again = SentenceTypeModel.from_json(model.to_json())
    assert again.vocabulary == model.vocabulary and again.labels == model.labels


@pytest.mark.parametrize("library", LIBRARIES)
def test_the_shipped_model_is_trained_on_the_current_labelled_data(library: str) -> None:
    shipped = load_type_model(library).metadata["data_sha256"]
    assert shipped == data_digest(data_files(library)), (
        f"eval/sets/types changed since the {library} sentence type model was trained: "
        "run `engram type-model train` and commit the model"
    )


@pytest.mark.parametrize("library", LIBRARIES)
def test_the_labelled_sentences_are_large_balanced_and_split(library: str) -> None:
    rows = load_sentences(library)
    assert len(rows) >= 400, f"{library}: {len(rows)} labelled sentences"
    for label in type_labels(library):
        train = [r for r in rows if r.label == label and r.split == "train"]
        validation = [r for r in rows if r.label == label and r.split == "validation"]
        assert len(train) >= 50 and len(validation) >= 20, (label, len(train), len(validation))
    validation_texts = {r.text.lower() for r in rows if r.split == "validation"}
    train_texts = {r.text.lower() for r in rows if r.split == "train"}
    assert not validation_texts & train_texts, "a validation sentence is also a training one"


def _model_with(library: str, probabilities: dict[str, float]) -> SentenceTypeModel:
    """A model whose every sentence gets `probabilities` (its bias; no features)."""
    labels = type_labels(library)
    bias = np.log([probabilities.get(label, 1e-9) for label in labels])
    return SentenceTypeModel(
        library=library, labels=labels, vocabulary=(), weights=np.zeros((4, len(labels))),
        bias=bias, dimension=4,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("probabilities", "label"),
    [
        # a fact whose probability is spread over speech acts is kept as the likeliest one
        ({"none": 0.34, "observation": 0.30, "opinion": 0.26, "want": 0.1}, "observation"),
        ({"none": 0.49, "want": 0.26, "preference": 0.25}, "want"),
        # "none" wins only when it is likelier than any memory at all
        ({"none": 0.51, "observation": 0.49}, NOT_A_MEMORY),
    ],
)  # fmt: skip
def test_a_companion_sentence_is_dropped_only_when_not_a_memory_is_likelier_than_a_memory(
    probabilities: dict[str, float], label: str
) -> None:
    assert _model_with("companion", probabilities).classify("some words", None) == label


def test_the_default_library_keeps_the_likeliest_label() -> None:
    spread = {"none": 0.3, "observation": 0.25, "decision": 0.25, "bug": 0.2}
    assert _model_with("default", spread).classify("some words", None) == NOT_A_MEMORY


@pytest.mark.parametrize(
    ("probabilities", "label"),
    [
        # a lean towards a decision is not enough: the likeliest of the rest is taken
        ({"decision": 0.40, "implementation": 0.35, "observation": 0.25}, "implementation"),
        ({"directive": 0.45, "decision": 0.30, "none": 0.25}, NOT_A_MEMORY),
        # a majority is
        ({"decision": 0.55, "implementation": 0.45}, "decision"),
    ],
)  # fmt: skip
def test_a_label_that_needs_a_majority_is_chosen_only_with_one(
    probabilities: dict[str, float], label: str
) -> None:
    model = _model_with("default", probabilities)
    chosen = model.classify("some words", None, need_majority={"decision", "directive"})
    assert chosen == label
    assert model.classify("some words", None) == max(probabilities, key=probabilities.__getitem__)


def test_the_session_prior_reweights_and_never_touches_the_exempt_labels() -> None:
    leaning = {"spike": 0.4, "observation": 0.35, "none": 0.25}
    flat = _model_with("default", leaning)
    prior = {"observation": 1.5, "spike": 0.5, "decision": 3.0}
    model = dataclasses.replace(flat, label_weights=prior, prior_exempt=frozenset({"decision"}))
    shifted = model.with_prior(flat.probabilities("some words", None))
    assert shifted["observation"] == pytest.approx(0.525 / 0.975)
    assert shifted["none"] == pytest.approx(0.25 / 0.975), "a label without a factor keeps 1"
    assert flat.classify("some words", None) == "spike"
    assert model.classify("some words", None) == "observation", "the prior picks the type"

    # an exempt label the classifier leans to stands; the prior never reaches one
    def biased(probabilities: dict[str, float]) -> SentenceTypeModel:
        bias = np.log([probabilities.get(label, 1e-9) for label in model.labels])
        return dataclasses.replace(model, bias=bias)

    assert biased({"decision": 0.4, "spike": 0.35, "none": 0.25}).classify("w", None) == "decision"
    # decision x 3 would win (1.05 against spike 0.2 and none 0.25), but it is exempt
    assert biased({"spike": 0.4, "decision": 0.35, "none": 0.25}).classify("w", None) == "none"
    back = SentenceTypeModel.from_json(model.to_json())
    assert back.label_weights == prior and back.prior_exempt == {"decision"}
    assert "label_weights" not in flat.to_json(), "no prior: the document is as before"


def test_the_prior_is_each_types_share_of_a_sessions_memories(tmp_path: Path) -> None:
    sessions = [{"expected": [{"type": "decision"}] * 8}]
    path = tmp_path / "prior.json"
    path.write_text(json.dumps({"mode": "default", "sessions": sessions}))
    weights = session_prior("default", [path])
    types = len(V2_TYPES)
    assert set(weights) == set(V2_TYPES), "every memory type, never 'none'"
    # add-one smoothing over the ten types: 9/18 of the memories are decisions against 1/10
    # of the training memories; the strength takes the square root of the ratio
    assert weights["decision"] == pytest.approx((9 / (8 + types) * types) ** 0.5)
    assert weights["spike"] == pytest.approx((1 / (8 + types) * types) ** 0.5)
    assert session_prior("companion") == {}, "the companion library has no prior sets"
    path.write_text(json.dumps({"mode": "default", "sessions": [{"expected": [{"type": "x"}]}]}))
    with pytest.raises(ValueError, match="outside the library"):
        session_prior("default", [path])


def test_the_shipped_default_model_carries_the_prior_of_its_sets() -> None:
    model = load_type_model("default")
    assert model.label_weights == pytest.approx(session_prior("default"), abs=1e-6)
    assert model.metadata["session_prior_sets"] == [p.name for p in prior_files("default")]
    assert "default_c.json" not in model.metadata["session_prior_sets"], "default_c is held out"
    assert load_type_model("companion").label_weights == {}
