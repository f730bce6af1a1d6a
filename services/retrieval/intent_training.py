"""Training the shipped intent classifiers from Engram's labelled query sets.

    eval/sets/intent/<library>*.jsonl     {"text", "intent", "split": train|validation, "domain"}
    services/retrieval/core/intent_models/<library>.json     the trained model

`engram intent-model train` embeds the training queries with the bundled model, learns the
term vocabulary from them (a word or word pair in at least `MIN_TERM_QUERIES` training
queries), fits the softmax regression and writes the model with its validation accuracy and
the SHA-256 of the data it learned from; `engram intent-model check` recomputes the accuracy
and says whether the shipped model is stale. Validation queries are never trained on: they
are the figure the model is judged by (docs/decisions/0013-intent-inference.md). The
machinery is shared with authoring's sentence typing (`services.runtime.textclass_training`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from services.retrieval.core.intent import IntentModel
from services.retrieval.core.library import library_for
from services.runtime import textclass_training as training

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = REPO_ROOT / "eval" / "sets" / "intent"
# A term must occur in this many training queries to enter the vocabulary.
MIN_TERM_QUERIES = 3
# L2 penalty of the regression: chosen by 5-fold cross-validation on the training split.
L2 = 1e-3


def data_files(library: str, data_dir: Path = DATA_DIR) -> list[Path]:
    """The labelled query files of a library."""
    return training.data_files(library, data_dir)


def load_queries(library: str, data_dir: Path = DATA_DIR) -> list[training.LabelledText]:
    """Every labelled query of a library, checked against its intents."""
    files = data_files(library, data_dir)
    return training.load_labelled(files, label_key="intent", labels=library_for(library).intents)


def train(library: str, embed: training.Embed, data_dir: Path = DATA_DIR) -> IntentModel:
    """Fit the library's classifier on the training split; validation accuracy in metadata."""

    def build(
        vocabulary: tuple[str, ...], weights: Any, bias: Any, dimension: int,
        metadata: Mapping[str, Any],
    ) -> IntentModel:  # fmt: skip
        return IntentModel(
            library=library, labels=library_for(library).intents, vocabulary=vocabulary,
            weights=weights, bias=bias, dimension=dimension, metadata=metadata,
        )  # fmt: skip

    return training.train_classifier(
        load_queries(library, data_dir),
        library_for(library).intents,
        embed,
        files=data_files(library, data_dir),
        l2=L2,
        min_term_texts=MIN_TERM_QUERIES,
        build=build,
    )
