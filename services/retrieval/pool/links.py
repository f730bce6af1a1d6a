"""The links of one store's drawer pool, in a SQLite table beside it (`links.sqlite`).

Synchronous and thread-safe (one connection under a lock; callers use `asyncio.to_thread`).
A link's ends are checked against the pool by the caller (`services.retrieval.links`): this
table stores what it is given.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Collection
from pathlib import Path

from services.retrieval.core.links import Link
from services.runtime.sqlite import open_sidecar

_SCHEMA = """
CREATE TABLE IF NOT EXISTS links (
    id TEXT PRIMARY KEY,
    from_id TEXT NOT NULL,
    to_id TEXT NOT NULL,
    type TEXT NOT NULL,
    valid_from REAL NOT NULL,
    valid_to REAL,
    asserted_by TEXT NOT NULL,
    reason TEXT NOT NULL,
    evidence TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS links_from ON links(from_id);
CREATE INDEX IF NOT EXISTS links_to ON links(to_id);
"""
_COLUMNS = (
    "id, from_id, to_id, type, valid_from, valid_to, asserted_by, reason, evidence, created_at"
)


def _link(row: tuple[object, ...]) -> Link:
    (id_, from_id, to_id, type_, valid_from, valid_to, asserted_by, reason, evidence, created) = row
    return Link(
        id=str(id_),
        from_id=str(from_id),
        to_id=str(to_id),
        type=str(type_),
        valid_from=float(valid_from),  # type: ignore[arg-type]
        valid_to=None if valid_to is None else float(valid_to),  # type: ignore[arg-type]
        asserted_by=str(asserted_by),
        reason=str(reason),
        evidence_ids=tuple(json.loads(str(evidence))),
        created_at=float(created),  # type: ignore[arg-type]
    )


class LinkStore:
    """Create, read, end and delete links; every link touching a drawer, both ends."""

    def __init__(self, path: Path) -> None:
        self._lock = threading.Lock()
        self._db = open_sidecar(path, _SCHEMA)

    def add(self, link: Link) -> None:
        self.add_many([link])

    def add_many(self, links: Collection[Link]) -> None:
        """Insert links in one transaction (all or none)."""
        rows = [
            (
                link.id,
                link.from_id,
                link.to_id,
                link.type,
                link.valid_from,
                link.valid_to,
                link.asserted_by,
                link.reason,
                json.dumps(list(link.evidence_ids)),
                link.created_at,
            )
            for link in links
        ]
        with self._lock:
            self._db.execute("BEGIN")
            try:
                self._db.executemany(
                    f"INSERT INTO links ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def get(self, link_id: str) -> Link | None:
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM links WHERE id = ?", (link_id,)
            ).fetchone()
        return None if row is None else _link(row)

    def of_drawer(self, drawer_id: str) -> list[Link]:
        """Every link with the drawer at either end, oldest first."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM links WHERE from_id = ? OR to_id = ? "
                "ORDER BY created_at, id",
                (drawer_id, drawer_id),
            ).fetchall()
        return [_link(row) for row in rows]

    def touching(self, drawer_ids: Collection[str]) -> list[Link]:
        """Every link with one of these drawers at either end (one query)."""
        if not drawer_ids:
            return []
        marks = ", ".join("?" for _ in drawer_ids)
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM links WHERE from_id IN ({marks}) OR to_id IN ({marks}) "
                "ORDER BY created_at, id",
                (*drawer_ids, *drawer_ids),
            ).fetchall()
        return [_link(row) for row in rows]

    def end(self, link_id: str, at: float) -> Link | None:
        """Set `valid_to` (a link already ended keeps its end); None when there is no link."""
        with self._lock:
            self._db.execute(
                "UPDATE links SET valid_to = ? WHERE id = ? AND valid_to IS NULL", (at, link_id)
            )
        return self.get(link_id)

    def end_all_for(self, drawer_ids: Collection[str], at: float) -> int:
        """End every open link touching these drawers (a deleted drawer leaves none holding)."""
        if not drawer_ids:
            return 0
        marks = ", ".join("?" for _ in drawer_ids)
        with self._lock:
            cursor = self._db.execute(
                f"UPDATE links SET valid_to = ? WHERE valid_to IS NULL "
                f"AND (from_id IN ({marks}) OR to_id IN ({marks}))",
                (at, *drawer_ids, *drawer_ids),
            )
        return cursor.rowcount

    def open_ends(self) -> list[tuple[str, str, str]]:
        """(id, from, to) of every link not ended: for `engram doctor`'s dangling-link check."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, from_id, to_id FROM links WHERE valid_to IS NULL"
            ).fetchall()
        return [(str(i), str(f), str(t)) for i, f, t in rows]

    def delete(self, link_id: str) -> bool:
        with self._lock:
            cursor = self._db.execute("DELETE FROM links WHERE id = ?", (link_id,))
        return cursor.rowcount > 0

    def count(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT COUNT(*) FROM links").fetchone()
        return int(count)

    def close(self) -> None:
        with self._lock:
            self._db.close()
