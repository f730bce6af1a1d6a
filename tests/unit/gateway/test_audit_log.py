"""The audit log on both backends (day files, a real Redis stream): newest first, bounded by
day, read lazily page by page, and the events of every writer in one listing."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import cast

from gateway.core.audit import AuditEvent, AuditLog
from gateway.core.redis_state import AuditStream, Keyspace


def _event(n: int, writer: str = "tok_1") -> AuditEvent:
    at = datetime.now(UTC).isoformat()
    return AuditEvent(at, writer, "write", "add_drawer", "alpha", (f"d{n}",), "ok")


def test_events_list_newest_first_within_the_days_asked(
    open_audit: Callable[[], AuditLog],
) -> None:
    log = open_audit()
    written = [_event(n) for n in range(3)]
    for event in written:
        log.append(event)
    today = datetime.now(UTC).date()
    assert list(log.read(today, today)) == written[::-1], "field for field, newest first"
    yesterday, tomorrow = today - timedelta(days=1), today + timedelta(days=1)
    assert list(log.read(yesterday, yesterday)) == [], "a day with no events lists none"
    assert list(log.read(tomorrow, tomorrow)) == []
    assert len(list(log.read(yesterday, tomorrow))) == 3


def test_a_long_log_reads_page_by_page_in_order(open_audit: Callable[[], AuditLog]) -> None:
    log = open_audit()
    for n in range(1203):  # past two of the stream's pages
        log.append(_event(n))
    today = datetime.now(UTC).date()
    read = [int(e.targets[0][1:]) for e in log.read(today, today)]
    assert read == list(range(1202, -1, -1)), "every event once, newest first"
    first = [e.targets for e in itertools.islice(log.read(today, today), 2)]
    assert first == [("d1202",), ("d1201",)]


def test_events_of_two_writers_list_together(open_audit: Callable[[], AuditLog]) -> None:
    one, other = open_audit(), open_audit()
    for n in range(4):
        (one if n % 2 else other).append(_event(n, writer="tok_one" if n % 2 else "tok_other"))
    today = datetime.now(UTC).date()
    listed = [(e.token_id, e.targets[0]) for e in one.read(today, today)]
    assert listed == [
        ("tok_one", "d3"),
        ("tok_other", "d2"),
        ("tok_one", "d1"),
        ("tok_other", "d0"),
    ]
    assert [e.targets for e in other.read(today, today)] == [
        e.targets for e in one.read(today, today)
    ]


def test_the_stream_is_trimmed_to_about_its_limit(keyspace: Keyspace) -> None:
    log = AuditLog(AuditStream(keyspace, max_events=1000))
    for n in range(3000):
        log.append(_event(n))
    kept = cast(int, keyspace.client.xlen(keyspace.key("audit")))
    assert 1000 <= kept < 1500, f"expected about 1000 events kept (trimmed by nodes), got {kept}"
