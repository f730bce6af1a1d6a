"""Training the shipped sentence type classifiers from Engram's labelled sentences.

    eval/sets/types/<library>*.jsonl     {"text", "type", "split": train|validation, "domain"}
    eval/sets/composer/<PRIOR_SETS>      sessions whose expected drawers give the session prior
    services/authoring/core/type_models/<library>.json     the trained model

`engram type-model train` fits them (the machinery is `services.runtime.textclass_training`,
shared with the intent classifier); `engram type-model check` recomputes the validation
accuracy and says whether the shipped model is stale. The labelled sentences are said the way
people and agents speak in sessions; the validation rows are never trained on.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Final

from services.authoring.core.rules import CANONICAL_TYPES
from services.authoring.core.sentence_types import NOT_A_MEMORY, SentenceTypeModel, type_labels
from services.runtime import textclass_training as training

REPO_ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = REPO_ROOT / "eval" / "sets" / "types"
COMPOSER_DIR = REPO_ROOT / "eval" / "sets" / "composer"
# The composer sets whose expected drawers give a library's session prior. `default_c` stays
# out, so its type accuracy in `make eval` is measured out of sample; the companion library
# has one composer set, which stays a test (no prior).
PRIOR_SETS: Final = {"default": ("default_a.json", "default_b.json")}
# The exponent on the prior ratio: 0.5 beat 1.0 (the full correction) leaving each composer
# set out in turn (decision 0014, "the session prior"). The canonical types are exempt: the
# prior never makes or unmakes a decision or a directive.
SESSION_PRIOR_STRENGTH: Final = 0.5
# A term must occur in two training sentences to enter the vocabulary. The L2 penalty is the
# best of 1e-4 / 3e-4 / 1e-3 / 3e-3 by cross-validation across writers on the default training
# rows (three folds, each holding out whole writers: 0.796 / 0.797 / 0.793 / 0.781).
SETS = training.LabelledSets(
    DATA_DIR, label_key="type", labels_of=type_labels, l2=3e-4, min_term_texts=2
)


def prior_files(library: str) -> list[Path]:
    """The composer sets a library's session prior is counted from (none for companion)."""
    return [COMPOSER_DIR / name for name in PRIOR_SETS.get(library, ())]


def data_files(library: str) -> list[Path]:
    """Everything a library's model learns from: its labelled sentences and prior sets."""
    return [*SETS.files(library), *prior_files(library)]


def session_prior(library: str, files: list[Path] | None = None) -> dict[str, float]:
    """Each memory type's factor (`SentenceTypeModel.label_weights`): its share of the
    expected drawers of `files` (add-one smoothed) over its share of the balanced training
    memories (1 / number of types), to the power SESSION_PRIOR_STRENGTH. Empty without
    files."""
    files = prior_files(library) if files is None else files
    if not files:
        return {}
    types = [label for label in type_labels(library) if label != NOT_A_MEMORY]
    counts: Counter[str] = Counter()
    for path in files:
        for session in json.loads(path.read_text(encoding="utf-8"))["sessions"]:
            counts.update(drawer["type"] for drawer in session["expected"])
    unknown = set(counts) - set(types)
    if unknown:
        raise ValueError(f"{library} prior sets name types outside the library: {unknown}")
    total = sum(counts[t] + 1 for t in types)
    return {t: ((counts[t] + 1) / total * len(types)) ** SESSION_PRIOR_STRENGTH for t in types}


def load_sentences(library: str) -> list[training.LabelledText]:
    """Every labelled sentence of a library, checked against its labels."""
    return SETS.load(library)


def train(library: str, embed: training.Embed, *, fingerprint: str = "") -> SentenceTypeModel:
    """Fit the library's classifier on the training split and attach its session prior.
    Metadata: the validation accuracy of the classifier itself (the split is balanced, as
    its training data) and, where a prior applies, with the prior."""
    model = SETS.train(
        library,
        embed,
        lambda vocabulary, weights, bias, dimension, metadata: SentenceTypeModel(
            library=library, labels=type_labels(library), vocabulary=vocabulary,
            weights=weights, bias=bias, dimension=dimension, metadata=metadata,
        ),
        embedding_fingerprint=fingerprint,
        extra_files=prior_files(library),
    )  # fmt: skip
    prior = session_prior(library)
    if not prior:
        return model
    model = dataclasses.replace(model, label_weights=prior, prior_exempt=CANONICAL_TYPES)
    validation = [r for r in load_sentences(library) if r.split == "validation"]
    vectors = embed([r.text for r in validation])
    right = sum(
        model.classify(r.text, v) == r.label for r, v in zip(validation, vectors, strict=True)
    )
    metadata = dict(model.metadata)
    metadata["session_prior_sets"] = [p.name for p in prior_files(library)]
    metadata["validation_accuracy_with_prior"] = round(right / len(validation), 4)
    return dataclasses.replace(model, metadata=metadata)
