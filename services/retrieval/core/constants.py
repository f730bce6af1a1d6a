"""Every number the retrieval scorer uses, in one place, each with the reason it exists.

The two type × intent matrices are copied verbatim from the scoring design (docs: Scoring,
Modes); their cells are product-of-mechanism, never hand-tuned per benchmark. Everything a
later evaluation may tune (`DEFAULT_MIN_SCORE`, the intent classifier's weights) is a named
constant here so the change is one line with a reason, not a hunt through the scorer.

Maps are read-only (`MappingProxyType`): a module-level table that a caller can mutate would
be hidden global state shared by every store.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
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

# ---------------------------------------------------------------- confidence

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

# The confidence schema is a 5-level scale (0.2 · 0.4 · 0.6 · 0.8 · 1.0); H_max = log(levels).
CONFIDENCE_LEVELS: Final = 5

# The seed's schema-derived maximum entropy for confidence.
CONFIDENCE_H_MAX: Final = math.log(CONFIDENCE_LEVELS)

# Exponent on confidence; the seed names it but gives no number, so it is the identity.
W_CONF: Final = 1.0

# ---------------------------------------------------------------- authority

# Injectable tiers, strongest first (seed: directive 1.6× > advisory 1.3× > execution 1.1×
# > worker 1.0×). Off unless the store opts in with legacy_authority.
AUTHORITY_TIER_BOOST: Final[Mapping[str, float]] = MappingProxyType(
    {"directive": 1.6, "advisory": 1.3, "execution": 1.1, "worker": 1.0}
)

# An author the profile does not name is a worker: no boost is claimed for an unknown voice.
DEFAULT_AUTHORITY_TIER: Final = "worker"

# Authority's H_max = log(n_tiers), a schema property that rescales if a tier is added.
AUTHORITY_H_MAX: Final = math.log(len(AUTHORITY_TIER_BOOST))

# Exponent on authority; the seed names it but gives no number, so it is the identity.
W_AUTH: Final = 1.0

# ---------------------------------------------------------------- salience

# Grid-search result: gentle enough that a 1.6× directive from 20 weeks ago still wins.
SALIENCE_DECAY_PER_WEEK: Final = 0.025

# Each recorded retrieval is feedback that the drawer was worth serving.
SALIENCE_BUMP: Final = 0.1

# Decay never erases a memory; a floor keeps old drawers reachable by strong similarity.
SALIENCE_FLOOR: Final = 0.1

# Bumps saturate, so frequently served drawers cannot run away from the rest.
SALIENCE_CAP: Final = 1.0

# Seconds per week, the unit the decay rate is stated in.
SECONDS_PER_WEEK: Final = 7 * 24 * 60 * 60

# w_sal: debugging wants recent state (1.5); planning wants authority over recency (0.8).
W_SAL_BY_INTENT: Final[Mapping[str, float]] = MappingProxyType({"debugging": 1.5, "planning": 0.8})

# Every other intent takes salience as it is.
DEFAULT_W_SAL: Final = 1.0

# ---------------------------------------------------------------- similarity, boost, diary

# Below −0.3 a result is reliably anti-correlated, not weakly distant: drop before scoring.
SIMILARITY_FLOOR: Final = -0.3

# FTS5 hits are lifted additively and small: enough to break ties, never enough to dominate.
KEYWORD_BOOST: Final = 0.04

# Personal notes must not out-rank canonical answers; small because it fixes one noise pattern.
DIARY_PENALTY: Final = 0.85

# A drawer is a diary note when its room name contains this (case-insensitive).
DIARY_ROOM_MARKER: Final = "diary"

# Historical questions are where diary notes belong (seed: "historical queries (recall,
# reflection)"): history in the default library, recall and reflection in companion.
DIARY_EXEMPT_INTENTS: Final = frozenset({"history", "recall", "reflection"})

# Deprecated drawers bind as excluded except when the question is about the past.
DEPRECATED_VISIBLE_INTENTS: Final = frozenset({"history"})

# ---------------------------------------------------------------- result size and silence

# Multi-agent retrieval picks a canonical drawer; ten leaves room for the runner-ups.
DEFAULT_N_RESULTS: Final = 10

# Companion retrieval returns a set to compose a narrative from, not a top-1 (seed: ~5).
COMPANION_DEFAULT_N_RESULTS: Final = 5

# n_results when the request leaves it unset, per deployment mode.
DEFAULT_N_RESULTS_BY_MODE: Final[Mapping[str, int]] = MappingProxyType(
    {DEFAULT_MODE: DEFAULT_N_RESULTS, COMPANION_MODE: COMPANION_DEFAULT_N_RESULTS}
)

# Floor on final_score below which silence is the right answer. Calibrated on the thesis dev
# sets with all-MiniLM-L6-v2 (docs/decisions/0006-default-min-score.md): the best off-topic
# ("silence") query there reached 0.301 (default) and 0.350 (companion), so each floor sits
# just above it. The cost is measured, not hidden: the same floors silence 3 of 32 answerable
# default queries and 6 of 13 companion ones whose best drawer scores lower. Companion is
# stricter because there min_score is load-bearing: returning nothing makes the agent ask the
# user, which is how companion memory grows. A store overrides these with its own defaults.
DEFAULT_MIN_SCORE: Final[Mapping[str, float]] = MappingProxyType(
    {DEFAULT_MODE: 0.305, COMPANION_MODE: 0.355}
)

# ---------------------------------------------------------------- ranker modes

# full: the 6-signal formula + boost; hybrid: cosine + boost; cosine: raw similarity over the
# merged candidates. keyword and dense are single-retriever baselines for evaluation (BEIR):
# keyword keeps the FTS5 hits only, in BM25 order; dense keeps the vector hits only, by cosine.
RANKER_FULL: Final = "full"
RANKER_HYBRID: Final = "hybrid"
RANKER_COSINE: Final = "cosine"
RANKER_KEYWORD: Final = "keyword"
RANKER_DENSE: Final = "dense"
RANKERS: Final = (RANKER_FULL, RANKER_HYBRID, RANKER_COSINE, RANKER_KEYWORD, RANKER_DENSE)

# ---------------------------------------------------------------- pin status

PIN_ACTIVE: Final = "active"
PIN_PINNED: Final = "pinned"
PIN_DEPRECATED: Final = "deprecated"
PIN_STATUSES: Final = (PIN_ACTIVE, PIN_PINNED, PIN_DEPRECATED)

# ---------------------------------------------------------------- intent classifier

# Cue phrases per intent, matched on word boundaries in the lower-cased query; a trailing "*"
# matches any word continuing the stem ("fail*" → fails, failing, failed). Cues are the
# explainable half of the classifier: every hit is reported as a reason.
INTENT_CUES: Final[Mapping[str, Mapping[str, tuple[str, ...]]]] = MappingProxyType(
    {
        DEFAULT_MODE: MappingProxyType(
            {
                "debugging": (
                    "error*",
                    "bug*",
                    "crash*",
                    "fail*",
                    "stack trace",
                    "traceback",
                    "exception",
                    "why does",
                    "why is",
                    "broken",
                    "fix*",
                    "regression",
                ),
                "planning": (
                    "plan*",
                    "should we",
                    "next",
                    "roadmap",
                    "going to",
                    "will we",
                    "priorit*",
                    "milestone*",
                ),
                "design": (
                    "design*",
                    "architect*",
                    "how should",
                    "structure*",
                    "interface*",
                    "schema*",
                    "trade-off*",
                    "tradeoff*",
                ),
                "review": (
                    "review*",
                    "assess*",
                    "evaluat*",
                    "how did",
                    "went well",
                    "retro*",
                    "lessons learned",
                    "post-mortem",
                    "postmortem",
                ),
                "history": (
                    "when did",
                    "history",
                    "previously",
                    "originally",
                    "used to",
                    "what happened",
                    "last time",
                    "back then",
                ),
            }
        ),
        COMPANION_MODE: MappingProxyType(
            {
                "procedural": (
                    "how do i",
                    "what should i do",
                    "remind*",
                    "supposed to",
                    "steps",
                    "routine",
                ),
                "preference": (
                    "like",
                    "likes",
                    "prefer*",
                    "favorite*",
                    "favourite*",
                    "enjoy*",
                    "love*",
                    "dislike*",
                    "hate*",
                ),
                "reflection": (
                    "think",
                    "thinks",
                    "feel about",
                    "feels about",
                    "opinion*",
                    "view on",
                    "believe*",
                ),
                "state_check": (
                    "how is",
                    "how are",
                    "doing",
                    "mood",
                    "lately",
                    "today",
                    "feeling",
                ),
                "recall": ("remember*", "what did", "when did", "recall*", "told me"),
            }
        ),
    }
)

# A few example queries per intent. A caller embeds these (mean or stack per intent) and
# passes them to classify_intent as prototypes; the texts live here so every tier embeds
# the same examples and the prototype half of the classifier stays reproducible.
INTENT_EXAMPLES: Final[Mapping[str, Mapping[str, tuple[str, ...]]]] = MappingProxyType(
    {
        DEFAULT_MODE: MappingProxyType(
            {
                "planning": (
                    "What should we build next quarter?",
                    "What is the plan for the migration?",
                    "Which features are on the roadmap?",
                ),
                "design": (
                    "What is the architecture of this system?",
                    "How should the storage layer be structured?",
                    "What interface does the scoring module expose?",
                ),
                "debugging": (
                    "Why does the search return an empty list?",
                    "The daemon crashes on startup with a stack trace",
                    "How do I fix the failing embedding test?",
                ),
                "review": (
                    "How did the last release go?",
                    "What went well in the refactor?",
                    "Evaluate the new authoring prompt",
                ),
                "history": (
                    "When did we switch embedders?",
                    "What did the system originally use for storage?",
                    "What happened to the old monolithic service?",
                ),
                GENERAL_INTENT: (
                    "Tell me about the project",
                    "What do we know about the retrieval log?",
                ),
            }
        ),
        COMPANION_MODE: MappingProxyType(
            {
                "procedural": (
                    "What did they ask me to remind them about?",
                    "How do I help them with the morning routine?",
                    "What should I do before their appointment?",
                ),
                "preference": (
                    "What food do they like?",
                    "Do they prefer mornings or evenings?",
                    "What is their favorite kind of music?",
                ),
                "reflection": (
                    "What do they think about meal kits?",
                    "How do they feel about their new job?",
                    "What is their opinion on remote work?",
                ),
                "state_check": (
                    "How are they doing today?",
                    "How has their mood been lately?",
                    "Are they feeling tired this week?",
                ),
                "recall": (
                    "What did they tell me about their trip?",
                    "When did they start the new job?",
                    "Do I remember what happened at the dinner?",
                ),
                GENERAL_INTENT: (
                    "What should we do for dinner?",
                    "Tell me about them",
                ),
            }
        ),
    }
)

# Cue evidence: each further distinct cue halves the remaining doubt (1 hit 0.5, 2 hits 0.75).
INTENT_CUE_STRENGTH: Final = 0.5

# Prototype cosines below this are embedder noise for short queries; above, evidence rises
# linearly to 1.0 at cosine 1.0.
INTENT_PROTOTYPE_FLOOR: Final = 0.3

# Below this combined evidence no specific intent is claimed: the query is "general".
INTENT_MIN_EVIDENCE: Final = 0.3

# Confidence reported when falling back to "general" on no evidence: low, by design.
INTENT_FALLBACK_CONFIDENCE: Final = 0.2

# A runner-up's evidence counts against the winner at half weight: ambiguity costs confidence.
INTENT_RUNNER_UP_PENALTY: Final = 0.5
