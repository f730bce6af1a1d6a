"""A tier's snapshot of one store, as a tar archive (`engram backup` / `engram restore`).

What goes in, for a store folder and the hybrid collections kept in it:

    snapshot.json                     format, tier, and per collection its points and dimension
    files/<path>                      every file of the folder that is not derived: SQLite
                                      files copied with SQLite's backup API (one consistent
                                      state, WAL included), the rest (corpus bodies, logs,
                                      markers) as they are
    collections/<name>/points.jsonl   each point's id and payload, in order
    collections/<name>/vectors.npy    their vectors (float32, same order)

Derived parts (the vector engine's own folder, the FTS5 keyword sidecars) are left out: vectors
travel as points, so a snapshot restores into either backend (Edge or a Qdrant server), and
keyword rows are rebuilt by the writes that restore the points. The caller holds the store's
write locks while `write_snapshot` runs, so the archive is one state of the tier; reads go on.

`restore_files` unpacks an archive's files into a store folder that does not exist yet (member
names are checked: no absolute paths, no `..`, regular files only); `restore_points` writes its
points into the opened store's collections.
"""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import tarfile
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from services.runtime.errors import Conflict, InvalidInput
from services.runtime.hybrid import HybridCollection
from services.runtime.vectorstore import VectorPoint

FORMAT = 1
MANIFEST = "snapshot.json"
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")
# SQLite's companions: the backup API folds them into the copy.
SQLITE_COMPANIONS = ("-wal", "-shm", "-journal")
RESTORE_BATCH = 512


@dataclass(frozen=True)
class StoreParts:
    """What a tier keeps of one store, for a snapshot: its folder, the hybrid collections kept
    there (by a name stable across backends), and the top-level names in the folder that are
    derived (rebuilt on restore, never archived)."""

    folder: Path
    collections: Mapping[str, HybridCollection]
    derived: frozenset[str]
    # Held, in order, while the snapshot is taken: the store's write locks.
    locks: tuple[AbstractContextManager[Any], ...] = ()


@dataclass(frozen=True)
class SnapshotSummary:
    tier: str
    files: int
    points: int


def write_snapshot(parts: StoreParts, tier: str, out: Path) -> SnapshotSummary:
    """Write the store's snapshot to `out` (a tar file), holding the store's write locks."""
    with ExitStack() as held:
        for lock in parts.locks:
            held.enter_context(lock)
        return _write_snapshot(parts, tier, out)


def _write_snapshot(parts: StoreParts, tier: str, out: Path) -> SnapshotSummary:
    files = points = 0
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "tier": tier,
        "created_at": time.time(),
        "collections": {},
    }
    with tarfile.open(out, "w") as archive, tempfile.TemporaryDirectory() as scratch:
        for path in _archived_files(parts):
            name = f"files/{path.relative_to(parts.folder).as_posix()}"
            if path.suffix in SQLITE_SUFFIXES:
                copy = Path(scratch) / "copy.sqlite"
                _sqlite_copy(path, copy)
                archive.add(copy, arcname=name)
                copy.unlink()
            else:
                archive.add(path, arcname=name)
            files += 1
        for name, collection in parts.collections.items():
            ids, payloads, vectors = _points_of(collection)
            lines = "".join(
                json.dumps({"id": i, "payload": p}, ensure_ascii=False) + "\n"
                for i, p in zip(ids, payloads, strict=True)
            )
            _add_bytes(archive, f"collections/{name}/points.jsonl", lines.encode("utf-8"))
            buffer = io.BytesIO()
            np.save(buffer, vectors, allow_pickle=False)
            _add_bytes(archive, f"collections/{name}/vectors.npy", buffer.getvalue())
            manifest["collections"][name] = {"points": len(ids), "dimension": collection.dimension}
            points += len(ids)
        manifest["files"] = files
        _add_bytes(archive, MANIFEST, json.dumps(manifest, indent=1).encode("utf-8"))
    return SnapshotSummary(tier, files, points)


def read_manifest(archive_path: Path, tier: str) -> dict[str, Any]:
    """The archive's manifest; InvalidInput if it is not a snapshot of `tier`."""
    try:
        with tarfile.open(archive_path, "r") as archive:
            member = archive.extractfile(MANIFEST)
            if member is None:
                raise KeyError(MANIFEST)
            manifest: dict[str, Any] = json.loads(member.read())
    except (tarfile.TarError, KeyError, json.JSONDecodeError, OSError) as error:
        raise InvalidInput(f"not a {tier} snapshot of an Engram store: {error}") from error
    if manifest.get("format") != FORMAT or manifest.get("tier") != tier:
        raise InvalidInput(
            f"this archive is a {manifest.get('tier')!r} snapshot (format "
            f"{manifest.get('format')!r}); the {tier} tier reads format {FORMAT}"
        )
    return manifest


