"""Which embedding model a store's vectors were made with, recorded beside them.

Vectors of two models (or of one model at two dimensions) cannot be compared: a search with
a query vector of another model ranks noise, silently. So every store that keeps vectors
records the model that made them (`embedding.json` in its folder: the model's name, a
fingerprint of its files and the dimension) when it is first opened, and a tier refuses to
open a store whose record disagrees with the model the embedder serves now, with a message
that says how to get back to a consistent store.

A fingerprint, not the name: the name is what an operator configured (a directory name),
while the fingerprint (`model_fingerprint`) changes when the model's files do.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Final

from services.runtime.errors import FailedPrecondition

RECORD: Final = "embedding.json"
# Small files whose content goes into the fingerprint (configs, tokenizer settings); larger
# ones (weights, vocabularies) count by their name and size.
_SMALL_FILE_BYTES: Final = 64 * 1024


@dataclass(frozen=True)
class EmbeddingIdentity:
    model: str
    fingerprint: str
    dimension: int


def model_fingerprint(path: Path) -> str:
    """A digest of a model directory: every file's relative path and size, and the content
    of its small files. Cheap (no weight is read) and different for any other model."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        relative = file.relative_to(path).as_posix()
        size = file.stat().st_size
        digest.update(f"{relative}\x00{size}\x00".encode())
        if size <= _SMALL_FILE_BYTES:
            digest.update(file.read_bytes())
    return digest.hexdigest()[:32]


def check_store_embedding(root: Path, store: str, current: EmbeddingIdentity) -> None:
    """Record `current` for a store opened the first time; refuse one made with another."""
    record = root / RECORD
    if not record.is_file():
        root.mkdir(parents=True, exist_ok=True)
        partial = record.with_suffix(".tmp")
        partial.write_text(json.dumps(asdict(current), indent=2) + "\n")
        os.replace(partial, record)
        return
    recorded = EmbeddingIdentity(**json.loads(record.read_text()))
    if (recorded.fingerprint, recorded.dimension) == (current.fingerprint, current.dimension):
        return
    raise FailedPrecondition(
        f"store {store!r} holds vectors made by {recorded.model} ({recorded.dimension}-d, "
        f"fingerprint {recorded.fingerprint[:12]}) but the embedder now serves "
        f"{current.model} ({current.dimension}-d, fingerprint {current.fingerprint[:12]}); "
        "vectors of two models cannot be compared. Serve the store's model again "
        "(ENGRAM_EMBEDDER_MODEL), or move the store to the new model: export its drawers, "
        "create a new store and import them there (an import embeds with the model in force); "
        "raw memories are ingested again from their files.",
        field="store",
    )
