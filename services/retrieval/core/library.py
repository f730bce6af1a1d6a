"""Type libraries: the per-mode vocabulary of memory types and intents, and its matrix.

A store's deployment mode ("default" or "companion") picks one library. The library is the
only thing that swaps between modes at scoring time (seed: Modes), so everything mode-specific
the scorer needs hangs off it: the type × intent multiplier, the intent vocabulary, per-type
default confidence, and type's schema-derived H_max.

Decisions:

- An intent outside the library's vocabulary (unknown, empty, or the other mode's) resolves
  to "general", which both libraries share; scoring never fails on an intent string.
- A memory type outside the library scores with multiplier 1.0 and confidence 1.0. For
  dampening it counts as its own category (see `scoring`), because it is a distinct value of
  the signal even though the matrix makes no claim about it.
- H_max for type is log(number of types in the library): log(14) for default (10 v2 +
  4 legacy), log(4) for companion. It is a schema property, so adding a type rescales
  dampening without re-tuning anything.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from services.retrieval.core.constants import (
    COMPANION_INTENTS,
    COMPANION_MODE,
    COMPANION_TYPE_CONFIDENCE,
    COMPANION_TYPE_MULTIPLIER,
    COMPANION_TYPES,
    DEFAULT_INTENTS,
    DEFAULT_MODE,
    DEFAULT_TYPE_CONFIDENCE,
    DEFAULT_TYPE_MULTIPLIER,
    DEFAULT_TYPES,
    GENERAL_INTENT,
    MODES,
    UNKNOWN_TYPE_CONFIDENCE,
    UNKNOWN_TYPE_MULTIPLIER,
)


@dataclass(frozen=True, slots=True)
class TypeLibrary:
    """One deployment mode's memory types, intents and type × intent multiplier matrix."""

    name: str
    types: tuple[str, ...]
    intents: tuple[str, ...]
    matrix: Mapping[str, Mapping[str, float]]
    default_confidence: Mapping[str, float]
    # Whether a type ranks claims by authority (decision over observation). True for the
    # work-artifact library; a companion speech act (want, preference, opinion, observation)
    # is a kind of expression, not a rank, so there only pins and authors carry authority.
    types_carry_authority: bool = True
    # Whether a search answers with a narrative set (companion: "no single memory IS the
    # answer") rather than one canonical drawer and its runner-ups.
    narrative: bool = False

    def __post_init__(self) -> None:
        # A library whose matrix and vocabularies disagree would score some cells silently
        # as 1.0; refuse it at construction instead.
        if GENERAL_INTENT not in self.intents:
            raise ValueError(f"library {self.name!r} must include the {GENERAL_INTENT!r} intent")
        if set(self.matrix) != set(self.types):
            raise ValueError(f"library {self.name!r}: matrix rows do not match its types")
        for memory_type, row in self.matrix.items():
            if set(row) != set(self.intents):
                raise ValueError(
                    f"library {self.name!r}: row {memory_type!r} does not cover every intent"
                )

    @property
    def h_max(self) -> float:
        """Type's maximum entropy, log(number of types in the library)."""
        return math.log(len(self.types))

    def has_type(self, memory_type: str) -> bool:
        """Whether `memory_type` belongs to this library."""
        return memory_type in self.matrix

    def resolve_intent(self, intent: str | None) -> str:
        """The library intent to score with: `intent` if the library knows it, else general."""
        if intent is not None:
            normalised = intent.strip().lower()
            if normalised in self.intents:
                return normalised
        return GENERAL_INTENT

    def multiplier(self, memory_type: str, intent: str | None) -> float:
        """Raw type × intent multiplier; unknown types 1.0, unknown intents read as general."""
        row = self.matrix.get(memory_type)
        if row is None:
            return UNKNOWN_TYPE_MULTIPLIER
        return row[self.resolve_intent(intent)]

    def confidence_for(self, memory_type: str) -> float:
        """Default confidence of a type when the drawer carries none of its own."""
        return self.default_confidence.get(memory_type, UNKNOWN_TYPE_CONFIDENCE)


DEFAULT_LIBRARY = TypeLibrary(
    name=DEFAULT_MODE,
    types=DEFAULT_TYPES,
    intents=DEFAULT_INTENTS,
    matrix=DEFAULT_TYPE_MULTIPLIER,
    default_confidence=DEFAULT_TYPE_CONFIDENCE,
)

COMPANION_LIBRARY = TypeLibrary(
    name=COMPANION_MODE,
    types=COMPANION_TYPES,
    intents=COMPANION_INTENTS,
    matrix=COMPANION_TYPE_MULTIPLIER,
    default_confidence=COMPANION_TYPE_CONFIDENCE,
    types_carry_authority=False,
    narrative=True,
)

_LIBRARIES: Mapping[str, TypeLibrary] = {
    DEFAULT_MODE: DEFAULT_LIBRARY,
    COMPANION_MODE: COMPANION_LIBRARY,
}


def library_for(mode: str) -> TypeLibrary:
    """The type library of a deployment mode ("default" or "companion").

    Raises ValueError for any other mode; the tier's servicer maps it to InvalidInput.
    """
    library = _LIBRARIES.get(mode)
    if library is None:
        expected = " or ".join(repr(m) for m in MODES)
        raise ValueError(f"unknown deployment mode {mode!r}: expected {expected}")
    return library
