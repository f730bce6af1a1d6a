"""A small linear text classifier over a sentence embedding and the text's own words.

Two tiers classify short texts with the same machinery: the retrieval tier infers a query's
intent (`services.retrieval.core.intent`), the authoring tier types the sentences a session
says (`services.authoring.core.typing`). Both are multinomial logistic regressions over the
unit embedding of the text (which the caller computes anyway) concatenated with a bag of its
words and adjacent word pairs, the vocabulary learned from labelled training texts, never
written by hand. Inference is one small matrix product; training is deterministic (full-batch
gradient descent from zero weights), so a retrain on the same data gives the same model.

Pure: no I/O, no model loading. Callers ship trained classifiers as JSON beside their code.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.floating]

_WORD = re.compile(r"[a-z0-9']+")


def text_terms(text: str) -> set[str]:
    """The words and adjacent word pairs of a text, lower-cased (the classifier's tokens)."""
    words = _WORD.findall(text.lower().replace("\u2019", "'"))
    return set(words) | {f"{a}_{b}" for a, b in pairwise(words)}


def learn_vocabulary(texts: Sequence[str], min_texts: int) -> tuple[str, ...]:
    """The terms that occur in at least `min_texts` of `texts`, sorted."""
    counts = Counter(term for text in texts for term in text_terms(text))
    return tuple(sorted(term for term, n in counts.items() if n >= min_texts))


@dataclass(frozen=True, kw_only=True)
class LinearTextClassifier:
    """Weights over [unit embedding ‖ unit-scaled term indicators], one column per label."""

    labels: tuple[str, ...]
    vocabulary: tuple[str, ...]
    weights: npt.NDArray[np.float64]  # (dimension + len(vocabulary), len(labels))
    bias: npt.NDArray[np.float64]  # (len(labels),)
    dimension: int
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        expected = (self.dimension + len(self.vocabulary), len(self.labels))
        if self.weights.shape != expected or self.bias.shape != (len(self.labels),):
            raise ValueError(
                f"classifier weights {self.weights.shape} and bias {self.bias.shape} do not "
                f"match {expected}"
            )

    @cached_property
    def _index(self) -> dict[str, int]:
        return {term: index for index, term in enumerate(self.vocabulary)}

    def unfit_for(self, dimension: int, fingerprint: str) -> str:
        """Why this classifier cannot read embeddings of the model with `fingerprint` and
        `dimension` ("" when it can): it was trained on another model's vectors. A model
        trained before fingerprints were recorded is judged by the dimension alone."""
        trained_on = str(self.metadata.get("embedding_fingerprint", ""))
        if dimension and dimension != self.dimension:
            return f"it was trained on {self.dimension}-dimensional embeddings, not {dimension}"
        if fingerprint and trained_on and fingerprint != trained_on:
            return f"it was trained on another embedding model (fingerprint {trained_on[:12]})"
        return ""

    def features(self, text: str, vector: Vector | None) -> npt.NDArray[np.float64]:
        """The model's input for one text: its unit embedding, then its term indicators
        scaled to unit length. Without a vector (one of another model) the embedding part is
        zero: the words alone decide."""
        if vector is None:
            vector = np.zeros(self.dimension)
        embedding = np.asarray(vector, dtype=np.float64).reshape(-1)
        if embedding.shape[0] != self.dimension:
            raise ValueError(
                f"the classifier expects {self.dimension}-dimensional embeddings, got "
                f"{embedding.shape[0]}: retrain it for this embedding model"
            )
        norm = float(np.linalg.norm(embedding))
        if norm > 0.0:
            embedding = embedding / norm
        terms = np.zeros(len(self.vocabulary), dtype=np.float64)
        hits = [self._index[t] for t in text_terms(text) if t in self._index]
        if hits:
            terms[hits] = 1.0 / math.sqrt(len(hits))
        return np.concatenate([embedding, terms])

    def probabilities(self, text: str, vector: Vector | None) -> dict[str, float]:
        """P(label | text) for every label."""
        logits = self.features(text, vector) @ self.weights + self.bias
        logits -= logits.max()
        exp = np.exp(logits)
        probs = exp / exp.sum()
        return {label: float(p) for label, p in zip(self.labels, probs, strict=True)}

    def predict(self, text: str, vector: Vector | None) -> tuple[str, float]:
        """The most likely label and its probability (the first label wins a tie)."""
        probs = self.probabilities(text, vector)
        best = max(self.labels, key=lambda label: probs[label])
        return best, probs[best]

    def top_terms(self, text: str, label: str, limit: int = 3) -> list[str]:
        """The text's terms that pushed `label` most (positive weight), strongest first."""
        column = self.labels.index(label)
        offset = self.dimension
        scored = [
            (float(self.weights[offset + self._index[t], column]), t)
            for t in text_terms(text)
            if t in self._index
        ]
        return [t for w, t in sorted(scored, reverse=True)[:limit] if w > 0.0]

    def accuracy(
        self, texts: Sequence[str], vectors: Sequence[Vector | None], labels: Sequence[str]
    ) -> float:
        """Share of `texts` whose most likely label is the given one (nan when empty)."""
        if not texts:
            return float("nan")
        right = sum(
            self.predict(text, vector)[0] == label
            for text, vector, label in zip(texts, vectors, labels, strict=True)
        )
        return right / len(texts)

    def weights_json(self) -> dict[str, Any]:
        """The learned parts as JSON-ready values (rounded to 6 decimals)."""
        return {
            "dimension": self.dimension,
            "vocabulary": list(self.vocabulary),
            "weights": [[round(float(v), 6) for v in row] for row in self.weights],
            "bias": [round(float(v), 6) for v in self.bias],
            "metadata": dict(self.metadata),
        }


def learned_from_json(data: Mapping[str, Any]) -> dict[str, Any]:
    """The learned parts of a model document (`weights_json`'s inverse), as keyword
    arguments for a `LinearTextClassifier` subclass."""
    return {
        "vocabulary": tuple(data["vocabulary"]),
        "weights": np.asarray(data["weights"], dtype=np.float64),
        "bias": np.asarray(data["bias"], dtype=np.float64),
        "dimension": int(data["dimension"]),
        "metadata": dict(data.get("metadata", {})),
    }


def fit_softmax(
    features: npt.NDArray[np.float64],
    labels: Sequence[int],
    classes: int,
    *,
    l2: float,
    iterations: int = 2000,
    learning_rate: float = 0.5,
    sample_weights: Sequence[float] | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Multinomial logistic regression by full-batch gradient descent from zero weights:
    deterministic for the same inputs. Returns (weights, bias). `sample_weights` (default
    1 each) count a row as that many copies of itself."""
    n, d = features.shape
    weights = np.zeros((d, classes))
    bias = np.zeros(classes)
    targets = np.eye(classes)[np.asarray(labels)]
    share: float | npt.NDArray[np.float64] = 1.0 / n
    if sample_weights is not None:
        counted = np.asarray(sample_weights, dtype=np.float64)
        if counted.shape != (n,) or not (counted > 0).all():
            raise ValueError(f"sample_weights must be {n} positive numbers")
        share = (counted / counted.sum())[:, np.newaxis]
    for _ in range(iterations):
        logits = features @ weights + bias
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        probs = exp / exp.sum(axis=1, keepdims=True)
        gradient = (probs - targets) * share
        weights -= learning_rate * (features.T @ gradient + l2 * weights)
        bias -= learning_rate * gradient.sum(axis=0)
    return weights, bias


def fit_classifier(
    texts: Sequence[str],
    vectors: npt.NDArray[np.floating],
    labels: Sequence[str],
    label_names: tuple[str, ...],
    *,
    l2: float,
    min_term_texts: int,
    sample_weights: Sequence[float] | None = None,
) -> tuple[tuple[str, ...], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """(vocabulary, weights, bias) of a classifier fitted to labelled texts. The vocabulary
    counts each text once whatever its weight."""
    vectors = np.asarray(vectors, dtype=np.float64)
    vocabulary = learn_vocabulary(texts, min_term_texts)
    scaffold = LinearTextClassifier(
        labels=label_names,
        vocabulary=vocabulary,
        weights=np.zeros((vectors.shape[1] + len(vocabulary), len(label_names))),
        bias=np.zeros(len(label_names)),
        dimension=int(vectors.shape[1]),
    )
    features = np.stack([scaffold.features(t, v) for t, v in zip(texts, vectors, strict=True)])
    targets = [label_names.index(label) for label in labels]
    weights, bias = fit_softmax(
        features, targets, len(label_names), l2=l2, sample_weights=sample_weights
    )
    return vocabulary, weights, bias
