"""The intent classifier: cue phrases, prototype similarity, fallback and its reasons."""

from __future__ import annotations

import numpy as np
import pytest

from services.retrieval.core import COMPANION_LIBRARY, DEFAULT_LIBRARY, classify_intent, library_for
from services.retrieval.core.constants import INTENT_EXAMPLES
from services.retrieval.core.intent import matched_cues, prototype_cosine


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("Why does the search crash on empty rooms?", "debugging"),
        ("What is the plan for next quarter?", "planning"),
        ("How should we structure the storage interface?", "design"),
        ("How did the release go, what went well?", "review"),
        ("When did we switch embedders?", "history"),
        ("Tell me about the retrieval log", "general"),
    ],
)
def test_default_cues_pick_the_intent(query: str, expected: str) -> None:
    guess = classify_intent(query, DEFAULT_LIBRARY)
    assert guess.intent == expected, f"{query!r}: expected {expected}, got {guess}"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("How do I help with the bedtime routine?", "procedural"),
        ("What food do they like?", "preference"),
        ("What do they think about meal kits?", "reflection"),
        ("How are they doing today?", "state_check"),
        ("Do you remember what they told me?", "recall"),
        ("What should we do for dinner?", "general"),
    ],
)
def test_companion_cues_pick_the_intent(query: str, expected: str) -> None:
    guess = classify_intent(query, COMPANION_LIBRARY)
    assert guess.intent == expected, f"{query!r}: expected {expected}, got {guess}"


@pytest.mark.parametrize("mode", ["default", "companion"])
def test_every_example_query_is_classified_into_its_intent(mode: str) -> None:
    library = library_for(mode)
    for intent, examples in INTENT_EXAMPLES[mode].items():
        for example in examples:
            got = classify_intent(example, library).intent
            assert got == intent, f"{mode} example {example!r}: expected {intent}, got {got}"


def test_cue_hits_are_the_reasons() -> None:
    guess = classify_intent("the daemon crashes with a stack trace", DEFAULT_LIBRARY)
    assert guess.intent == "debugging"
    assert "cue 'crash*' → debugging" in guess.reasons
    assert "cue 'stack trace' → debugging" in guess.reasons
    assert guess.confidence == pytest.approx(0.75), "two cues: 1 − 0.5² with no runner-up"


def test_no_evidence_falls_back_to_general_with_low_confidence() -> None:
    guess = classify_intent("quarterly numbers", DEFAULT_LIBRARY)
    assert guess.intent == "general" and guess.confidence == pytest.approx(0.2)
    assert any("falling back to general" in reason for reason in guess.reasons), guess.reasons


def test_empty_query_is_general() -> None:
    assert classify_intent("", COMPANION_LIBRARY).intent == "general"


def test_cues_respect_word_boundaries_and_stems() -> None:
    assert matched_cues("the tests are failing", DEFAULT_LIBRARY.intent_cues["debugging"]) == [
        "fail*"
    ]
    assert matched_cues("open the debugger", DEFAULT_LIBRARY.intent_cues["debugging"]) == []
    assert matched_cues("an unplanned outage", DEFAULT_LIBRARY.intent_cues["planning"]) == []
    assert matched_cues("Stack   Trace", DEFAULT_LIBRARY.intent_cues["debugging"]) == [
        "stack trace"
    ]


def test_curly_apostrophes_match_straight_cues() -> None:
    assert classify_intent("How\u2019s it going? How do I start", COMPANION_LIBRARY).intent == (
        "procedural"
    )


def test_cues_of_the_other_library_do_not_count() -> None:
    assert classify_intent("what food do they like", DEFAULT_LIBRARY).intent == "general"
    assert classify_intent("why does it crash", COMPANION_LIBRARY).intent == "general"


def test_ambiguity_lowers_confidence() -> None:
    clean = classify_intent("why does it crash", DEFAULT_LIBRARY)
    mixed = classify_intent("why does the roadmap crash", DEFAULT_LIBRARY)
    assert clean.intent == mixed.intent == "debugging"
    # both 0.75 evidence; the mixed one has planning at 0.5 → 0.75 − 0.25 = 0.5.
    assert clean.confidence == pytest.approx(0.75)
    assert mixed.confidence == pytest.approx(0.5)


def test_ties_go_to_the_library_intent_order() -> None:
    guess = classify_intent("roadmap architecture", DEFAULT_LIBRARY)
    assert guess.intent == "planning", "planning precedes design in the vocabulary"
    assert guess.confidence == pytest.approx(0.25)


# ---------------------------------------------------------------- prototypes


def _unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float64)
    return v / np.linalg.norm(v)


PROTOTYPES = {
    "debugging": _unit(1, 0, 0, 0),
    "design": _unit(0, 1, 0, 0),
    "history": _unit(0, 0, 1, 0),
}


def test_prototype_similarity_alone_can_pick_the_intent() -> None:
    # cosine 0.94 with design → (0.94 − 0.3)/0.7 = 0.914 evidence; no cues at all.
    query = _unit(0.1, 0.95, 0.2, 0.2)
    guess = classify_intent(
        "what about it", DEFAULT_LIBRARY, query_vector=query, prototypes=PROTOTYPES
    )
    assert guess.intent == "design", guess
    assert any(r.startswith("prototype cosine") and "design" in r for r in guess.reasons)


def test_cues_and_prototypes_combine_as_independent_evidence() -> None:
    # cue "bug*" → 0.5; cosine 0.65 → (0.65 − 0.3)/0.7 = 0.5; noisy-OR → 0.75.
    query = np.array([0.65, np.sqrt(1 - 0.65**2), 0, 0])
    protos = {"debugging": _unit(1, 0, 0, 0)}
    guess = classify_intent("a bug", DEFAULT_LIBRARY, query_vector=query, prototypes=protos)
    assert guess.intent == "debugging"
    assert guess.confidence == pytest.approx(0.75)


def test_weak_prototype_similarity_is_not_evidence() -> None:
    query = _unit(1, 1, 1, 3)  # cosine ≈ 0.29 with each prototype, under the 0.3 floor
    guess = classify_intent("hm", DEFAULT_LIBRARY, query_vector=query, prototypes=PROTOTYPES)
    assert guess.intent == "general" and guess.confidence == pytest.approx(0.2)


def test_prototype_matrix_uses_its_best_example() -> None:
    examples = np.stack([_unit(0, 1, 0), _unit(1, 0, 0)])
    assert prototype_cosine(_unit(1, 0, 0), examples) == pytest.approx(1.0)


def test_zero_vectors_have_no_similarity() -> None:
    assert prototype_cosine(np.zeros(3), _unit(1, 0, 0)) == 0.0
    assert prototype_cosine(_unit(1, 0, 0), np.zeros((2, 3))) == 0.0


def test_mismatched_dimensions_are_refused() -> None:
    with pytest.raises(ValueError, match="does not match a query vector of dimension 3"):
        prototype_cosine(_unit(1, 0, 0), _unit(1, 0, 0, 0))


def test_prototypes_without_a_query_vector_are_skipped_with_a_reason() -> None:
    guess = classify_intent("a bug", DEFAULT_LIBRARY, prototypes=PROTOTYPES)
    assert guess.intent == "debugging"
    assert any("prototype evidence skipped" in r for r in guess.reasons)


def test_prototypes_for_foreign_intents_are_ignored() -> None:
    protos = {"recall": _unit(1, 0, 0, 0)}
    query = _unit(1, 0, 0, 0)
    guess = classify_intent("x", DEFAULT_LIBRARY, query_vector=query, prototypes=protos)
    assert guess.intent == "general"
