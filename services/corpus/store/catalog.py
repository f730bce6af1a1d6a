"""The file catalog of one store (SQLite): folders and files, their state and counts.

Folders and file names are catalog entries, validated by `services.corpus.core.names`; they
never become filesystem paths (bodies live under content addresses, see blobs.py).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from services.runtime.errors import Conflict, InvalidInput, NotFound

STATES = ("uploaded", "ingested", "authored", "failed")

_SCHEMA = (
    """CREATE TABLE IF NOT EXISTS folders (
        path TEXT PRIMARY KEY,
        created_at REAL NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS files (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        folder TEXT NOT NULL,
        size INTEGER NOT NULL,
        detected_type TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        state TEXT NOT NULL,
        size_tier TEXT NOT NULL,
        chunk_count INTEGER NOT NULL DEFAULT 0,
        derived_drawer_count INTEGER NOT NULL DEFAULT 0,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        synopsis TEXT NOT NULL DEFAULT '',
        last_error TEXT NOT NULL DEFAULT '',
        report TEXT NOT NULL DEFAULT '{}',
        chunker_version TEXT NOT NULL DEFAULT '',
        UNIQUE (folder, name))""",
    "CREATE INDEX IF NOT EXISTS files_sha ON files (sha256)",
    "CREATE INDEX IF NOT EXISTS files_folder ON files (folder)",
)

_COLUMNS = (
    "id, name, folder, size, detected_type, sha256, state, size_tier, chunk_count, "
    "derived_drawer_count, created_at, updated_at, synopsis, last_error, report, chunker_version"
)


@dataclass(frozen=True)
class FileRecord:
    id: str
    name: str
    folder: str
    size: int
    detected_type: str
    sha256: str
    state: str
    size_tier: str  # full | streamed | document
    chunk_count: int = 0
    derived_drawer_count: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0
    synopsis: str = ""
    last_error: str = ""
    report: dict[str, int] = field(default_factory=dict)
    chunker_version: str = ""

    @property
    def session_id(self) -> str:
        """The raw session of a file that is not itself a transcript."""
        return f"file-{self.id}"


def _now() -> float:
    return datetime.now(UTC).timestamp()


def _record(row: sqlite3.Row | tuple[object, ...]) -> FileRecord:
    values = list(row)
    values[14] = json.loads(str(values[14]) or "{}")
    return FileRecord(*values)  # type: ignore[arg-type]


class Catalog:
    """Folders and files of one store."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA busy_timeout=5000")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._lock = threading.RLock()
        with self.transaction():
            for statement in _SCHEMA:
                self._conn.execute(statement)

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # ------------------------------------------------------------------ folders

    def create_folder(self, path: str) -> None:
        """Create a folder and its parents (idempotent)."""
        if not path:
            return
        parts = path.split("/")
        with self.transaction() as conn:
            for end in range(1, len(parts) + 1):
                conn.execute(
                    "INSERT OR IGNORE INTO folders (path, created_at) VALUES (?, ?)",
                    ("/".join(parts[:end]), _now()),
                )

    def folders(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._conn.execute("SELECT path FROM folders ORDER BY path")]

    def folder_exists(self, path: str) -> bool:
        if not path:
            return True
        with self._lock:
            row = self._conn.execute("SELECT 1 FROM folders WHERE path = ?", (path,)).fetchone()
        return row is not None

    def rename_folder(self, path: str, new_path: str) -> None:
        """Move a folder (and everything below it) to `new_path`."""
        if not self.folder_exists(path) or not path:
            raise NotFound(f"folder {path!r} does not exist", field="path")
        if new_path == path or new_path.startswith(path + "/"):
            raise InvalidInput("a folder cannot move into itself", field="new_path")
        if self.folder_exists(new_path) and new_path:
            raise Conflict(f"folder {new_path!r} already exists", field="new_path")
        parent = new_path.rsplit("/", 1)[0] if "/" in new_path else ""
        self.create_folder(parent)
        with self.transaction() as conn:
            prefix = path + "/"
            for table, column in (("folders", "path"), ("files", "folder")):
                conn.execute(
                    f"UPDATE {table} SET {column} = ? || substr({column}, ?) "
                    f"WHERE {column} = ? OR substr({column}, 1, ?) = ?",
                    (new_path, len(path) + 1, path, len(prefix), prefix),
                )

    def delete_folder(self, path: str, *, recursive: bool) -> list[FileRecord]:
        """Delete a folder; with `recursive`, everything below it. Returns the deleted files."""
        if not path or not self.folder_exists(path):
            raise NotFound(f"folder {path!r} does not exist", field="path")
        below = [f for f in self.files(folder=path, recursive=True)]
        subfolders = [f for f in self.folders() if f.startswith(path + "/")]
        if (below or subfolders) and not recursive:
            raise Conflict(
                f"folder {path!r} is not empty ({len(below)} files, {len(subfolders)} folders): "
                "delete with recursive=true",
                field="recursive",
            )
        with self.transaction() as conn:
            conn.executemany("DELETE FROM files WHERE id = ?", [(f.id,) for f in below])
            conn.executemany(
                "DELETE FROM folders WHERE path = ?", [(p,) for p in [path, *subfolders]]
            )
        return below

    # ------------------------------------------------------------------ files

    def add_file(self, record: FileRecord) -> FileRecord:
        """Add a file; the same bytes under the same name and folder return the existing one."""
        if not self.folder_exists(record.folder):
            self.create_folder(record.folder)
        with self.transaction() as conn:
            existing = conn.execute(
                f"SELECT {_COLUMNS} FROM files WHERE folder = ? AND name = ?",
                (record.folder, record.name),
            ).fetchone()
            if existing is not None:
                found = _record(existing)
                if found.sha256 == record.sha256:
                    return found
                raise Conflict(
                    f"a different file named {record.name!r} already exists in folder "
                    f"{record.folder or '/'!r}: delete or rename it first",
                    field="name",
                )
            now = _now()
            stored = replace(
                record, id=record.id or f"f_{uuid.uuid4().hex[:20]}", created_at=now, updated_at=now
            )
            conn.execute(
                f"INSERT INTO files ({_COLUMNS}) VALUES ({', '.join('?' * 16)})",
                (
                    stored.id,
                    stored.name,
                    stored.folder,
                    stored.size,
                    stored.detected_type,
                    stored.sha256,
                    stored.state,
                    stored.size_tier,
                    stored.chunk_count,
                    stored.derived_drawer_count,
                    stored.created_at,
                    stored.updated_at,
                    stored.synopsis,
                    stored.last_error,
                    json.dumps(stored.report),
                    stored.chunker_version,
                ),
            )
            return stored

    def get(self, file_id: str) -> FileRecord:
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_COLUMNS} FROM files WHERE id = ?", (file_id,)
            ).fetchone()
        if row is None:
            raise NotFound(f"file {file_id!r} does not exist in this store", field="file_id")
        return _record(row)

    def files(
        self, *, folder: str | None = None, recursive: bool = False, states: Sequence[str] = ()
    ) -> list[FileRecord]:
        """Files, by folder then name."""
        query = f"SELECT {_COLUMNS} FROM files"
        clauses: list[str] = []
        params: list[object] = []
        if folder is not None:
            if recursive and folder:
                clauses.append("(folder = ? OR substr(folder, 1, ?) = ?)")
                params += [folder, len(folder) + 1, folder + "/"]
            elif not recursive:
                clauses.append("folder = ?")
                params.append(folder)
        if states:
            clauses.append(f"state IN ({', '.join('?' * len(states))})")
            params += list(states)
        if clauses:
            query += " WHERE " + " AND ".join(clauses)
        with self._lock:
            rows = self._conn.execute(query + " ORDER BY folder, name", params).fetchall()
        return [_record(r) for r in rows]

    def update(self, file_id: str, **changes: object) -> FileRecord:
        """Change columns of a file (state, counts, synopsis, report, folder, name...)."""
        allowed = set(_COLUMNS.replace(" ", "").split(",")) - {"id", "created_at"}
        unknown = set(changes) - allowed
        if unknown:
            raise ValueError(f"not file columns: {sorted(unknown)}")
        if "state" in changes and changes["state"] not in STATES:
            raise ValueError(f"unknown state {changes['state']!r}")
        values = {k: json.dumps(v) if k == "report" else v for k, v in changes.items()}
        values["updated_at"] = _now()
        assignments = ", ".join(f"{k} = ?" for k in values)
        try:
            with self.transaction() as conn:
                cursor = conn.execute(
                    f"UPDATE files SET {assignments} WHERE id = ?", (*values.values(), file_id)
                )
        except sqlite3.IntegrityError as error:
            raise Conflict(
                "a file with that name already exists in that folder", field="name"
            ) from error
        if cursor.rowcount == 0:
            raise NotFound(f"file {file_id!r} does not exist in this store", field="file_id")
        return self.get(file_id)

    def delete_file(self, file_id: str) -> FileRecord:
        record = self.get(file_id)
        with self.transaction() as conn:
            conn.execute("DELETE FROM files WHERE id = ?", (file_id,))
        return record

    def sha_in_use(self, sha256: str) -> bool:
        with self._lock:
            row = self._conn.execute(
                "SELECT 1 FROM files WHERE sha256 = ? LIMIT 1", (sha256,)
            ).fetchone()
        return row is not None
