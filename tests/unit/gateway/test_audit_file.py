"""The audit log's files read back whole: ids holding Unicode line separators stay one line
(found by the stateful fuzzer: a drawer id with U+2028 made the reader fail), a line still
being written is not read yet, and a line torn by a crash is skipped, not fatal."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from gateway.core.audit import AuditEvent, AuditFiles, AuditLog


def _event(target: str, at: datetime) -> AuditEvent:
    return AuditEvent(at.isoformat(), "tok_1", "write", "add_drawer", "s", (target,), "ok")


def test_lines_with_unicode_separators_torn_lines_and_unfinished_lines(tmp_path: Path) -> None:
    log = AuditLog(AuditFiles(tmp_path))
    now = datetime.now(UTC)
    odd = "id\u2028with\x85separators\x1c"
    log.append(_event("first", now))
    log.append(_event(odd, now))
    day = now.date()
    path = tmp_path / f"{day.isoformat()}.jsonl"
    with path.open("a", encoding="utf-8") as out:
        out.write('{"at": "torn by a crash\n')  # a whole line that is not an event
        out.write('{"at": "still being writ')  # no newline yet: being written
    read = list(log.read(day, day))
    assert [e.targets for e in read] == [(odd,), ("first",)], "newest first, both whole"
