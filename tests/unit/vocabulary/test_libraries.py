"""Type libraries: every matrix cell equals the design's number, and fallbacks are neutral.

The expected tables below are typed in from the scoring design (Scoring: "v2 library",
"legacy library"; Modes: "companion · type × intent"), independently of services/vocabulary, so a
mistyped constant fails here rather than being compared with itself.
"""

from __future__ import annotations

import math

import pytest

from services.vocabulary import COMPANION_LIBRARY, DEFAULT_LIBRARY, TypeLibrary, library_for

DEFAULT_TABLE = """
type            planning design debugging review history general
architecture    1.40     1.30   0.60      1.00   1.00    1.00
workflow        1.20     1.10   0.80      1.00   1.00    1.00
implementation  1.00     0.80   1.00      1.00   1.20    1.00
decision        1.30     1.50   0.70      1.10   1.00    1.10
bug             0.80     0.70   1.50      1.20   1.00    1.00
spike           1.10     1.20   1.20      1.00   1.00    1.00
retrospective   1.00     0.90   1.00      1.50   1.30    1.00
acceptance      0.90     0.80   0.90      1.30   1.20    1.00
directive       1.50     1.20   0.90      1.10   1.00    1.20
observation     0.90     0.80   1.00      0.90   1.00    1.00
fact            1.00     1.00   1.00      1.00   1.00    1.00
consequence     1.00     1.00   1.00      1.00   1.00    1.00
inference       0.85     0.90   0.95      0.95   1.00    0.95
opinion         0.70     0.70   0.75      0.80   0.90    0.80
"""

COMPANION_TABLE = """
type         procedural preference reflection state_check recall general
want         1.50       1.10       1.00       1.10        1.00   1.30
preference   1.10       1.50       1.10       1.00        1.00   1.20
opinion      1.00       1.00       1.50       1.00        0.90   1.10
observation  0.90       0.90       1.00       1.40        1.40   1.00
"""


def _parse(table: str) -> dict[tuple[str, str], float]:
    header, *rows = [line.split() for line in table.strip().splitlines()]
    intents = header[1:]
    return {
        (row[0], intent): float(value)
        for row in rows
        for intent, value in zip(intents, row[1:], strict=True)
    }


EXPECTED = {"default": _parse(DEFAULT_TABLE), "companion": _parse(COMPANION_TABLE)}
CELLS = [(mode, t, i, v) for mode, table in EXPECTED.items() for (t, i), v in table.items()]


@pytest.mark.parametrize(("mode", "memory_type", "intent", "expected"), CELLS)
def test_every_matrix_cell_matches_the_design(
    mode: str, memory_type: str, intent: str, expected: float
) -> None:
    got = library_for(mode).multiplier(memory_type, intent)
    assert got == expected, f"{mode} {memory_type} × {intent}: expected {expected}, got {got}"


def test_cell_count_is_fourteen_by_six_and_four_by_six() -> None:
    assert len(EXPECTED["default"]) == 14 * 6
    assert len(EXPECTED["companion"]) == 4 * 6


@pytest.mark.parametrize("mode", ["default", "companion"])
def test_library_vocabulary_is_exactly_the_table(mode: str) -> None:
    library = library_for(mode)
    types = {t for t, _ in EXPECTED[mode]}
    intents = {i for _, i in EXPECTED[mode]}
    assert set(library.types) == types, f"expected types {sorted(types)}"
    assert set(library.intents) == intents, f"expected intents {sorted(intents)}"
    assert library.name == mode


def test_h_max_is_log_of_library_size() -> None:
    assert DEFAULT_LIBRARY.h_max == pytest.approx(math.log(14)), "10 v2 + 4 legacy types"
    assert COMPANION_LIBRARY.h_max == pytest.approx(math.log(4)), "4 speech acts"


