"""Salience: 2.5 %/week compounding decay at read time, +0.1 bumps, floor 0.1, cap 1.0."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from services.retrieval.core import bumped_salience, effective_salience, salience_weight

NOW = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)


def weeks_ago(weeks: float) -> datetime:
    return NOW - timedelta(weeks=weeks)


def test_no_elapsed_time_keeps_the_base() -> None:
    assert effective_salience(0.7, NOW, NOW) == 0.7


def test_one_week_costs_two_and_a_half_percent() -> None:
    got = effective_salience(0.8, weeks_ago(1), NOW)
    assert got == pytest.approx(0.8 * 0.975), f"expected 0.78, got {got}"


def test_decay_compounds_over_weeks() -> None:
    # 0.975^20 = 0.602687: twenty idle weeks keep about 60 %.
    got = effective_salience(1.0, weeks_ago(20), NOW)
    assert got == pytest.approx(0.602687, abs=1e-6)


def test_decay_is_smooth_within_a_week() -> None:
    got = effective_salience(1.0, weeks_ago(0.5), NOW)
    assert got == pytest.approx(0.975**0.5)


def test_decay_floors_at_one_tenth() -> None:
    # 0.975^200 ≈ 0.0063, well under the floor.
    assert effective_salience(1.0, weeks_ago(200), NOW) == 0.1


def test_stored_values_outside_the_range_are_clamped() -> None:
    assert effective_salience(1.7, NOW, NOW) == 1.0
    assert effective_salience(0.01, NOW, NOW) == 0.1


def test_pinned_drawers_do_not_decay() -> None:
    got = effective_salience(0.9, weeks_ago(52), NOW, pinned=True)
    assert got == 0.9, f"pinned salience must not decay; expected 0.9, got {got}"
    assert effective_salience(3.0, weeks_ago(52), NOW, pinned=True) == 1.0


def test_future_activity_from_clock_skew_never_inflates() -> None:
    assert effective_salience(0.5, NOW + timedelta(days=3), NOW) == 0.5


def test_mixing_naive_and_aware_times_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware or both naive"):
        effective_salience(0.5, datetime(2026, 1, 1), NOW)


def test_bump_adds_a_tenth_to_the_effective_value() -> None:
    assert bumped_salience(0.5, NOW, NOW) == pytest.approx(0.6)


def test_bump_starts_from_the_decayed_value_not_the_stale_base() -> None:
    # 0.975^10 = 0.776330; × 0.8 = 0.621064; + 0.1 = 0.721064.
    got = bumped_salience(0.8, weeks_ago(10), NOW)
    assert got == pytest.approx(0.721064, abs=1e-6)


def test_bump_is_capped_at_one() -> None:
    assert bumped_salience(0.95, NOW, NOW) == 1.0


def test_bump_lifts_a_floored_drawer() -> None:
    assert bumped_salience(0.5, weeks_ago(500), NOW) == pytest.approx(0.2)


def test_bump_of_a_pinned_drawer_ignores_idle_time() -> None:
    assert bumped_salience(0.6, weeks_ago(100), NOW, pinned=True) == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("intent", "weight"),
    [
        ("debugging", 1.5),
        ("planning", 0.8),
        ("design", 1.0),
        ("general", 1.0),
        ("review", 1.0),
        # History asks about the past: how recently a memory was used says nothing there.
        ("history", 0.0),
        # Companion: only state_check asks about now, at half weight (a pinned memory never
        # decays); standing facts ignore salience.
        ("state_check", 0.5),
        ("recall", 0.0),
        ("preference", 0.0),
    ],
)
def test_salience_weight_by_intent(intent: str, weight: float) -> None:
    assert salience_weight(intent) == weight, f"w_sal for {intent}: expected {weight}"


def test_many_at_once_is_the_same_as_one_by_one() -> None:
    import numpy as np

    from services.retrieval.core.salience import effective_salience_many

    now = datetime(2026, 7, 1, tzinfo=UTC)
    cases = [
        (0.9, datetime(2025, 7, 1, tzinfo=UTC), False),
        (0.9, datetime(2025, 7, 1, tzinfo=UTC), True),
        (0.05, datetime(2026, 6, 1, tzinfo=UTC), False),
        (0.7, datetime(2026, 8, 1, tzinfo=UTC), False),  # activity after now: no decay
    ]
    many = effective_salience_many(
        np.array([c[0] for c in cases]),
        np.array([c[1].timestamp() for c in cases]),
        now.timestamp(),
        np.array([c[2] for c in cases]),
    )
    one_by_one = [effective_salience(b, at, now, pinned) for b, at, pinned in cases]
    assert np.allclose(many, one_by_one), (many, one_by_one)
