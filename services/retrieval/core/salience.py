"""Salience: the decay-with-feedback signal, computed at read time from a stored base.

A drawer stores a base salience in [0.1, 1.0] and the moment of its last activity. Nothing
ever rewrites salience on a timer; the decayed value is derived when it is read:

    effective = clamp(base × (1 − 0.025) ^ weeks_since_last_activity, 0.1, 1.0)

Decisions:

- Decay is compounding (2.5 % of what is left, per week), so salience never reaches zero on
  its own and a week always costs the same share; weeks are fractional, so the value moves
  smoothly rather than stepping at week boundaries.
- A last_activity in the future (clock skew between writers) counts as zero weeks: skew must
  never inflate salience above its base.
- Pinned drawers do not decay: a pinned fact must not drift out from under the reader. The
  base is still clamped to [0.1, 1.0] so a malformed stored value cannot escape the range.
- A recorded retrieval bumps from the *effective* value, not the stored base: the new base is
  min(1.0, effective + 0.1), stored with last_activity = the retrieval time. Bumping the
  stale base would resurrect a long-idle drawer to its old strength in one retrieval.
- Naive and timezone-aware datetimes are never mixed; mixing raises ValueError naming both,
  because silently assuming UTC would shift decay by the local offset.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import numpy.typing as npt

from services.retrieval.core.constants import (
    DEFAULT_W_SAL,
    SALIENCE_BUMP,
    SALIENCE_CAP,
    SALIENCE_DECAY_PER_WEEK,
    SALIENCE_FLOOR,
    SECONDS_PER_WEEK,
    W_SAL_BY_INTENT,
)


def clamp_salience(value: float) -> float:
    """`value` held inside [SALIENCE_FLOOR, SALIENCE_CAP]."""
    return min(SALIENCE_CAP, max(SALIENCE_FLOOR, value))


def weeks_between(earlier: datetime, later: datetime) -> float:
    """Fractional weeks from `earlier` to `later`; 0.0 when `earlier` is not before `later`."""
    if (earlier.tzinfo is None) != (later.tzinfo is None):
        raise ValueError(
            "last_activity and now must both be timezone-aware or both naive; got "
            f"{earlier.isoformat()} and {later.isoformat()}"
        )
    seconds = (later - earlier).total_seconds()
    return max(0.0, seconds / SECONDS_PER_WEEK)


def effective_salience(
    base: float, last_activity: datetime, now: datetime, pinned: bool = False
) -> float:
    """Salience at `now`: `base` decayed 2.5 %/week since `last_activity`, in [0.1, 1.0].

    Pinned drawers keep their (clamped) base.
    """
    if pinned:
        return clamp_salience(base)
    weeks = weeks_between(last_activity, now)
    return clamp_salience(base * (1.0 - SALIENCE_DECAY_PER_WEEK) ** weeks)


def bumped_salience(
    base: float, last_activity: datetime, now: datetime, pinned: bool = False
) -> float:
    """The new stored base after a retrieval recorded at `now`: effective + 0.1, capped at 1.0.

    The caller stores it together with last_activity = `now`.
    """
    return clamp_salience(effective_salience(base, last_activity, now, pinned) + SALIENCE_BUMP)


def salience_weight(intent: str) -> float:
    """w_sal, the exponent on salience for a (resolved) intent: debugging 1.5, planning 0.8."""
    return W_SAL_BY_INTENT.get(intent, DEFAULT_W_SAL)


def effective_salience_many(
    bases: npt.NDArray[np.float64],
    last_activity_s: npt.NDArray[np.float64],
    now_s: float,
    pinned: npt.NDArray[np.bool_],
) -> npt.NDArray[np.float64]:
    """`effective_salience` of many drawers at once (epoch seconds; what a session start
    ranks thousands of pinned and signed drawers by). Same rules: future activity counts as
    zero weeks, pinned drawers keep their clamped base."""
    weeks = np.maximum(0.0, (now_s - last_activity_s) / SECONDS_PER_WEEK)
    decayed = np.where(pinned, bases, bases * (1.0 - SALIENCE_DECAY_PER_WEEK) ** weeks)
    return np.clip(decayed, SALIENCE_FLOOR, SALIENCE_CAP)
