"""Which embedding model a store's vectors were made with, recorded beside them.

Vectors of two models (or of one model at two dimensions) cannot be compared: a search with
a query vector of another model ranks noise, silently. So every store that keeps vectors
records the model that made them (`embedding.json` in its folder: the model's name, a
fingerprint of its files and the dimension) when it is first opened, and a tier refuses to
open a store whose record disagrees with the model the embedder serves now, with a message
that says how to get back to a consistent store.

A fingerprint, not the name: the name is what an operator configured (a directory name),
while the fingerprint (`model_fingerprint`) changes when the model's files do.

Moving a store to the model in force (`begin_reembed`) records it as the record's
`reembedding` target: the store opens again, and its owner rebuilds the vectors while reads
go on without them (keyword matches only); `finish_reembed` makes the new model the store's.
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


def _read(record: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads(record.read_text())
    return data


def _write(record: Path, data: dict[str, object]) -> None:
    record.parent.mkdir(parents=True, exist_ok=True)
    partial = record.with_suffix(".tmp")
    partial.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(partial, record)


def _identity(data: object) -> EmbeddingIdentity:
    assert isinstance(data, dict)
    return EmbeddingIdentity(str(data["model"]), str(data["fingerprint"]), int(data["dimension"]))


def _same(a: EmbeddingIdentity, b: EmbeddingIdentity) -> bool:
    return (a.fingerprint, a.dimension) == (b.fingerprint, b.dimension)


def reembedding(root: Path) -> EmbeddingIdentity | None:
    """The model a store is being moved to, while its vectors are rebuilt."""
    record = root / RECORD
    if not record.is_file():
        return None
    target = _read(record).get("reembedding")
    return _identity(target) if target else None


def check_store_embedding(root: Path, store: str, current: EmbeddingIdentity) -> None:
    """Record `current` for a store opened the first time; pass one made with it or being
    moved to it; refuse one made with another."""
    record = root / RECORD
    if not record.is_file():
        _write(record, asdict(current))
        return
    data = _read(record)
    recorded = _identity(data)
    target = data.get("reembedding")
    if _same(recorded, current) or (target and _same(_identity(target), current)):
        return
    raise FailedPrecondition(
        f"store {store!r} holds vectors made by {recorded.model} ({recorded.dimension}-d, "
        f"fingerprint {recorded.fingerprint[:12]}) but the embedder now serves "
        f"{current.model} ({current.dimension}-d, fingerprint {current.fingerprint[:12]}); "
        "vectors of two models cannot be compared. Re-embed the store with the model in "
        f"force (an admin's POST /v1/stores/{store}/reembed: drawers, raw and source chunks; "
        "reads go on, keyword matches only, until it is done), or serve the store's model "
        "again (ENGRAM_EMBEDDER_MODEL).",
        field="store",
    )


def begin_reembed(root: Path, current: EmbeddingIdentity) -> bool:
    """Mark a store as moving to `current`; False when its vectors are already of it."""
    record = root / RECORD
    if not record.is_file():
        _write(record, asdict(current))
        return False
    data = _read(record)
    if _same(_identity(data), current):
        return False
    data["reembedding"] = asdict(current)
    _write(record, data)
    return True


def finish_reembed(root: Path, current: EmbeddingIdentity) -> None:
    """Every vector of the store is of `current` now: it becomes the store's model."""
    _write(root / RECORD, asdict(current))


def reembedding_notice(target: EmbeddingIdentity) -> str:
    """What a search answered without vectors says (a store being moved to `target`)."""
    return (
        f"this store is being re-embedded for {target.model}: results are keyword matches "
        "only until it is done"
    )
