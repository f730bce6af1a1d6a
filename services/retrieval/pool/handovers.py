"""What a store's searches handed to whom: the ledger that makes a recorded use earned.

A recorded retrieval raises a drawer's salience, so it must follow a real use: it counts once
per search (or context pack, or session start) that returned the drawer to the same caller
within the use window (24 hours, the usage rate's). Every handover is a row
(caller, drawer id, when); a recorded use redeems the oldest open one; anything else is
refused, and the answer says why. A read token can no longer raise any drawer it likes, and
repeating a record for one search counts once.

The caller is the token's id the gateway puts in the store context ("" for a caller the tier
cannot name: tier-to-tier calls, which share one ledger). SQLite beside the pool
(`handovers.sqlite`), so a restart keeps what was handed over; rows older than the window are
pruned as new ones come. Synchronous and thread-safe (callers use `asyncio.to_thread`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from services.runtime.sqlite import open_sidecar

_SCHEMA = """
CREATE TABLE IF NOT EXISTS handovers (
    caller TEXT NOT NULL,
    drawer_id TEXT NOT NULL,
    at REAL NOT NULL,
    redeemed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS handovers_open ON handovers (caller, drawer_id, redeemed, at);
CREATE INDEX IF NOT EXISTS handovers_at ON handovers (at);
"""
NEVER_HANDED: str = "no search returned it to this caller within the use window"
ALREADY_USED: str = "already recorded once for each search that returned it to this caller"


@dataclass(frozen=True, slots=True)
class Redemption:
    """Which recorded uses count, and why the others do not."""

    credited: tuple[str, ...]
    refused: tuple[tuple[str, str], ...]  # (drawer id, reason)


class Handovers:
    """The open handovers of one store's pool."""

    def __init__(self, path: Path, window_s: float) -> None:
        self._lock = threading.Lock()
        self._db = open_sidecar(path, _SCHEMA)
        self.window_s = window_s

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """The connection, under the lock, inside one transaction (one commit, not one per
        statement: the connection is in autocommit mode)."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def hand_over(self, caller: str, drawer_ids: Sequence[str], at: float) -> None:
        """`drawer_ids` were returned to `caller` at `at` (one search: each id once)."""
        ids = list(dict.fromkeys(drawer_ids))
        with self._transaction() as db:
            db.execute("DELETE FROM handovers WHERE at < ?", (at - self.window_s,))
            db.executemany(
                "INSERT INTO handovers (caller, drawer_id, at) VALUES (?, ?, ?)",
                [(caller, drawer_id, at) for drawer_id in ids],
            )

    def redeem(self, caller: str, drawer_ids: Sequence[str], now: float) -> Redemption:
        """Redeem one open handover per id (the oldest in the window); refuse the rest."""
        credited: list[str] = []
        refused: list[tuple[str, str]] = []
        since = now - self.window_s
        with self._transaction() as db:
            for drawer_id in dict.fromkeys(drawer_ids):
                row = db.execute(
                    "SELECT rowid FROM handovers WHERE caller = ? AND drawer_id = ? "
                    "AND redeemed = 0 AND at >= ? AND at <= ? ORDER BY at LIMIT 1",
                    (caller, drawer_id, since, now),
                ).fetchone()
                if row is not None:
                    db.execute("UPDATE handovers SET redeemed = 1 WHERE rowid = ?", row)
                    credited.append(drawer_id)
                    continue
                used = db.execute(
                    "SELECT 1 FROM handovers WHERE caller = ? AND drawer_id = ? AND at >= ?",
                    (caller, drawer_id, since),
                ).fetchone()
                refused.append((drawer_id, ALREADY_USED if used else NEVER_HANDED))
        return Redemption(tuple(credited), tuple(refused))

    def close(self) -> None:
        with self._lock:
            self._db.close()
