"""A small, explainable intent classifier: cue phrases plus optional prototype similarity.

Scoring needs an intent; a request may leave it empty. This guesses one from the query text in
the store's library vocabulary, and every piece of evidence it used comes back as a reason.

Evidence per intent, each in [0, 1]:

- cues: the library's cue phrases found in the lower-cased query (word boundaries; a trailing
  "*" matches a stem). With h distinct hits, cue = 1 − 0.5^h: one hit is 0.5, two 0.75.
- prototypes (only when both `query_vector` and `prototypes` are given): the cosine between
  the query's embedding and the intent's prototype (one vector, or several example vectors of
  which the best counts), rescaled so cosines at or under 0.3 count as nothing and 1.0 as
  full: proto = clamp((cos − 0.3) / 0.7, 0, 1). `INTENT_EXAMPLES` holds the example query
  texts a caller embeds to build the prototypes.
- combined as independent evidence (noisy-OR): e = 1 − (1 − cue)(1 − proto).

The intent with the most evidence wins (ties go to the library's intent order, so the result
is deterministic). If no intent reaches 0.3 the query is "general" with confidence 0.2: an
honest low-confidence fallback rather than a forced guess. Otherwise confidence is the winner's
evidence less half the runner-up's, so an ambiguous query reports less certainty.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from services.retrieval.core.constants import (
    GENERAL_INTENT,
    INTENT_CUE_STRENGTH,
    INTENT_FALLBACK_CONFIDENCE,
    INTENT_MIN_EVIDENCE,
    INTENT_PROTOTYPE_FLOOR,
    INTENT_RUNNER_UP_PENALTY,
)
from services.retrieval.core.library import TypeLibrary

Vector = npt.NDArray[np.floating]


@dataclass(frozen=True, slots=True)
class IntentGuess:
    """The guessed intent, how sure the guess is (0..1), and the evidence behind it."""

    intent: str
    confidence: float
    reasons: list[str]


@lru_cache(maxsize=512)
def _cue_pattern(cue: str) -> re.Pattern[str]:
    stem = cue.endswith("*")
    words = cue.rstrip("*").split()
    body = r"\s+".join(re.escape(word) for word in words)
    tail = r"\w*" if stem else ""
    return re.compile(rf"(?<!\w){body}{tail}(?!\w)")


def _normalise(query: str) -> str:
    # Curly apostrophes come from phones and editors; cue lists use the straight one.
    return query.lower().replace("\u2019", "'")


def matched_cues(query: str, cues: tuple[str, ...]) -> list[str]:
    """The cues of one intent that occur in `query`, in cue-list order."""
    text = _normalise(query)
    return [cue for cue in cues if _cue_pattern(cue).search(text)]


def prototype_cosine(query_vector: Vector, prototype: Vector) -> float:
    """Cosine between a query embedding and a prototype: one vector, or the best row of many.

    Zero vectors have no direction and score 0.0.
    """
    query = np.asarray(query_vector, dtype=np.float64)
    rows = np.asarray(prototype, dtype=np.float64)
    if query.ndim != 1:
        raise ValueError(f"query_vector must be one vector, got shape {query.shape}")
    if rows.ndim == 1:
        rows = rows[np.newaxis, :]
    if rows.ndim != 2 or rows.shape[1] != query.shape[0]:
        raise ValueError(
            f"prototype of shape {rows.shape} does not match a query vector of "
            f"dimension {query.shape[0]}: embed the examples with the query's model"
        )
    query_norm = float(np.linalg.norm(query))
    row_norms = np.linalg.norm(rows, axis=1)
    if query_norm == 0.0 or not np.any(row_norms > 0.0):
        return 0.0
    safe_norms = np.where(row_norms > 0.0, row_norms, 1.0)
    cosines = (rows @ query) / (safe_norms * query_norm)
    cosines = np.where(row_norms > 0.0, cosines, 0.0)
    return float(np.max(cosines))


def _cue_evidence(hits: int) -> float:
    return 1.0 - (1.0 - INTENT_CUE_STRENGTH) ** hits


def _prototype_evidence(cosine: float) -> float:
    scaled = (cosine - INTENT_PROTOTYPE_FLOOR) / (1.0 - INTENT_PROTOTYPE_FLOOR)
    return min(1.0, max(0.0, scaled))


def classify_intent(
    query: str,
    library: TypeLibrary,
    *,
    query_vector: Vector | None = None,
    prototypes: Mapping[str, Vector] | None = None,
) -> IntentGuess:
    """Guess the intent of `query` in `library`'s vocabulary, with the reasons for the guess.

    `prototypes` maps intents to embeddings of their example queries; intents the library does
    not know are ignored. Without both `query_vector` and `prototypes`, only cues count.
    """
    reasons: list[str] = []
    evidence: dict[str, float] = {}
    use_prototypes = query_vector is not None and prototypes is not None
    if (query_vector is None) != (prototypes is None):
        reasons.append("prototype evidence skipped: needs both a query vector and prototypes")

    for intent in library.intents:
        hits = matched_cues(query, library.intent_cues.get(intent, ()))
        reasons.extend(f"cue {cue!r} → {intent}" for cue in hits)
        cue = _cue_evidence(len(hits))
        proto = 0.0
        if use_prototypes and query_vector is not None and prototypes is not None:
            prototype = prototypes.get(intent)
            if prototype is not None:
                cosine = prototype_cosine(query_vector, prototype)
                proto = _prototype_evidence(cosine)
                if proto > 0.0:
                    reasons.append(f"prototype cosine {cosine:.2f} → {intent}")
        evidence[intent] = 1.0 - (1.0 - cue) * (1.0 - proto)

    # Stable sort: equal evidence keeps the library's intent order, so ties are deterministic.
    ordered = sorted(library.intents, key=lambda intent: -evidence[intent])
    best, runner_up = ordered[0], ordered[1]
    best_evidence, runner_up_evidence = evidence[best], evidence[runner_up]

    if best_evidence < INTENT_MIN_EVIDENCE:
        reasons.append(
            f"no intent reached evidence {INTENT_MIN_EVIDENCE:.2f} "
            f"(best {best} {best_evidence:.2f}): falling back to {GENERAL_INTENT}"
        )
        return IntentGuess(GENERAL_INTENT, INTENT_FALLBACK_CONFIDENCE, reasons)

    confidence = best_evidence - INTENT_RUNNER_UP_PENALTY * runner_up_evidence
    confidence = min(1.0, max(0.0, confidence))
    reasons.append(
        f"{best}: evidence {best_evidence:.2f}, runner-up {runner_up} {runner_up_evidence:.2f}"
    )
    return IntentGuess(best, confidence, reasons)
