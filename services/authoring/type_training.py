"""Training the shipped sentence type classifiers from Engram's labelled sentences.

    eval/sets/types/<library>*.jsonl     {"text", "type", "split": train|validation, "domain"}
    services/authoring/core/type_models/<library>.json     the trained model

`engram type-model train` fits them (the machinery is `services.runtime.textclass_training`,
shared with the intent classifier); `engram type-model check` recomputes the validation
accuracy and says whether the shipped model is stale. The labelled sentences are said the way
people and agents speak in sessions; the validation rows are never trained on.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from services.authoring.core.sentence_types import SentenceTypeModel, type_labels
from services.runtime import textclass_training as training

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = REPO_ROOT / "eval" / "sets" / "types"
# A term must occur in this many training sentences to enter the vocabulary.
MIN_TERM_SENTENCES = 2
# L2 penalty: the best of 1e-4 / 1e-3 / 1e-2 by 5-fold cross-validation on the training rows.
L2 = 1e-3


def data_files(library: str, data_dir: Path = DATA_DIR) -> list[Path]:
    """The labelled sentence files of a library."""
    return training.data_files(library, data_dir)


def load_sentences(library: str, data_dir: Path = DATA_DIR) -> list[training.LabelledText]:
    """Every labelled sentence of a library, checked against its labels."""
    files = data_files(library, data_dir)
    return training.load_labelled(files, label_key="type", labels=type_labels(library))


def train(library: str, embed: training.Embed, data_dir: Path = DATA_DIR) -> SentenceTypeModel:
    """Fit the library's classifier on the training split; validation accuracy in metadata."""

    def build(
        vocabulary: tuple[str, ...], weights: Any, bias: Any, dimension: int,
        metadata: Mapping[str, Any],
    ) -> SentenceTypeModel:  # fmt: skip
        return SentenceTypeModel(
            library=library, labels=type_labels(library), vocabulary=vocabulary,
            weights=weights, bias=bias, dimension=dimension, metadata=metadata,
        )  # fmt: skip

    return training.train_classifier(
        load_sentences(library, data_dir),
        type_labels(library),
        embed,
        files=data_files(library, data_dir),
        l2=L2,
        min_term_texts=MIN_TERM_SENTENCES,
        build=build,
    )
