"""The SQLite connection the per-store sidecar tables share (links, tombstones): WAL, one
connection used from any thread under its owner's lock, every statement its own transaction
unless the owner opens one."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def open_sidecar(path: Path, schema: str) -> sqlite3.Connection:
    """A connection to `path` (created with its folder) with `schema` applied."""
    path.parent.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(schema)
    return db
