"""Sentence typing for composed drawers: what kind of memory a said sentence is, if any.

The offline composer reads a session sentence by sentence; each one is either a memory of a
type in the store's library (the ten v2 work-artifact types, or the four companion speech
acts) or `NOT_A_MEMORY` (a question, an acknowledgement, an unsettled proposal, chatter).
The classifier is the shared linear text classifier (`services.runtime.textclass`) over the
sentence's embedding and its words, trained by `services.authoring.type_training` on
Engram's own labelled sentences (`eval/sets/types/`, many domains and registers, a validation
split never trained on) and shipped as JSON beside this module; no cue list is written by
hand (docs/decisions/0014-composer-typing-and-claims.md).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Final

from services.runtime.textclass import LinearTextClassifier, Vector, learned_from_json
from services.vocabulary import COMPANION_MODE, COMPANION_TYPES, V2_TYPES

MODEL_DIR: Final = Path(__file__).with_name("type_models")
NOT_A_MEMORY: Final = "none"


def type_labels(library: str) -> tuple[str, ...]:
    """The labels a library's sentence classifier chooses among (its types, then "none");
    the legacy types stay writable but new authoring never produces them."""
    types = COMPANION_TYPES if library == COMPANION_MODE else V2_TYPES
    return (*types, NOT_A_MEMORY)


@dataclass(frozen=True, kw_only=True)
class SentenceTypeModel(LinearTextClassifier):
    """A trained sentence classifier for one library."""

    library: str
    # The session prior. The training sentences are balanced across labels; a session's
    # memories are not (decisions and observations are common, acceptance criteria rare). A
    # label's factor is (its share of a session's memories / its share of the training
    # memories) ^ strength, counted from sessions written for it (`type_training`); the
    # labels in `prior_exempt` (the canonical types) are never chosen or unchosen by it.
    # Empty: the classifier's own probabilities decide.
    label_weights: Mapping[str, float] = field(default_factory=dict)
    prior_exempt: frozenset[str] = frozenset()

    def to_json(self) -> dict[str, Any]:
        """The model as the JSON document `load_type_model` reads."""
        document = {"library": self.library, "labels": list(self.labels), **self.weights_json()}
        if self.label_weights:
            document["label_weights"] = {k: round(v, 6) for k, v in self.label_weights.items()}
            document["prior_exempt"] = sorted(self.prior_exempt)
        return document

    def with_prior(self, probabilities: Mapping[str, float]) -> dict[str, float]:
        """`probabilities` times the session prior's factors, renormalised."""
        scaled = {k: p * self.label_weights.get(k, 1.0) for k, p in probabilities.items()}
        total = sum(scaled.values())
        return {k: p / total for k, p in scaled.items()}

    def classify(
        self, text: str, vector: Vector | None, *, need_majority: Collection[str] = frozenset()
    ) -> str:
        """The sentence's label. In the companion library `NOT_A_MEMORY` wins only when it is
        likelier than the sentence's being any memory at all (P(none) > 1/2): whether a
        sentence is kept is a yes/no question, and an argmax over all labels drops a fact
        whenever its probability is spread over several speech acts ("a gift from my grandma
        in Sweden": none 0.33, observation 0.28, opinion 0.22). The default library keeps the
        argmax: among its ten types a pooled rule would keep 30 of the validation split's 63
        chatter and proposal sentences instead of 9, for 7 more of 630 memories kept
        (docs/decisions/0014). A label in `need_majority` is chosen only when it is likelier
        than all the others together (P > 1/2); otherwise the likeliest of the rest is.

        With a session prior, the classifier's own likeliest label stands when it is exempt
        (a decision or a directive); otherwise the likeliest of the labels that are not
        exempt is taken under the prior (an observation the classifier leans to call a spike
        is more often an observation in a session)."""
        probabilities = self.probabilities(text, vector)
        allowed = [
            label
            for label in self.labels
            if label not in need_majority or probabilities[label] > 0.5
        ]
        if self.library != COMPANION_MODE:
            likeliest = max(allowed, key=lambda label: probabilities[label])
            if not self.label_weights or likeliest in self.prior_exempt:
                return likeliest
            prior = self.with_prior(probabilities)
            rest = [label for label in allowed if label not in self.prior_exempt]
            return max(rest, key=lambda label: prior[label])
        if probabilities[NOT_A_MEMORY] > 0.5:
            return NOT_A_MEMORY
        kinds = (label for label in allowed if label != NOT_A_MEMORY)
        return max(kinds, key=lambda label: probabilities[label])

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SentenceTypeModel:
        return cls(
            library=str(data["library"]),
            labels=tuple(data["labels"]),
            label_weights={str(k): float(v) for k, v in data.get("label_weights", {}).items()},
            prior_exempt=frozenset(data.get("prior_exempt", ())),
            **learned_from_json(data),
        )


def type_model_path(library: str) -> Path:
    """Where the shipped sentence classifier of a library lives."""
    return MODEL_DIR / f"{library}.json"


@cache
def load_type_model(library: str) -> SentenceTypeModel:
    """The shipped sentence classifier of a library ("default" or "companion")."""
    path = type_model_path(library)
    if not path.is_file():
        raise FileNotFoundError(
            f"no sentence type model for library {library!r} at {path}: run "
            "`engram type-model train`"
        )
    model = SentenceTypeModel.from_json(json.loads(path.read_text(encoding="utf-8")))
    if model.library != library or model.labels != type_labels(library):
        raise ValueError(f"{path} is not the {library!r} sentence type model")
    return model
