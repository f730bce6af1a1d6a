"""Adaptive dampening: entropy, normalisation, the blend toward 1.0, and its extremes."""

from __future__ import annotations

import math

import pytest

from services.retrieval.core import (
    DampeningProfile,
    SignalDampening,
    confidence_level,
    damp,
    dampen,
    entropy,
)
from services.vocabulary import DEFAULT_LIBRARY


def test_entropy_of_nothing_or_one_value_is_zero() -> None:
    assert entropy([]) == 0.0
    assert entropy(["decision"] * 7) == 0.0


def test_entropy_of_all_distinct_values_is_exactly_log_n() -> None:
    assert entropy(["a", "b", "c", "d", "e"]) == math.log(5)


def test_entropy_is_shannon_in_nats() -> None:
    # p = (3/4, 1/4): H = −(0.75 ln 0.75 + 0.25 ln 0.25) = 0.215762 + 0.346574 = 0.562335
    assert entropy(["a", "a", "a", "b"]) == pytest.approx(0.562335, abs=1e-6)


def test_uniform_pool_collapses_to_exactly_one() -> None:
    d = damp(["bug"] * 10, DEFAULT_LIBRARY.h_max)
    assert d == 0.0, f"expected damp 0 on a single-type pool, got {d}"
    assert dampen(1.5, d) == 1.0, "a uniform signal must collapse to exactly 1.0"
    assert dampen(0.6, d) == 1.0


def test_maximally_diverse_pool_fires_at_the_raw_factor() -> None:
    # One candidate of every one of the 14 library types: H = log 14 = H_max.
    d = damp(list(DEFAULT_LIBRARY.types), DEFAULT_LIBRARY.h_max)
    assert d == 1.0, f"expected damp exactly 1.0, got {d}"
    assert dampen(1.5, d) == 1.5
    assert dampen(0.6, d) == 0.6


def test_evenly_repeated_full_library_is_still_fully_diverse() -> None:
    d = damp(list(DEFAULT_LIBRARY.types) * 3, DEFAULT_LIBRARY.h_max)
    assert d == pytest.approx(1.0, abs=1e-12)


def test_in_between_pool_by_hand() -> None:
    # Four authority tiers are the schema: H_max = ln 4 = 1.386294.
    # Pool [directive, directive, worker, worker]: p = (1/2, 1/2), H = ln 2 = 0.693147.
    # damp = ln 2 / ln 4 = 0.5; a 1.6× directive becomes 0.5·1.6 + 0.5·1.0 = 1.3.
    d = damp(["directive", "directive", "worker", "worker"], math.log(4))
    assert d == pytest.approx(0.5)
    assert dampen(1.6, d) == pytest.approx(1.3)


def test_skewed_type_pool_by_hand() -> None:
    # Types [bug, bug, bug, decision] over the 14-type library:
    # H = 0.562335 (see the entropy test), H_max = ln 14 = 2.639057, damp = 0.213081.
    # decision × design = 1.5 → 0.213081·1.5 + 0.786919 = 1.106540.
    d = damp(["bug", "bug", "bug", "decision"], DEFAULT_LIBRARY.h_max)
    assert d == pytest.approx(0.213081, abs=1e-6)
    assert dampen(1.5, d) == pytest.approx(1.106540, abs=1e-6)


def test_damp_is_clamped_to_one_when_entropy_exceeds_h_max() -> None:
    # Five distinct values against a four-value schema (unknown categories count too).
    assert damp(["a", "b", "c", "d", "e"], math.log(4)) == 1.0


def test_a_single_value_schema_never_fires() -> None:
    assert damp(["a", "b"], 0.0) == 0.0


@pytest.mark.parametrize(
    ("confidence", "level"),
    [
        (0.0, 1),
        (0.1, 1),
        (0.2, 1),
        (0.21, 2),
        (0.4, 2),
        (0.6, 3),
        (0.8, 4),
        (0.81, 5),
        (1.0, 5),
        (1.7, 5),
        (-0.5, 1),
    ],
)
def test_confidence_levels_are_five_equal_bins(confidence: float, level: int) -> None:
    got = confidence_level(confidence)
    assert got == level, f"confidence {confidence}: expected level {level}, got {got}"


def test_measure_reports_the_profile_entry() -> None:
    entry = SignalDampening.measure("type", ["bug", "bug", "decision", "decision"], math.log(4))
    assert entry.signal == "type"
    assert entry.entropy == pytest.approx(math.log(2))
    assert entry.damp == pytest.approx(0.5)
    assert entry.enabled and entry.fired
    assert entry.distinct_values == 2
    assert entry.apply(2.0) == pytest.approx(1.5)


def test_uniform_signal_is_enabled_but_does_not_fire() -> None:
    entry = SignalDampening.measure("authority", ["worker"] * 4, math.log(4))
    assert entry.enabled and not entry.fired
    assert entry.apply(1.6) == 1.0


def test_disabled_signal_is_neutral_whatever_the_diversity() -> None:
    entry = SignalDampening.measure(
        "authority", ["directive", "worker"], math.log(4), enabled=False
    )
    assert entry.damp == 0.0 and not entry.fired and not entry.enabled
    assert entry.apply(1.6) == 1.0


def test_profile_lookup_by_signal() -> None:
    entry = SignalDampening.measure("type", ["a"], 1.0)
    profile = DampeningProfile(signals=(entry,), candidate_count=1)
    assert profile.get("type") is entry
    with pytest.raises(KeyError, match="authority"):
        profile.get("authority")
