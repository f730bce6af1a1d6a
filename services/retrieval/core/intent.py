"""Intent inference: a small trained classifier over the query's embedding and its words.

Scoring needs an intent and most agents do not pass one. The classifier is a multinomial
logistic regression per type library (`services.runtime.textclass`, shared with authoring's
sentence typing), trained on Engram's own labelled query sets
(`eval/sets/intent/`, hundreds of queries per intent in many domains and phrasings) by
`services.retrieval.intent_training`, and shipped as a JSON model beside this module. Its
inputs are the query embedding the search computes anyway and a bag of the query's words and
word pairs (the vocabulary is learned from the training queries, never written by hand), so
inference costs one small matrix product.

Decisions (docs/decisions/0013-intent-inference.md):

- Probabilities, not a label. When the most likely intent has at least `INTENT_CONFIDENT`
  probability it is used alone; below that the query is scored with a *mixture*: the type ×
  intent columns, salience exponents and diary exemption weighted by the probabilities of the
  intents that hold at least `INTENT_MIXTURE_MIN` (renormalised). An unsure query is scored as
  what it probably is, not forced into one intent or pushed to "general".
- The reasons name the probabilities and the words that pushed the winner most, so a caller
  can see why.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from services.retrieval.core.constants import INTENT_CONFIDENT, INTENT_MIXTURE_MIN
from services.runtime.textclass import LinearTextClassifier, Vector, learned_from_json

MODEL_DIR = Path(__file__).with_name("intent_models")


@dataclass(frozen=True, slots=True)
class IntentGuess:
    """The intent to report, its probability, the mixture scored with, and why."""

    intent: str
    confidence: float
    weights: Mapping[str, float] | None  # None: `intent` alone
    reasons: list[str]


@dataclass(frozen=True, kw_only=True)
class IntentModel(LinearTextClassifier):
    """A trained classifier for one library: its labels are the library's intents."""

    library: str

    @property
    def intents(self) -> tuple[str, ...]:
        return self.labels

    def classify(self, text: str, vector: Vector, *, fingerprint: str = "") -> IntentGuess:
        """The guess for one query: a single intent when sure, a mixture when not. When the
        query was embedded by a model the classifier was not trained on (`fingerprint`, the
        vector's dimension), its words alone decide and the reasons say so."""
        unfit = self.unfit_for(int(np.asarray(vector).size), fingerprint)
        probs = self.probabilities(text, None if unfit else vector)
        ordered = sorted(probs.items(), key=lambda kv: (-kv[1], self.intents.index(kv[0])))
        best, p_best = ordered[0]
        shown = ", ".join(f"{intent} {p:.2f}" for intent, p in ordered[:3])
        reasons = [f"classifier: {shown}"]
        if unfit:
            reasons.append(
                f"words only: {unfit}; retrain it for this model (`engram intent-model train`)"
            )
        words = self.top_terms(text, best)
        if words:
            reasons.append(f"words for {best}: {', '.join(w.replace('_', ' ') for w in words)}")
        if p_best >= INTENT_CONFIDENT:
            return IntentGuess(best, p_best, None, reasons)
        kept = {intent: p for intent, p in ordered if p >= INTENT_MIXTURE_MIN}
        total = sum(kept.values())
        mixture = {intent: p / total for intent, p in kept.items()}
        reasons.append(
            f"unsure (best {p_best:.2f} < {INTENT_CONFIDENT:.2f}): scored as a mixture of "
            + ", ".join(f"{intent} {w:.2f}" for intent, w in mixture.items())
        )
        return IntentGuess(best, p_best, mixture, reasons)

    def to_json(self) -> dict[str, Any]:
        """The model as the JSON document `load_intent_model` reads."""
        return {"library": self.library, "intents": list(self.intents), **self.weights_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> IntentModel:
        return cls(
            library=str(data["library"]),
            labels=tuple(data["intents"]),
            **learned_from_json(data),
        )


def model_path(library: str) -> Path:
    """Where the shipped model of a library lives."""
    return MODEL_DIR / f"{library}.json"


@cache
def load_intent_model(library: str) -> IntentModel:
    """The shipped classifier of a library ("default" or "companion")."""
    path = model_path(library)
    if not path.is_file():
        raise FileNotFoundError(
            f"no intent model for library {library!r} at {path}: run `engram intent-model train`"
        )
    model = IntentModel.from_json(json.loads(path.read_text(encoding="utf-8")))
    if model.library != library:
        raise ValueError(f"{path} holds the model of library {model.library!r}")
    return model
