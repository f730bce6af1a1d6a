"""Type libraries: each deployment mode's memory types, intents and type × intent matrix.

The matrices and vocabularies are the seed's exact tables (docs: Scoring, Modes). They are the
product's vocabulary, shared by every tier (authoring types drafts with them, the gateway
teaches them to agents, retrieval scores with them); the scoring itself lives in
`services.retrieval.core`. Maps are read-only (`MappingProxyType`).

Decisions:

- An intent outside the library's vocabulary (unknown, empty, or the other mode's) resolves
  to "general", which both libraries share; scoring never fails on an intent string.
- A memory type outside the library scores with multiplier 1.0 and confidence 1.0. For
  dampening it counts as its own category (see retrieval's `scoring`), because it is a
  distinct value of the signal even though the matrix makes no claim about it.
- H_max for type is log(number of types in the library): log(14) for default (10 v2 +
  4 legacy), log(4) for companion. It is a schema property, so adding a type rescales
  dampening without re-tuning anything.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

# ---------------------------------------------------------------- deployment modes

# The per-store literal that picks the type library; the mode is a property of the store.
DEFAULT_MODE: Final = "default"
COMPANION_MODE: Final = "companion"
MODES: Final = (DEFAULT_MODE, COMPANION_MODE)

# Intent every unknown or foreign intent falls back to: it exists in both libraries.
GENERAL_INTENT: Final = "general"

# ---------------------------------------------------------------- type libraries

# The v2 multi-agent vocabulary: agile work artifacts plus the ADR shape, deployment-agnostic.
V2_TYPES: Final = (
    "architecture",
    "workflow",
    "implementation",
    "decision",
    "bug",
    "spike",
    "retrospective",
    "acceptance",
    "directive",
    "observation",
)

# Pre-v2 types stay writable and scorable for back-compat; new authoring should prefer v2.
LEGACY_TYPES: Final = ("fact", "consequence", "inference", "opinion")

# The default library is both together: 14 types, so type's H_max is log(14).
DEFAULT_TYPES: Final = V2_TYPES + LEGACY_TYPES

# Companion speech acts, in the priority order the `general` column encodes.
COMPANION_TYPES: Final = ("want", "preference", "opinion", "observation")

# Multi-agent question kinds, from the same engineering-work taxonomy as the types.
DEFAULT_INTENTS: Final = ("planning", "design", "debugging", "review", "history", GENERAL_INTENT)

# Companion question kinds: what the agent is asking about its one user.
COMPANION_INTENTS: Final = (
    "procedural",
    "preference",
    "reflection",
    "state_check",
    "recall",
    GENERAL_INTENT,
)


def _matrix(
    intents: tuple[str, ...], rows: dict[str, tuple[float, ...]]
) -> Mapping[str, Mapping[str, float]]:
    """Freeze a type → (one value per intent, in `intents` order) table into nested maps."""
    frozen: dict[str, Mapping[str, float]] = {}
    for memory_type, values in rows.items():
        if len(values) != len(intents):
            raise ValueError(f"row {memory_type!r} has {len(values)} cells, not {len(intents)}")
        frozen[memory_type] = MappingProxyType(dict(zip(intents, values, strict=True)))
    return MappingProxyType(frozen)


# How relevant each kind of claim is to each kind of question (seed: "v2 library" + "legacy").
DEFAULT_TYPE_MULTIPLIER: Final = _matrix(
    DEFAULT_INTENTS,
    {
        #                 planning design debugging review history general
        "architecture": (1.40, 1.30, 0.60, 1.00, 1.00, 1.00),
        "workflow": (1.20, 1.10, 0.80, 1.00, 1.00, 1.00),
        "implementation": (1.00, 0.80, 1.00, 1.00, 1.20, 1.00),
        "decision": (1.30, 1.50, 0.70, 1.10, 1.00, 1.10),
        "bug": (0.80, 0.70, 1.50, 1.20, 1.00, 1.00),
        "spike": (1.10, 1.20, 1.20, 1.00, 1.00, 1.00),
        "retrospective": (1.00, 0.90, 1.00, 1.50, 1.30, 1.00),
        "acceptance": (0.90, 0.80, 0.90, 1.30, 1.20, 1.00),
        "directive": (1.50, 1.20, 0.90, 1.10, 1.00, 1.20),
        "observation": (0.90, 0.80, 1.00, 0.90, 1.00, 1.00),
        "fact": (1.00, 1.00, 1.00, 1.00, 1.00, 1.00),
        "consequence": (1.00, 1.00, 1.00, 1.00, 1.00, 1.00),
        "inference": (0.85, 0.90, 0.95, 0.95, 1.00, 0.95),
        "opinion": (0.70, 0.70, 0.75, 0.80, 0.90, 0.80),
    },
)

# Each companion intent amplifies its primary speech act (seed: "companion · type × intent").
COMPANION_TYPE_MULTIPLIER: Final = _matrix(
    COMPANION_INTENTS,
    {
        #              procedural preference reflection state_check recall general
        "want": (1.50, 1.10, 1.00, 1.10, 1.00, 1.30),
        "preference": (1.10, 1.50, 1.10, 1.00, 1.00, 1.20),
        "opinion": (1.00, 1.00, 1.50, 1.00, 0.90, 1.10),
        "observation": (0.90, 0.90, 1.00, 1.40, 1.40, 1.00),
    },
)

# A type outside the store's library is scored neutrally: no claim about it was ever made.
UNKNOWN_TYPE_MULTIPLIER: Final = 1.0

# ---------------------------------------------------------------- conventions

# A drawer is a diary note when its room name contains this (case-insensitive).
DIARY_ROOM_MARKER: Final = "diary"

# Historical questions are where diary notes belong (seed: "historical queries (recall,
# reflection)"): history in the default library, recall and reflection in companion.
DIARY_EXEMPT_INTENTS: Final = frozenset({"history", "recall", "reflection"})

# Deprecated drawers bind as excluded except when the question is about the past.
DEPRECATED_VISIBLE_INTENTS: Final = frozenset({"history"})

# ---------------------------------------------------------------- default confidence

# Confidence is a thin backup signal; it only tilts where the type is itself a hedged claim.
# Default library: inference and opinion are unverified beliefs, so they sit one and two
# confidence levels below certain (0.8, 0.6 land in distinct bins of the 5-level scale,
# which is what lets the dampened signal see them); every other type is 1.0.
DEFAULT_TYPE_CONFIDENCE: Final[Mapping[str, float]] = MappingProxyType(
    {memory_type: 1.0 for memory_type in DEFAULT_TYPES} | {"inference": 0.8, "opinion": 0.6}
)

# Companion: a speech act records faithfully what the user expressed (their opinion is
# really their opinion), so nothing here is hedged; the matrix already orders the acts.
COMPANION_TYPE_CONFIDENCE: Final[Mapping[str, float]] = MappingProxyType(
    {memory_type: 1.0 for memory_type in COMPANION_TYPES}
)

# Unknown types and drawers without their own value are taken at face value.
UNKNOWN_TYPE_CONFIDENCE: Final = 1.0


# ---------------------------------------------------------------- the libraries


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
    # The claim shapes that rule their topic (the seed's "high-authority claim shapes" that
    # planning boosts: directive, architecture, decision). A rule rarely echoes the words of
    # the question it governs, so topical authority lets one stand on a discussion
    # neighbour's evidence across the wider binding window, as a pin does (retrieval's
    # `scoring`). Empty where types carry no authority.
    ruling_types: frozenset[str] = frozenset()
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
        if not self.ruling_types <= set(self.types):
            raise ValueError(f"library {self.name!r}: ruling types must be types of the library")
        if self.ruling_types and not self.types_carry_authority:
            raise ValueError(f"library {self.name!r}: only types that carry authority can rule")

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
    ruling_types=frozenset({"directive", "architecture", "decision"}),
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