def restore_files(archive_path: Path, folder: Path, tier: str) -> int:
    """Unpack the archive's files into `folder`, which must not hold anything yet. Returns
    how many files were written; on any failure the folder is removed again."""
    read_manifest(archive_path, tier)
    if folder.exists() and any(folder.iterdir()):
        raise Conflict(
            f"store {folder.name!r} already holds data on the {tier} tier; restore into a new "
            "store (or delete this one first)",
            field="store",
        )
    written = 0
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive_path, "r") as archive:
            for member in archive:
                relative = _file_member(member)
                if relative is None:
                    continue
                target = folder.joinpath(*relative.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                source = archive.extractfile(member)
                assert source is not None  # a regular file (checked by _file_member)
                with source, target.open("wb") as out:
                    shutil.copyfileobj(source, out)
                written += 1
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return written


def restore_points(
    archive_path: Path, collections: Mapping[str, HybridCollection], tier: str
) -> int:
    """Write the archive's points into the opened store's collections (keyword rows in step).
    Returns how many points were written."""
    manifest = read_manifest(archive_path, tier)
    written = 0
    with tarfile.open(archive_path, "r") as archive:
        for name, described in manifest["collections"].items():
            collection = collections.get(name)
            if collection is None:
                raise InvalidInput(
                    f"the snapshot has a collection {name!r} this tier does not keep"
                )
            if int(described["dimension"]) != collection.dimension:
                raise InvalidInput(
                    f"collection {name!r} was saved with {described['dimension']}-dimensional "
                    f"vectors; this tier's embedder gives {collection.dimension}"
                )
            lines = _member_bytes(archive, f"collections/{name}/points.jsonl").splitlines()
            vectors = np.load(
                io.BytesIO(_member_bytes(archive, f"collections/{name}/vectors.npy")),
                allow_pickle=False,
            )
            if len(lines) != len(vectors):
                raise InvalidInput(
                    f"collection {name!r}: {len(lines)} points, {len(vectors)} vectors"
                )
            for start in range(0, len(lines), RESTORE_BATCH):
                batch = []
                for offset, line in enumerate(lines[start : start + RESTORE_BATCH]):
                    point = json.loads(line)
                    batch.append(
                        VectorPoint(point["id"], vectors[start + offset], point["payload"])
                    )
                collection.upsert(batch)
                written += len(batch)
    return written


# ---------------------------------------------------------------------- internals


def _archived_files(parts: StoreParts) -> Iterator[Path]:
    for path in sorted(parts.folder.rglob("*")):
        relative = path.relative_to(parts.folder)
        if relative.parts[0] in parts.derived or not path.is_file() or path.is_symlink():
            continue
        if path.name.endswith(SQLITE_COMPANIONS) or relative.parts[0].startswith("."):
            continue  # SQLite's own companions; hidden scratch (uploads in flight)
        yield path


def _sqlite_copy(source: Path, target: Path) -> None:
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


def _points_of(collection: HybridCollection) -> tuple[list[str], list[dict[str, Any]], np.ndarray]:
    ids: list[str] = []
    payloads: list[dict[str, Any]] = []
    for point_id, payload in collection.scroll_all():
        ids.append(point_id)
        payloads.append(payload)
    found = collection.vectors_of(ids)
    vectors = np.zeros((len(ids), collection.dimension), dtype=np.float32)
    for row, point_id in enumerate(ids):
        vectors[row] = found[point_id]
    return ids, payloads, vectors


def _add_bytes(archive: tarfile.TarFile, name: str, data: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = int(time.time())
    archive.addfile(info, io.BytesIO(data))


def _member_bytes(archive: tarfile.TarFile, name: str) -> bytes:
    try:
        member = archive.extractfile(name)
    except KeyError as error:
        raise InvalidInput(f"the snapshot lacks {name}") from error
    if member is None:
        raise InvalidInput(f"the snapshot's {name} is not a file")
    return member.read()


def _file_member(member: tarfile.TarInfo) -> PurePosixPath | None:
    """The path under files/ of an archived store file; None for the snapshot's other parts.
    InvalidInput for a member that could write outside the store's folder."""
    path = PurePosixPath(member.name)
    if not path.parts or path.parts[0] != "files":
        return None
    relative = PurePosixPath(*path.parts[1:])
    if (
        not member.isfile()
        or path.is_absolute()
        or not relative.parts
        or any(part in ("", ".", "..") for part in relative.parts)
    ):
        raise InvalidInput(
            f"the snapshot holds an entry that is not a plain store file: {member.name!r}"
        )
    return relative
