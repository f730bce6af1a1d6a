"""Training the shipped intent classifiers from Engram's labelled query sets.

    eval/sets/intent/<library>*.jsonl     {"text", "intent", "split": train|validation, "domain"}
    eval/sets/thesis/<library>_*.json     the thesis sets' labelled queries (companion only,
                                          training rows of weight THESIS_QUERY_WEIGHT)
    services/retrieval/core/intent_models/<library>.json     the trained model

`engram intent-model train` embeds the training queries with the bundled model, learns the
term vocabulary from them (a word or word pair in at least `SETS.min_term_texts` training
queries), fits the softmax regression and writes the model with its validation accuracy and
the SHA-256 of the data it learned from; `engram intent-model check` recomputes the accuracy
and says whether the shipped model is stale. Validation queries are never trained on: they
are the figure the model is judged by (docs/decisions/0013-intent-inference.md). The
machinery is shared with authoring's sentence typing (`services.runtime.textclass_training`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Final

from services.retrieval.core.intent import IntentModel
from services.runtime import textclass_training as training
from services.vocabulary import library_for

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = REPO_ROOT / "eval" / "sets" / "intent"
THESIS_DIR = REPO_ROOT / "eval" / "sets" / "thesis"
# The labelled queries of Engram's own thesis sets (`eval/sets/thesis/<library>_*.json`) train
# the companion classifier too, each counting this many times: they are questions as agents
# ask them in a session, labelled by other writers than the intent sets. Measured by leaving
# one thesis set out (decision 0013): companion 0.564 -> 0.640 mean over four sets; the
# default library's three sets gained nothing (0.689 -> 0.674), so it reads none.
THESIS_QUERY_WEIGHT: Final[Mapping[str, float]] = MappingProxyType({"companion": 3.0})
# Thesis sets that never train the classifier, so `make eval` keeps an out-of-sample intent
# figure for the library (companion_e, a fifth writer: 0.621 when it was added).
HELD_OUT_THESIS: Final = frozenset({"companion_e"})
# A term must occur in this many training queries to enter the vocabulary; the L2 penalty
# was chosen by 5-fold cross-validation on the training split.
SETS = training.LabelledSets(
    DATA_DIR,
    label_key="intent",
    labels_of=lambda library: library_for(library).intents,
    l2=1e-3,
    min_term_texts=3,
)


def thesis_files(library: str) -> list[Path]:
    """The thesis sets whose queries train a library's classifier (none unless weighted;
    never the held-out ones)."""
    if library not in THESIS_QUERY_WEIGHT:
        return []
    return sorted(
        path for path in THESIS_DIR.glob(f"{library}_*.json") if path.stem not in HELD_OUT_THESIS
    )


def data_files(library: str) -> list[Path]:
    """Every file a library's classifier learns from: its query sets, then its thesis sets."""
    return SETS.files(library) + thesis_files(library)


def thesis_queries(library: str) -> list[training.LabelledText]:
    """The labelled queries of a library's thesis sets, as training rows of their weight."""
    intents = library_for(library).intents
    rows: list[training.LabelledText] = []
    for path in thesis_files(library):
        for query in json.loads(path.read_text(encoding="utf-8"))["queries"]:
            intent = query.get("intent")
            if not intent:
                continue
            if intent not in intents:
                raise ValueError(f"{path}: query {query.get('id')!r} has unknown intent {intent!r}")
            rows.append(
                training.LabelledText(query["text"], intent, "train", THESIS_QUERY_WEIGHT[library])
            )
    return rows


def load_queries(library: str) -> list[training.LabelledText]:
    """Every labelled query of a library, checked against its intents."""
    return SETS.load(library) + thesis_queries(library)


def train(library: str, embed: training.Embed, *, fingerprint: str = "") -> IntentModel:
    """Fit the library's classifier on the training rows; validation accuracy in metadata."""
    return SETS.train(
        library,
        embed,
        lambda vocabulary, weights, bias, dimension, metadata: IntentModel(
            library=library, labels=library_for(library).intents, vocabulary=vocabulary,
            weights=weights, bias=bias, dimension=dimension, metadata=metadata,
        ),
        embedding_fingerprint=fingerprint,
        extra_rows=thesis_queries(library),
        extra_files=thesis_files(library),
    )  # fmt: skip
