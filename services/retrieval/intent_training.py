"""Training the shipped intent classifiers from Engram's labelled query sets.

    eval/sets/intent/<library>*.jsonl     {"text", "intent", "split": train|validation, "domain"}
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

from pathlib import Path

from services.retrieval.core.intent import IntentModel
from services.runtime import textclass_training as training
from services.vocabulary import library_for

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = REPO_ROOT / "eval" / "sets" / "intent"
# A term must occur in this many training queries to enter the vocabulary; the L2 penalty
# was chosen by 5-fold cross-validation on the training split.
SETS = training.LabelledSets(
    DATA_DIR,
    label_key="intent",
    labels_of=lambda library: library_for(library).intents,
    l2=1e-3,
    min_term_texts=3,
)


def data_files(library: str) -> list[Path]:
    """The labelled query files of a library."""
    return SETS.files(library)


def load_queries(library: str) -> list[training.LabelledText]:
    """Every labelled query of a library, checked against its intents."""
    return SETS.load(library)


def train(library: str, embed: training.Embed, *, fingerprint: str = "") -> IntentModel:
    """Fit the library's classifier on the training split; validation accuracy in metadata."""
    return SETS.train(
        library,
        embed,
        lambda vocabulary, weights, bias, dimension, metadata: IntentModel(
            library=library, labels=library_for(library).intents, vocabulary=vocabulary,
            weights=weights, bias=bias, dimension=dimension, metadata=metadata,
        ),
        embedding_fingerprint=fingerprint,
    )  # fmt: skip
