"""The audit log: every write and admin action, on every face — who, what, which store, when,
and how it ended; never drawer text.

`Gateway.operation` is the one door every face (REST, public gRPC, MCP, the dashboard through
REST) goes through, so it wraps each operation whose effect is not a read (the operation
table's `effect`) and records one event when the call ends, refused or not. Each event is one
JSON line, kept by an `AuditBackend`: `AuditFiles`, one file per UTC day under
`<state_dir>/audit/`, appended and never rewritten (one gateway), or `AuditStream`
(`redis_state.py`), one Redis stream every gateway replica appends to. Reading them is
`ListAuditEvents` (admin; a store-scoped admin sees its stores' events only).

What an event holds is chosen so the log can be kept and shared: the token's id and tier, the
operation's name, the store, the ids the request names (a drawer, a file, a link, a token, a
job, a prompt version) and the outcome ("ok" or the error code). Contents, queries, reasons and
secrets are never read from the request.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Final, Protocol

from google.protobuf.message import Message

from gateway.core.principal import Principal

# Request fields that name what an action was done to: ids only, never text.
_TARGET_FIELDS: Final = (
    "id",
    "drawer_id",
    "from_id",
    "to_id",
    "file_id",
    "version",
    "session_id",
    "path",
)
_TARGET_LISTS: Final = ("drawer_ids", "file_ids", "session_ids", "proposal_ids")
MAX_TARGETS: Final = 20

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class AuditEvent:
    at: str  # ISO 8601, UTC
    token_id: str
    tier: str  # read | write | admin
    operation: str
    store: str
    targets: tuple[str, ...]
    outcome: str  # "ok", or the error code


def _get(message: Message, field: str) -> Any:
    """A field of a message known only by name."""
    return getattr(message, field)


def store_of(request: object) -> str:
    """The store a request acts on ("" for one that names none: tokens)."""
    if not isinstance(request, Message):
        return ""
    fields = request.DESCRIPTOR.fields_by_name
    if "store" in fields:
        store = _get(request, "store")
        return str(_get(store, "name") if isinstance(store, Message) else store)
    if "spec" in fields:
        return str(_get(_get(request, "spec"), "name"))
    if "name" in fields and request.DESCRIPTOR.name.endswith("StoreRequest"):
        return str(_get(request, "name"))
    return ""


def targets_of(request: object, answer: object = None) -> tuple[str, ...]:
    """The ids a request names, and the id of what it created."""
    found: list[str] = []
    for message in (request, answer):
        if not isinstance(message, Message):
            continue
        fields = message.DESCRIPTOR.fields_by_name
        for name in _TARGET_FIELDS:
            value = _get(message, name) if name in fields else ""
            if isinstance(value, str) and value:
                found.append(value)
        for name in _TARGET_LISTS:
            if name in fields:
                found.extend(str(v) for v in _get(message, name))
        for holder in ("info", "drawer"):  # what a create or a write answered with
            if message is not answer or holder not in fields:
                continue
            held = _get(message, holder)
            held_id = _get(held, "id") if isinstance(held, Message) else ""
            if held_id:
                found.append(str(held_id))
    return tuple(dict.fromkeys(found))[:MAX_TARGETS]


def event(
    principal: Principal, operation: str, request: object, answer: object, outcome: str
) -> AuditEvent:
    return AuditEvent(
        at=datetime.now(UTC).isoformat(),
        token_id=principal.token_id,
        tier=principal.tier.label,
        operation=operation,
        store=store_of(request),
        targets=targets_of(request, answer),
        outcome=outcome,
    )


class AuditBackend(Protocol):
    """Where audit lines are kept."""

    def append(self, day: date, line: str) -> None:
        """Keep one JSON line (no newline) of an event of UTC day `day`."""

    def lines(self, since: date, until: date) -> Iterator[tuple[str, str]]:
        """(where it is kept, line) of the events from `since` to `until` (inclusive),
        newest first, read lazily."""

    def first_day(self) -> date | None:
        """The UTC day of the oldest event kept; None when there is none."""

    def last_day(self) -> date | None:
        """The UTC day of the newest event kept; None when there is none."""

    def restore(self, at: datetime, line: str) -> None:
        """Keep one event of another log at its own time `at` (copying a gateway's state:
        events come oldest first, into a log that holds none)."""


class AuditLog:
    """The audit log, kept by `backend`."""

    def __init__(self, backend: AuditBackend) -> None:
        self.backend = backend

    def append(self, entry: AuditEvent) -> None:
        line = json.dumps(asdict(entry), ensure_ascii=False, separators=(",", ":"))
        self.backend.append(datetime.fromisoformat(entry.at).date(), line)

    def read(self, since: date, until: date) -> Iterator[AuditEvent]:
        """Events from `since` to `until` (inclusive), newest first."""
        for where, line in self.backend.lines(since, until):
            try:
                data: dict[str, Any] = json.loads(line)
                data["targets"] = tuple(data.get("targets", ()))
                yield AuditEvent(**data)
            except (json.JSONDecodeError, TypeError) as error:
                # A line torn by a crash mid-write: said in the log, the rest read.
                logger.warning("skipped an unreadable audit line in %s: %s", where, error)


class AuditFiles:
    """Append-only JSONL files, one per UTC day, under `directory`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._lock = threading.Lock()

    def _file(self, day: date) -> Path:
        return self.directory / f"{day.isoformat()}.jsonl"

    def append(self, day: date, line: str) -> None:
        data = (line + "\n").encode("utf-8")
        with self._lock:
            self.directory.mkdir(parents=True, exist_ok=True)
            # One write of the whole line to a file opened for appending: a reader sees the
            # line whole or not at all (it skips an unfinished last line).
            with self._file(day).open("ab", buffering=0) as out:
                out.write(data)

    def _days(self) -> list[date]:
        days = []
        for path in self.directory.glob("*.jsonl"):
            try:
                days.append(date.fromisoformat(path.stem))
            except ValueError:
                continue  # not a day file of ours
        return days

    def first_day(self) -> date | None:
        return min(self._days(), default=None)

    def last_day(self) -> date | None:
        return max(self._days(), default=None)

    def restore(self, at: datetime, line: str) -> None:
        self.append(at.astimezone(UTC).date(), line)

    def lines(self, since: date, until: date) -> Iterator[tuple[str, str]]:
        day = until
        while day >= since:
            path = self._file(day)
            if path.is_file():
                # What follows the last newline is a line still being written: not read yet.
                lines = path.read_text(encoding="utf-8", errors="replace").split("\n")[:-1]
                for line in reversed(lines):
                    yield str(path), line
            day -= timedelta(days=1)
