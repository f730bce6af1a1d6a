"""Adaptive dampening: a signal fires only as strongly as the candidate set is diverse on it.

    damp = H(signal values over the candidates) / H_max
    effective_factor = damp × raw_factor + (1 − damp) × 1.0

Decisions:

- H is Shannon entropy in nats (natural log) of the empirical distribution of the signal's
  *categorical value* over the candidate set: the memory type for the type signal, the
  authority tier for authority, and the confidence level (one of five bins) for confidence.
  It is not the entropy of the multiplier values: two types that happen to share a multiplier
  for this intent are still two kinds of claim, and H_max is defined over the schema's
  categories (log of the number of types / tiers / levels), so H must count the same things.
- Computed as H = log N − (1/N) Σ cᵢ log cᵢ over the counts cᵢ (N candidates), which equals
  −Σ pᵢ log pᵢ but is exact at both extremes: one category gives 0.0 and all-distinct
  categories give exactly log N, so a uniform pool collapses to exactly 1.0 and a pool
  spread evenly over every library type fires at exactly the raw factor.
- damp is clamped to [0, 1]: values outside the schema (an unknown memory type counted as its
  own category) can push H past H_max, and a signal must never fire harder than its raw value.
  A schema with one category (H_max = 0) cannot discriminate, so damp is 0.
- Confidence is continuous, so it is bucketed onto the 5-level scale the seed's H_max = log 5
  implies: (0, 0.2] → 1, (0.2, 0.4] → 2, …, (0.8, 1.0] → 5 (values ≤ 0 join level 1, values
  > 1 join level 5). Bucketing is what keeps "0.99 vs 1.0" from counting as diversity.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Iterable
from dataclasses import dataclass

from services.retrieval.core.constants import CONFIDENCE_LEVELS

# Confidence × levels is rounded before the ceiling so 0.6 × 5 = 3.0000000000000004 stays 3.
_LEVEL_ROUNDING_DIGITS = 9


def entropy(values: Iterable[Hashable]) -> float:
    """Shannon entropy (nats) of the distribution of `values`; 0.0 for empty or uniform input."""
    counts = Counter(values)
    if len(counts) <= 1:
        return 0.0
    total = sum(counts.values())
    spread = sum(count * math.log(count) for count in counts.values()) / total
    return max(0.0, math.log(total) - spread)


def damp_from_entropy(value_entropy: float, h_max: float) -> float:
    """Normalised entropy `value_entropy / h_max`, clamped to [0, 1]; 0.0 when h_max ≤ 0."""
    if h_max <= 0.0:
        return 0.0
    return min(1.0, max(0.0, value_entropy / h_max))


def damp(values: Iterable[Hashable], h_max: float) -> float:
    """How strongly a signal may fire over these candidate values: H / H_max in [0, 1]."""
    return damp_from_entropy(entropy(values), h_max)


def dampen(raw_factor: float, damp: float) -> float:
    """Blend `raw_factor` toward neutral 1.0: damp × raw + (1 − damp) × 1.0."""
    return damp * raw_factor + (1.0 - damp) * 1.0


def confidence_level(confidence: float) -> int:
    """The level (1..5) of a confidence value on the 5-level scale dampening measures."""
    scaled = round(confidence * CONFIDENCE_LEVELS, _LEVEL_ROUNDING_DIGITS)
    return min(CONFIDENCE_LEVELS, max(1, math.ceil(scaled)))


@dataclass(frozen=True, slots=True)
class SignalDampening:
    """How one dampened signal behaved over the candidate set of one query.

    `fired` means damp > 0 on an enabled signal: the factor was allowed to move away from
    1.0 (it may still be 1.0 for a candidate whose raw value is 1.0).
    """

    signal: str
    entropy: float
    h_max: float
    damp: float
    enabled: bool
    fired: bool
    distinct_values: int

    @classmethod
    def measure(
        cls, signal: str, values: Iterable[Hashable], h_max: float, *, enabled: bool = True
    ) -> SignalDampening:
        """Measure `values` for `signal`; a disabled signal reports damp 0 and never fires."""
        materialised = list(values)
        value_entropy = entropy(materialised)
        damp_value = damp_from_entropy(value_entropy, h_max) if enabled else 0.0
        return cls(
            signal=signal,
            entropy=value_entropy,
            h_max=h_max,
            damp=damp_value,
            enabled=enabled,
            fired=enabled and damp_value > 0.0,
            distinct_values=len(set(materialised)),
        )

    def apply(self, raw_factor: float) -> float:
        """The effective factor for one candidate: `raw_factor` dampened, or 1.0 if disabled."""
        if not self.enabled:
            return 1.0
        return dampen(raw_factor, self.damp)


@dataclass(frozen=True, slots=True)
class DampeningProfile:
    """The query-level dampening profile: one entry per dampened signal."""

    signals: tuple[SignalDampening, ...]
    candidate_count: int

    def get(self, signal: str) -> SignalDampening:
        """The entry for `signal` ("authority", "confidence" or "type")."""
        for entry in self.signals:
            if entry.signal == signal:
                return entry
        raise KeyError(f"no dampening entry for signal {signal!r}")
