"""Every number the retrieval scorer uses, in one place, each with the reason it exists.

The type libraries and their type × intent matrices (copied verbatim from the scoring design;
their cells are product-of-mechanism, never hand-tuned per benchmark) are the shared
vocabulary in `services.vocabulary`. Everything a later evaluation may tune
(`DEFAULT_MIN_RELEVANCE`, the fusion and topical constants) is a named constant here so the
change is one line with a reason, not a hunt through the scorer.

Maps are read-only (`MappingProxyType`): a module-level table that a caller can mutate would
be hidden global state shared by every store.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from services.runtime import fusion
from services.vocabulary import COMPANION_MODE, DEFAULT_MODE

# ---------------------------------------------------------------- confidence

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
# Companion intents (the seed names no weight for them): what the user wants, prefers, thinks
# or once told the companion does not grow less true because nobody asked about it lately (a
# changed preference is deprecated, not decayed), so those intents ignore salience. Measured
# on Engram's companion development sets: right@1 0.44 → 0.66 against salience as it is.
# state_check asks about *now* and keeps half the exponent: at the full exponent a pinned
# memory (which never decays) about something else outranked the months-old observation of
# the current state (salience 0.85 against 0.39); at 0.5 the spread halves (0.92 against
# 0.62). Companion right@1 0.703 → 0.784 (set c) and 0.639 → 0.667 (d), nothing lower, on
# the sets it was chosen on; unchanged on companion_e (docs/scoring.md).
# history asks about the past, as companion recall does: a diary of the night an incident was
# handled, or the retrospective of a pilot, is no less the answer because nobody read it
# lately. At 1.0 a months-old diary (salience 0.28) lost "what was that night like?" to a
# fresher implementation note that merely named the incident. Own default sets, right@1
# given / inferred: default_d 0.778 / 0.778 → 0.796 / 0.815, default_e 0.729 → 0.757 given,
# the rest unchanged; 0.5 gained on d's given run only (docs/decisions/0012, session 18).
W_SAL_BY_INTENT: Final[Mapping[str, float]] = MappingProxyType(
    {
        "debugging": 1.5,
        "planning": 0.8,
        "procedural": 0.0,
        "preference": 0.0,
        "reflection": 0.0,
        "recall": 0.0,
        "state_check": 0.5,
        "history": 0.0,
    }
)

# Every other intent takes salience as it is.
DEFAULT_W_SAL: Final = 1.0


# ---------------------------------------------------------------- similarity, boost, diary

# Below −0.3 a result is reliably anti-correlated, not weakly distant: drop before scoring.
SIMILARITY_FLOOR: Final = -0.3

# FTS5 hits are lifted additively and small: enough to break ties, never enough to dominate.
# Defined with the fusion it sits on top of, which raw search shares.
KEYWORD_BOOST: Final = fusion.KEYWORD_BOOST

# Personal notes must not out-rank canonical answers; small because it fixes one noise pattern.
DIARY_PENALTY: Final = 0.85

# Which rooms are diaries, which intents see diary notes and deprecated drawers at full
# weight: conventions every face teaches, in `services.vocabulary.libraries`.

# ---------------------------------------------------------------- result size and silence

# Multi-agent retrieval picks a canonical drawer; ten leaves room for the runner-ups.
DEFAULT_N_RESULTS: Final = 10

# Companion retrieval returns a set to compose a narrative from, not a top-1 (seed: ~5).
COMPANION_DEFAULT_N_RESULTS: Final = 5

# n_results when the request leaves it unset, per deployment mode.
DEFAULT_N_RESULTS_BY_MODE: Final[Mapping[str, int]] = MappingProxyType(
    {DEFAULT_MODE: DEFAULT_N_RESULTS, COMPANION_MODE: COMPANION_DEFAULT_N_RESULTS}
)

# Silence: when a request sets no min_score, a query is answered only if its best candidate
# stands on at least this relevance — cosine + 0.4 × keyword coverage, the absolute form of
# the fused relevance, before any metadata signal (a drawer lifted by topical authority
# stands on its neighbour's) — and comes back empty otherwise. Relevance, not the final
# score: the metadata signals say which relevant drawer is right, never whether anything is
# relevant, so a debugging query's salience exponent or an old decision's low salience
# cannot silence an answer. Calibrated on Engram's own development sets, never the shared dev
# sets (docs/decisions/0006-default-min-score.md has the curves). A store or request that
# sets min_score gets a floor on final_score instead, as before. Each floor is the highest
# that answers 95 % of the answerable queries of Engram's sets in its mode (five companion
# writers since session 15: 0.35; no companion floor separates near-misses from answers).
DEFAULT_MIN_RELEVANCE: Final[Mapping[str, float]] = MappingProxyType(
    {DEFAULT_MODE: 0.60, COMPANION_MODE: 0.35}
)

# Once a query is answered, the other results may stand this much below the floor: the
# floor decides *whether* anything answers; a narrative set's supporting memories are
# rightly less similar to the question than its best one.
RESULT_RELEVANCE_MARGIN: Final = 0.15

# A narrative set should span the speech acts (a preference, a want, an observation...):
# each drawer of a type already chosen scales a candidate's score by this when the set is
# filled greedily. The best drawer always comes first; only the rest of the set is spread.
NARRATIVE_REPEAT_FACTOR: Final = 0.8

# A narrative set gathers the topic of what it has chosen: a topic mate (same topic tag;
# core.topical.topic_mates) of a chosen drawer of another speech act stands on at least this
# share of that drawer's score. Below 1, so a gathered memory never ties the one it was
# gathered by (decision 0028).
NARRATIVE_GATHER_SHARE: Final = 0.9

# ---------------------------------------------------------------- pin status and topics

# Pinning is explicit authority (seed: "explicit authority that survives independently of
# recency"): beyond not decaying, a pinned drawer outweighs an active one. Not dampened, like
# the diary penalty: a pin is a deliberate act, and its lift must not shrink because the pool
# holds few pins. Uniform pin status multiplies every candidate alike and changes no ranking.
PINNED_FACTOR: Final = 1.1

# A deprecated drawer shown outside history intents (include_deprecated) is there to be seen,
# never to win: it scores at a fifth. History intents take it as it is.
DEPRECATED_FACTOR: Final = 0.2

# Drawer-to-drawer cosine at which two memories are restatements of one subject (topical.py).
NEIGHBOUR_COSINE: Final = 0.55

# Topical authority lifts a drawer onto a neighbour's evidence only when its own relevance is
# within this ratio of the neighbour's: the seed's override window (~1.7×), widened a little
# because the neighbour is on the same topic by construction. Past it, the drawer is not
# about what the query asks, whatever its topic tag says.
TOPICAL_OVERRIDE_WINDOW: Final = 2.0
# Metadata reorders the candidates that answer the query; it never lifts one that answers
# less than half as well as the best above them (the seed's override window, as topical
# authority reads it). A memory whose relevance, its own or a topical neighbour's it stands
# on, is under 1/RELEVANCE_OVERRIDE_WINDOW of the best candidate's is ranked after every
# candidate inside the window, in its own score order. Without it a fresh pinned rule on
# another subject (salience 0.85 against a 10-month-old memory's 0.26) outranks the memory
# the question names (docs/decisions/0012).
RELEVANCE_OVERRIDE_WINDOW: Final = 2.0
# A binding drawer stands on a neighbour's evidence while its own relevance is at least a
# quarter of the neighbour's. Two things bind: a pin over the unpinned drawers on its topic
# (the seed: pinned binds over active), and a ruling type (directive, architecture, decision:
# `TypeLibrary.ruling_types`) over the discussion on its topic that is neither ruling nor
# pinned (the thesis: the decision wins over the talk about it). A rule or constraint rarely
# echoes the words of the question it governs ("can I say yes to the upgrade?" against "a
# hard ceiling on what the project may cost"; "was widening the overrides consistent with
# our rules?" against the rule itself). Drawn for pins on Engram's own thesis sets:
# pinned-vs-recent right@1 rose at windows 2.5, 3 and 4 and held from 4 to 8; ruling types
# take the same window (docs/decisions/0012).
BINDING_OVERRIDE_WINDOW: Final = 4.0

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

# ---------------------------------------------------------------- intent classifier

# An inferred intent at least this probable is used alone; below it the query is scored with
# a mixture of the likely intents (intent.py). On Engram's validation queries the classifier
# is right about 9 times in 10 above this probability and about 6 in 10 below it.
INTENT_CONFIDENT: Final = 0.6

# Intents below this probability are left out of a mixture (then the rest renormalised).
INTENT_MIXTURE_MIN: Final = 0.1
