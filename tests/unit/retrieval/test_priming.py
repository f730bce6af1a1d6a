"""Session-start choice: standing partitions, relevance before the rest, near-duplicates out,
diversity inside a standing."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from services.retrieval.core.priming import (
    REDUNDANT_COSINE,
    PrimeCandidate,
    Standing,
    choose,
    standing_of,
)


def unit(*values: float) -> npt.NDArray[np.float32]:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def cand(id: str, standing: Standing, relevant: bool = False) -> PrimeCandidate:
    return PrimeCandidate(id, standing, relevant, 0.5 if relevant else 0.0)


def test_standing_reads_pins_before_signatures() -> None:
    assert standing_of(pinned=True, signed=True) is Standing.PINNED
    assert standing_of(pinned=False, signed=True) is Standing.CANONICAL
    assert standing_of(pinned=False, signed=False) is Standing.AMBIENT


def test_pinned_then_canonical_then_ambient_whatever_the_order_given() -> None:
    candidates = [
        cand("amb", Standing.AMBIENT),
        cand("can", Standing.CANONICAL),
        cand("pin", Standing.PINNED),
    ]
    vectors = {"amb": unit(1, 0, 0), "can": unit(0, 1, 0), "pin": unit(0, 0, 1)}
    picked = choose(candidates, vectors, 3)
    assert [p.id for p in picked] == ["pin", "can", "amb"]
    assert [p.reason for p in picked] == ["pinned", "canonical", "salient"]


def test_what_the_context_reached_comes_before_pins_it_did_not() -> None:
    candidates = [
        cand("rel-amb", Standing.AMBIENT, relevant=True),
        cand("rel-pin", Standing.PINNED, relevant=True),
        cand("pin", Standing.PINNED),
    ]
    vectors = {"rel-amb": unit(1, 0, 0), "rel-pin": unit(0, 1, 0), "pin": unit(0, 0, 1)}
    picked = choose(candidates, vectors, 3)
    assert [p.id for p in picked] == ["rel-pin", "rel-amb", "pin"]
    assert picked[1].reason == "relevant"


def test_a_near_duplicate_is_left_out_even_when_pinned() -> None:
    twin = unit(1, 0.01, 0)
    assert float(twin @ unit(1, 0, 0)) >= REDUNDANT_COSINE
    candidates = [cand("a", Standing.PINNED), cand("a-again", Standing.PINNED)]
    candidates.append(cand("b", Standing.AMBIENT))
    picked = choose(candidates, {"a": unit(1, 0, 0), "a-again": twin, "b": unit(0, 1, 0)}, 3)
    assert [p.id for p in picked] == ["a", "b"]


def test_diversity_inside_a_standing_skips_a_close_second_for_a_different_third() -> None:
    # "second" says nearly what "first" says (cosine 0.85, under the duplicate line); "third"
    # is about something else: marginal relevance prefers it.
    first, second, third = unit(1, 0, 0), unit(0.85, 0.527, 0), unit(0, 0, 1)
    candidates = [cand(i, Standing.CANONICAL) for i in ("first", "second", "third")]
    picked = choose(candidates, {"first": first, "second": second, "third": third}, 2)
    assert [p.id for p in picked] == ["first", "third"]


def test_n_bounds_the_choice_and_zero_chooses_nothing() -> None:
    candidates = [cand(f"d{i}", Standing.AMBIENT) for i in range(8)]
    vectors = {f"d{i}": unit(*(1.0 if j == i else 0.0 for j in range(8))) for i in range(8)}
    assert [p.id for p in choose(candidates, vectors, 3)] == ["d0", "d1", "d2"]
    assert choose(candidates, vectors, 0) == []
