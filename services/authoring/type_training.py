"""Training the shipped sentence type classifiers from Engram's labelled sentences.

    eval/sets/types/<library>*.jsonl     {"text", "type", "split": train|validation, "domain"}
    services/authoring/core/type_models/<library>.json     the trained model

`engram type-model train` fits them (the machinery is `services.runtime.textclass_training`,
shared with the intent classifier); `engram type-model check` recomputes the validation
accuracy and says whether the shipped model is stale. The labelled sentences are said the way
people and agents speak in sessions; the validation rows are never trained on.
"""

from __future__ import annotations

from pathlib import Path

from services.authoring.core.sentence_types import SentenceTypeModel, type_labels
from services.runtime import textclass_training as training

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = REPO_ROOT / "eval" / "sets" / "types"
# A term must occur in two training sentences to enter the vocabulary. The L2 penalty is the
# best of 1e-4 / 3e-4 / 1e-3 / 3e-3 by cross-validation across writers on the default training
# rows (three folds, each holding out whole writers: 0.796 / 0.797 / 0.793 / 0.781).
SETS = training.LabelledSets(
    DATA_DIR, label_key="type", labels_of=type_labels, l2=3e-4, min_term_texts=2
)


def data_files(library: str) -> list[Path]:
    """The labelled sentence files of a library."""
    return SETS.files(library)


def load_sentences(library: str) -> list[training.LabelledText]:
    """Every labelled sentence of a library, checked against its labels."""
    return SETS.load(library)


def train(library: str, embed: training.Embed, *, fingerprint: str = "") -> SentenceTypeModel:
    """Fit the library's classifier on the training split; validation accuracy in metadata."""
    return SETS.train(
        library,
        embed,
        lambda vocabulary, weights, bias, dimension, metadata: SentenceTypeModel(
            library=library, labels=type_labels(library), vocabulary=vocabulary,
            weights=weights, bias=bias, dimension=dimension, metadata=metadata,
        ),
        embedding_fingerprint=fingerprint,
    )  # fmt: skip
