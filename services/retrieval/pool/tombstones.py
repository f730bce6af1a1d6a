"""What a store's pool has forgotten: one row per deleted drawer id, in a SQLite table beside
the pool (`tombstones.sqlite`).

A deletion is committed here first, then carried out in the vector store and the keyword
index. So a crash between the two leaves a tombstoned drawer that the next reconcile finishes
deleting, and a write that names a deleted id again (a compose job replayed after the delete:
its drawer ids are derived from the session and the text) is skipped, not resurrected. Only
an explicit revival (an undo, an import that restores a backup) writes a forgotten id again
and lifts its tombstone.

Synchronous and thread-safe (one connection under a lock; callers use `asyncio.to_thread`).
"""

from __future__ import annotations

import threading
from collections.abc import Collection
from pathlib import Path

from services.runtime.sqlite import open_sidecar

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tombstones (
    drawer_id TEXT PRIMARY KEY,
    deleted_at REAL NOT NULL
);
"""
# SQLite's default limit on bound parameters is 999 in old builds: stay under it.
_BATCH = 500


class Tombstones:
    """The ids a pool deleted, and when."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._db = open_sidecar(path, _SCHEMA)

    def bury(self, ids: Collection[str], at: float) -> None:
        """Record `ids` as deleted at `at` (durable before this returns)."""
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO tombstones (drawer_id, deleted_at) VALUES (?, ?)",
                [(drawer_id, at) for drawer_id in ids],
            )

    def lift(self, ids: Collection[str]) -> None:
        """Forget that `ids` were deleted (they are being written again on purpose)."""
        with self._lock:
            self._db.executemany(
                "DELETE FROM tombstones WHERE drawer_id = ?", [(drawer_id,) for drawer_id in ids]
            )

    def buried(self, ids: Collection[str]) -> set[str]:
        """Which of `ids` were deleted."""
        found: set[str] = set()
        wanted = list(ids)
        with self._lock:
            for start in range(0, len(wanted), _BATCH):
                batch = wanted[start : start + _BATCH]
                marks = ", ".join("?" * len(batch))
                rows = self._db.execute(
                    f"SELECT drawer_id FROM tombstones WHERE drawer_id IN ({marks})", batch
                ).fetchall()
                found.update(str(row[0]) for row in rows)
        return found

    def count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM tombstones").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
