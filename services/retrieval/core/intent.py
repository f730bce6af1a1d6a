"""Intent inference: a small trained classifier over the query's embedding and its words.

Scoring needs an intent and most agents do not pass one. The classifier is a multinomial
logistic regression per type library, trained on Engram's own labelled query sets
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
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from services.retrieval.core.constants import INTENT_CONFIDENT, INTENT_MIXTURE_MIN

Vector = npt.NDArray[np.floating]

MODEL_DIR = Path(__file__).with_name("intent_models")
_WORD = re.compile(r"[a-z0-9']+")


def query_terms(text: str) -> set[str]:
    """The words and adjacent word pairs of a query, lower-cased (the classifier's tokens)."""
    words = _WORD.findall(text.lower().replace("\u2019", "'"))
    return set(words) | {f"{a}_{b}" for a, b in pairwise(words)}


@dataclass(frozen=True, slots=True)
class IntentGuess:
    """The intent to report, its probability, the mixture scored with, and why."""

    intent: str
    confidence: float
    weights: Mapping[str, float] | None  # None: `intent` alone
    reasons: list[str]


@dataclass(frozen=True)
class IntentModel:
    """A trained classifier for one library: weights over [embedding ‖ bag of terms]."""

    library: str
    intents: tuple[str, ...]
    vocabulary: tuple[str, ...]
    weights: npt.NDArray[np.float64]  # (dimension + len(vocabulary), len(intents))
    bias: npt.NDArray[np.float64]  # (len(intents),)
    dimension: int
    metadata: Mapping[str, Any]

    def __post_init__(self) -> None:
        expected = (self.dimension + len(self.vocabulary), len(self.intents))
        if self.weights.shape != expected or self.bias.shape != (len(self.intents),):
            raise ValueError(
                f"intent model {self.library!r}: weights {self.weights.shape} and bias "
                f"{self.bias.shape} do not match {expected}"
            )

    @cached_property
    def _index(self) -> dict[str, int]:
        return {term: index for index, term in enumerate(self.vocabulary)}

    def features(self, text: str, vector: Vector) -> npt.NDArray[np.float64]:
        """The model's input for one query: its unit embedding, then its term indicators
        scaled to unit length."""
        embedding = np.asarray(vector, dtype=np.float64).reshape(-1)
        if embedding.shape[0] != self.dimension:
            raise ValueError(
                f"the intent model expects {self.dimension}-dimensional embeddings, got "
                f"{embedding.shape[0]}: retrain it for this embedding model"
            )
        norm = float(np.linalg.norm(embedding))
        if norm > 0.0:
            embedding = embedding / norm
        terms = np.zeros(len(self.vocabulary), dtype=np.float64)
        hits = [self._index[t] for t in query_terms(text) if t in self._index]
        if hits:
            terms[hits] = 1.0 / math.sqrt(len(hits))
        return np.concatenate([embedding, terms])

    def probabilities(self, text: str, vector: Vector) -> dict[str, float]:
        """P(intent | query) for every intent of the library."""
        logits = self.features(text, vector) @ self.weights + self.bias
        logits -= logits.max()
        exp = np.exp(logits)
        probs = exp / exp.sum()
        return {intent: float(p) for intent, p in zip(self.intents, probs, strict=True)}

    def top_terms(self, text: str, intent: str, limit: int = 3) -> list[str]:
        """The query's terms that pushed `intent` most (positive weight), strongest first."""
        column = self.intents.index(intent)
        offset = self.dimension
        scored = [
            (float(self.weights[offset + self._index[t], column]), t)
            for t in query_terms(text)
            if t in self._index
        ]
        return [t for w, t in sorted(scored, reverse=True)[:limit] if w > 0.0]

    def classify(self, text: str, vector: Vector) -> IntentGuess:
        """The guess for one query: a single intent when sure, a mixture when not."""
        probs = self.probabilities(text, vector)
        ordered = sorted(probs.items(), key=lambda kv: (-kv[1], self.intents.index(kv[0])))
        best, p_best = ordered[0]
        shown = ", ".join(f"{intent} {p:.2f}" for intent, p in ordered[:3])
        reasons = [f"classifier: {shown}"]
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
        return {
            "library": self.library,
            "intents": list(self.intents),
            "dimension": self.dimension,
            "vocabulary": list(self.vocabulary),
            "weights": [[round(float(v), 6) for v in row] for row in self.weights],
            "bias": [round(float(v), 6) for v in self.bias],
            "metadata": dict(self.metadata),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> IntentModel:
        return cls(
            library=str(data["library"]),
            intents=tuple(data["intents"]),
            vocabulary=tuple(data["vocabulary"]),
            weights=np.asarray(data["weights"], dtype=np.float64),
            bias=np.asarray(data["bias"], dtype=np.float64),
            dimension=int(data["dimension"]),
            metadata=dict(data.get("metadata", {})),
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


def fit_softmax(
    features: npt.NDArray[np.float64],
    labels: Sequence[int],
    classes: int,
    *,
    l2: float,
    iterations: int = 2000,
    learning_rate: float = 0.5,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Multinomial logistic regression by full-batch gradient descent from zero weights:
    deterministic for the same inputs. Returns (weights, bias)."""
    n, d = features.shape
    weights = np.zeros((d, classes))
    bias = np.zeros(classes)
    targets = np.eye(classes)[np.asarray(labels)]
    for _ in range(iterations):
        logits = features @ weights + bias
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        probs = exp / exp.sum(axis=1, keepdims=True)
        gradient = (probs - targets) / n
        weights -= learning_rate * (features.T @ gradient + l2 * weights)
        bias -= learning_rate * gradient.sum(axis=0)
    return weights, bias
