"""Training a `LinearTextClassifier` from labelled JSONL files, and checking a shipped one.

    <data_dir>/<library>.jsonl, <library>_*.jsonl    {"text", <label_key>, "split", "domain"}

The training rows fit the model; the validation rows (written beside them, never trained on)
are the figure it is judged by. The model records the SHA-256 of the files it learned from,
so a test can say when the data changed without a retrain. Used by the intent classifier
(`services.retrieval.intent_training`) and authoring's sentence typing
(`services.authoring.type_training`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from services.runtime.textclass import LinearTextClassifier, fit_classifier

Embed = Callable[[list[str]], npt.NDArray[np.float32]]
Model = TypeVar("Model", bound=LinearTextClassifier)
SPLITS = ("train", "validation")


@dataclass(frozen=True)
class LabelledText:
    text: str
    label: str
    split: str
    weight: float = 1.0  # counts as this many rows in training


def data_files(library: str, data_dir: Path) -> list[Path]:
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


def load_labelled(
    files: Sequence[Path], *, label_key: str, labels: Collection[str]
) -> list[LabelledText]:
    """Every labelled row of `files`, each checked against `labels` and the two splits."""
    rows: list[LabelledText] = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if not line.strip():
                continue
            row = json.loads(line)
            if row.get(label_key) not in labels or row.get("split") not in SPLITS:
                raise ValueError(f"{path}:{number}: unknown {label_key} or split in {row}")
            rows.append(LabelledText(row["text"], row[label_key], row["split"]))
    if not rows:
        raise FileNotFoundError(f"no labelled rows in {', '.join(map(str, files)) or 'no files'}")
    return rows


def train_classifier(
    rows: Sequence[LabelledText],
    labels: tuple[str, ...],
    embed: Embed,
    *,
    files: Sequence[Path],
    l2: float,
    min_term_texts: int,
    build: Callable[[tuple[str, ...], Any, Any, int, Mapping[str, Any]], Model],
    embedding_fingerprint: str = "",
) -> Model:
    """Fit on the training rows; `build(vocabulary, weights, bias, dimension, metadata)`
    makes the model, whose metadata then gains its accuracy on the validation rows."""
    train_rows = [r for r in rows if r.split == "train"]
    validation = [r for r in rows if r.split == "validation"]
    texts = [r.text for r in train_rows]
    vectors = np.asarray(embed(texts), dtype=np.float64)
    # Unweighted rows fit exactly as before weights existed (a retrain reproduces a model).
    weighted = any(r.weight != 1.0 for r in train_rows)
    vocabulary, weights, bias = fit_classifier(
        texts, vectors, [r.label for r in train_rows], labels, l2=l2,
        min_term_texts=min_term_texts,
        sample_weights=[r.weight for r in train_rows] if weighted else None,
    )  # fmt: skip
    metadata: dict[str, Any] = {
        "data_files": [p.name for p in files],
        "data_sha256": data_digest(files),
        "train_rows": len(train_rows),
        "validation_rows": len(validation),
        "l2": l2,
        "min_term_texts": min_term_texts,
        # The embedding model its vectors came from: another model's vectors are not read.
        "embedding_fingerprint": embedding_fingerprint,
    }
    model = build(vocabulary, weights, bias, int(vectors.shape[1]), metadata)
    metadata["validation_accuracy"] = round(validation_accuracy(model, validation, embed), 4)
    return model


def validation_accuracy(
    model: LinearTextClassifier, rows: Sequence[LabelledText], embed: Embed | None
) -> float:
    """Share of `rows` the model labels right (nan when there are none); without `embed`
    (vectors of another model) by the words alone, as inference then does."""
    texts = [r.text for r in rows]
    vectors = list(embed(texts)) if texts and embed else [None] * len(texts)
    return model.accuracy(texts, vectors, [r.label for r in rows])


@dataclass(frozen=True)
class LabelledSets:
    """One family of labelled JSONL files and how its classifiers are fitted: where the files
    are, which key holds the label, each library's labels, and the regression's settings."""

    data_dir: Path
    label_key: str
    labels_of: Callable[[str], tuple[str, ...]]
    l2: float
    min_term_texts: int

    def files(self, library: str) -> list[Path]:
        return data_files(library, self.data_dir)

    def load(self, library: str) -> list[LabelledText]:
        """Every labelled row of a library, checked against its labels."""
        return load_labelled(
            self.files(library), label_key=self.label_key, labels=self.labels_of(library)
        )

    def train(
        self,
        library: str,
        embed: Embed,
        build: Callable[[tuple[str, ...], Any, Any, int, Mapping[str, Any]], Model],
        *,
        embedding_fingerprint: str = "",
        extra_rows: Sequence[LabelledText] = (),
        extra_files: Sequence[Path] = (),
    ) -> Model:
        """Fit the library's classifier on its training rows and `extra_rows` (read from
        `extra_files`, which join the data digest); validation accuracy in its metadata."""
        return train_classifier(
            [*self.load(library), *extra_rows],
            self.labels_of(library),
            embed,
            embedding_fingerprint=embedding_fingerprint,
            files=[*self.files(library), *extra_files],
            l2=self.l2,
            min_term_texts=self.min_term_texts,
            build=build,
        )


def write_model(document: Mapping[str, Any], path: Path) -> None:
    """A model's JSON document, compact, ending in a newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, separators=(",", ":")) + "\n", encoding="utf-8")
