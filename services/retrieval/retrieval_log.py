"""The retrieval log on disk: append-only JSONL at <store>/retrieval_log/<YYYY-MM-DD>.jsonl.

One file per UTC day of the event. The line format and the privacy rule (ids and scores,
never drawer text) live in `core.log_entry`; this module only moves lines to and from disk.

Decisions:

- Open, append, close on every write, under one lock per log. A retrieval already costs
  milliseconds, so two syscalls more are noise, and holding no handle means no day-rollover
  bookkeeping and no write into a file that a dropped store has already unlinked.
- Each line goes out as one `os.write` of the whole encoded line on an O_APPEND descriptor,
  looped only if the kernel takes fewer bytes; the lock keeps threads of this process from
  interleaving, O_APPEND keeps every write at the current end.
- A line torn by a crash is healed on the next append: if the file does not end in a newline,
  the next write starts with one, so the torn fragment stays one bad line instead of also
  corrupting the good line appended after it.
- Readers skip lines that do not parse (a torn tail, a line being written right now) and
  count them in `LogScan.skipped_lines`; one bad line never hides a day.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Iterator
from datetime import date
from pathlib import Path

from services.retrieval.core.log_entry import LogEntry, entry_from_line, entry_to_line

LOG_DIR_NAME = "retrieval_log"

_DAY_FILE = re.compile(r"^(\d{4}-\d{2}-\d{2})\.jsonl$")

logger = logging.getLogger(__name__)


class LogScan(Iterator[LogEntry]):
    """Entries of a day range, read lazily in day order and line order.

    `skipped_lines` counts the lines that failed to parse so far; read it after iterating.
    """

    def __init__(self, files: list[Path]) -> None:
        self.skipped_lines = 0
        self._entries = self._scan(files)

    def __next__(self) -> LogEntry:
        return next(self._entries)

    def _scan(self, files: list[Path]) -> Iterator[LogEntry]:
        for path in files:
            skipped_here = 0
            try:
                handle = path.open("rb")
            except FileNotFoundError:
                # Deleted between listing and reading (store drop, retention sweep): no entries.
                continue
            with handle:
                for raw in handle:
                    if not raw.strip():
                        continue
                    try:
                        yield entry_from_line(raw.decode("utf-8"))
                    except ValueError:
                        # UnicodeDecodeError and json.JSONDecodeError are ValueErrors too.
                        skipped_here += 1
            if skipped_here:
                self.skipped_lines += skipped_here
                logger.warning("retrieval log %s: skipped %d unreadable lines", path, skipped_here)


class RetrievalLog:
    """Append-only retrieval log of one store; safe to share between threads."""

    def __init__(self, store_dir: Path) -> None:
        """Log under `store_dir`/retrieval_log; the folder is made on the first append."""
        self._dir = Path(store_dir) / LOG_DIR_NAME
        self._lock = threading.Lock()

    @property
    def directory(self) -> Path:
        """The folder holding the day files."""
        return self._dir

    def path_for(self, day: date) -> Path:
        """The file that holds the events of UTC `day`."""
        return self._dir / f"{day.isoformat()}.jsonl"

    def append(self, entry: LogEntry) -> None:
        """Write `entry` as one line to the file of its UTC day. Raises OSError on disk failure."""
        data = (entry_to_line(entry) + "\n").encode("utf-8")
        path = self.path_for(entry.at.date())
        with self._lock:
            self._dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    data = b"\n" + data
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
            finally:
                os.close(fd)

    def days(self) -> list[date]:
        """UTC days that have a log file, oldest first."""
        if not self._dir.is_dir():
            return []
        found: list[date] = []
        for path in self._dir.iterdir():
            match = _DAY_FILE.match(path.name)
            if match is None:
                continue
            try:
                found.append(date.fromisoformat(match.group(1)))
            except ValueError:
                continue  # e.g. 2026-02-30.jsonl: not a file this log wrote
        return sorted(found)

    def read(self, since: date, until: date) -> LogScan:
        """Entries of UTC days `since` through `until` (both inclusive), oldest day first.

        Raises ValueError when `since` is after `until`.
        """
        if since > until:
            raise ValueError(
                f"since ({since.isoformat()}) is after until ({until.isoformat()}): "
                "swap them or widen the range"
            )
        files = [self.path_for(day) for day in self.days() if since <= day <= until]
        return LogScan(files)