@pytest.mark.parametrize("intent", ["", "banana", "procedural", None])
def test_unknown_or_foreign_intent_scores_as_general(intent: str | None) -> None:
    assert DEFAULT_LIBRARY.resolve_intent(intent) == "general"
    assert DEFAULT_LIBRARY.multiplier("directive", intent) == 1.20, "directive × general"


def test_intent_is_normalised_before_lookup() -> None:
    assert DEFAULT_LIBRARY.resolve_intent("  Debugging ") == "debugging"
    assert COMPANION_LIBRARY.resolve_intent("debugging") == "general", "not a companion intent"


def test_unknown_type_is_neutral() -> None:
    assert DEFAULT_LIBRARY.multiplier("want", "planning") == 1.0, "companion type in default"
    assert COMPANION_LIBRARY.multiplier("decision", "recall") == 1.0
    assert not DEFAULT_LIBRARY.has_type("want")
    assert COMPANION_LIBRARY.has_type("want")


def test_default_confidence_hedges_only_inference_and_opinion() -> None:
    hedged = {"inference": 0.8, "opinion": 0.6}
    for memory_type in DEFAULT_LIBRARY.types:
        expected = hedged.get(memory_type, 1.0)
        got = DEFAULT_LIBRARY.confidence_for(memory_type)
        assert got == expected, f"{memory_type}: expected confidence {expected}, got {got}"
    assert DEFAULT_LIBRARY.confidence_for("unheard-of") == 1.0


def test_companion_confidence_is_all_certain() -> None:
    for memory_type in COMPANION_LIBRARY.types:
        assert COMPANION_LIBRARY.confidence_for(memory_type) == 1.0, memory_type


def test_unknown_mode_is_refused_with_the_choices() -> None:
    with pytest.raises(ValueError, match="expected 'default' or 'companion'"):
        library_for("multi-agent")


def test_library_refuses_a_matrix_that_misses_an_intent() -> None:
    with pytest.raises(ValueError, match="does not cover every intent"):
        TypeLibrary(
            name="broken",
            types=("a",),
            intents=("x", "general"),
            matrix={"a": {"general": 1.0}},
            default_confidence={},
        )


def test_library_refuses_a_vocabulary_without_general() -> None:
    with pytest.raises(ValueError, match="'general'"):
        TypeLibrary(
            name="broken",
            types=("a",),
            intents=("x",),
            matrix={"a": {"x": 1.0}},
            default_confidence={},
        )


def test_only_the_work_artifact_library_ranks_authority_by_type() -> None:
    assert DEFAULT_LIBRARY.types_carry_authority, "a decision outranks an observation"
    assert not COMPANION_LIBRARY.types_carry_authority, "speech acts are kinds, not ranks"


def test_only_companion_answers_with_a_narrative_set() -> None:
    assert COMPANION_LIBRARY.narrative and not DEFAULT_LIBRARY.narrative


def test_the_ruling_types_are_the_seeds_high_authority_claim_shapes() -> None:
    # The seed: "planning boosts directive (1.5×), architecture (1.4×), decision (1.3×) —
    # high-authority claim shapes"; exactly the types planning lifts by 1.3× or more.
    planning = {t for t, row in DEFAULT_LIBRARY.matrix.items() if row["planning"] >= 1.3}
    assert DEFAULT_LIBRARY.ruling_types == planning == {"directive", "architecture", "decision"}
    assert COMPANION_LIBRARY.ruling_types == frozenset(), "a speech act rules nothing"


@pytest.mark.parametrize(
    ("ruling", "carries", "message"),
    [
        (frozenset({"b"}), True, "must be types of the library"),
        (frozenset({"a"}), False, "only types that carry authority can rule"),
    ],
)
def test_library_refuses_ruling_types_it_cannot_honour(
    ruling: frozenset[str], carries: bool, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        TypeLibrary(
            name="broken",
            types=("a",),
            intents=("general",),
            matrix={"a": {"general": 1.0}},
            default_confidence={},
            types_carry_authority=carries,
            ruling_types=ruling,
        )
