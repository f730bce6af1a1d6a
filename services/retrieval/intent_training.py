"""Training the shipped intent classifiers from Engram's labelled query sets.

    eval/sets/intent/<library>*.jsonl     {"text", "intent", "split": train|validation, "domain"}
    services/retrieval/core/intent_models/<library>.json     the trained model

`engram intent-model train` embeds the training queries with the bundled model, learns the
term vocabulary from them (a word or word pair in at least `MIN_TERM_QUERIES` training
queries), fits the softmax regression and writes the model with its validation accuracy and
the SHA-256 of the data it learned from; `engram intent-model check` recomputes the accuracy
and says whether the shipped model is stale. Validation queries are never trained on: they
are the figure the model is judged by (docs/decisions/0013-intent-inference.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from services.retrieval.core.intent import IntentModel
from services.runtime.textclass import fit_classifier
from services.retrieval.core.library import library_for

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = REPO_ROOT / "eval" / "sets" / "intent"
# A term must occur in this many training queries to enter the vocabulary.
MIN_TERM_QUERIES = 3
# L2 penalty of the regression: chosen by 5-fold cross-validation on the training split.
L2 = 1e-3

Embed = Callable[[list[str]], npt.NDArray[np.float32]]


@dataclass(frozen=True)
class LabelledQuery:
    text: str
    intent: str
    split: str


def data_files(library: str, data_dir: Path = DATA_DIR) -> list[Path]:
    """The labelled files of a library: `<library>.jsonl` and `<library>_*.jsonl`."""
    return sorted(data_dir.glob(f"{library}.jsonl")) + sorted(data_dir.glob(f"{library}_*.jsonl"))


def data_digest(files: Sequence[Path]) -> str:
    """SHA-256 over the files' names and bytes, in order: what a model was trained on."""
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.name.encode())
        digest.update(b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def load_queries(library: str, data_dir: Path = DATA_DIR) -> list[LabelledQuery]:
    """Every labelled query of a library, checked against its intents."""
    intents = set(library_for(library).intents)
    queries: list[LabelledQuery] = []
    for path in data_files(library, data_dir):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            if row["intent"] not in intents or row["split"] not in ("train", "validation"):
                raise ValueError(f"{path}:{number}: unknown intent or split in {row}")
            queries.append(LabelledQuery(row["text"], row["intent"], row["split"]))
    if not queries:
        raise FileNotFoundError(f"no labelled queries for library {library!r} in {data_dir}")
    return queries


def accuracy(
    model: IntentModel, texts: Sequence[str], labels: Sequence[str], embed: Embed
) -> float:
    """Share of `texts` whose most likely intent is the label."""
    return model.accuracy(texts, list(embed(list(texts))) if texts else [], labels)


def train(library: str, embed: Embed, data_dir: Path = DATA_DIR) -> IntentModel:
    """Fit the library's classifier on the training split; validation accuracy in metadata."""
    intents = library_for(library).intents
    queries = load_queries(library, data_dir)
    train_set = [q for q in queries if q.split == "train"]
    validation = [q for q in queries if q.split == "validation"]
    texts = [q.text for q in train_set]
    vectors = np.asarray(embed(texts), dtype=np.float64)
    vocabulary, weights, bias = fit_classifier(
        texts,
        vectors,
        [q.intent for q in train_set],
        intents,
        l2=L2,
        min_term_texts=MIN_TERM_QUERIES,
    )
    files = data_files(library, data_dir)
    metadata: dict[str, Any] = {
        "data_files": [p.name for p in files],
        "data_sha256": data_digest(files),
        "train_queries": len(train_set),
        "validation_queries": len(validation),
        "l2": L2,
        "min_term_queries": MIN_TERM_QUERIES,
    }
    model = IntentModel(
        library=library,
        labels=intents,
        vocabulary=vocabulary,
        weights=weights,
        bias=bias,
        dimension=vectors.shape[1],
        metadata=metadata,
    )
    metadata["validation_accuracy"] = round(
        accuracy(model, [q.text for q in validation], [q.intent for q in validation], embed), 4
    )
    return model


def write_model(model: IntentModel, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(model.to_json(), separators=(",", ":")) + "\n", encoding="utf-8")
