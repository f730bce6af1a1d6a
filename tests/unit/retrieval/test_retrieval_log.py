"""Retrieval log: one JSONL file per UTC day, ids and scores only, safe under threads."""

from __future__ import annotations

import json
import threading
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from services.retrieval.core.log_entry import LOG_KEYS, LogEntry, entry_from_line, entry_to_line
from services.retrieval.retrieval_log import RetrievalLog

T0 = datetime(2026, 4, 14, 10, 0, tzinfo=UTC)


def search_entry(at: datetime = T0, query: str = "two-phase commit") -> LogEntry:
    return LogEntry(
        at=at,
        op="search",
        query=query,
        intent="design",
        intent_inferred=False,
        results=(("d-1", 0.81), ("d-2", 0.42)),
        latency_ms=12.5,
        n_results=10,
        filters={"room": "projects/engram", "min_score": 0.1},
    )


def test_a_line_has_exactly_the_logged_keys_and_no_drawer_text(tmp_path: Path) -> None:
    log = RetrievalLog(tmp_path)
    log.append(search_entry())
    (line,) = log.path_for(date(2026, 4, 14)).read_text().splitlines()
    payload = json.loads(line)
    assert tuple(payload) == LOG_KEYS, f"expected keys {LOG_KEYS}, got {tuple(payload)}"
    assert payload["results"] == [
        {"drawer_id": "d-1", "score": 0.81},
        {"drawer_id": "d-2", "score": 0.42},
    ]
    for result in payload["results"]:
        assert set(result) == {"drawer_id", "score"}, f"unexpected result keys {set(result)}"


def test_an_entry_survives_the_round_trip() -> None:
    original = search_entry()
    assert entry_from_line(entry_to_line(original)) == original


def test_events_go_to_the_file_of_their_utc_day(tmp_path: Path) -> None:
    log = RetrievalLog(tmp_path)
    # 22:00 at UTC-5 is 03:00 the next day in UTC.
    log.append(search_entry(datetime(2026, 4, 14, 22, 0, tzinfo=timezone(timedelta(hours=-5)))))
    log.append(search_entry(datetime(2026, 4, 14, 1, 0, tzinfo=UTC)))
    assert (tmp_path / "retrieval_log" / "2026-04-15.jsonl").is_file()
    assert (tmp_path / "retrieval_log" / "2026-04-14.jsonl").is_file()
    assert log.days() == [date(2026, 4, 14), date(2026, 4, 15)]


def test_naive_timestamps_are_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        search_entry(datetime(2026, 4, 14, 10, 0))


def test_read_returns_the_days_asked_for_in_order(tmp_path: Path) -> None:
    log = RetrievalLog(tmp_path)
    for offset in (2, 0, 1, 5):
        log.append(search_entry(T0 + timedelta(days=offset), query=f"q{offset}"))
    got = [e.query for e in log.read(date(2026, 4, 14), date(2026, 4, 16))]
    assert got == ["q0", "q1", "q2"], f"expected q0..q2 in day order, got {got}"


def test_read_of_a_missing_log_is_empty(tmp_path: Path) -> None:
    assert list(RetrievalLog(tmp_path).read(date(2026, 1, 1), date(2026, 12, 31))) == []


def test_read_refuses_a_reversed_range(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="after until"):
        RetrievalLog(tmp_path).read(date(2026, 4, 15), date(2026, 4, 14))


def test_a_torn_last_line_is_skipped_and_counted(tmp_path: Path) -> None:
    log = RetrievalLog(tmp_path)
    log.append(search_entry(query="whole"))
    path = log.path_for(T0.date())
    with path.open("ab") as handle:
        handle.write(entry_to_line(search_entry()).encode()[:30])
    scan = log.read(T0.date(), T0.date())
    got = [e.query for e in scan]
    assert got == ["whole"]
    assert scan.skipped_lines == 1, f"expected 1 skipped line, got {scan.skipped_lines}"


def test_the_next_append_after_a_torn_line_starts_on_a_fresh_line(tmp_path: Path) -> None:
    log = RetrievalLog(tmp_path)
    path = log.path_for(T0.date())
    path.parent.mkdir(parents=True)
    path.write_bytes(b'{"at": "2026-04-14T10:0')
    log.append(search_entry(query="after the tear"))
    scan = log.read(T0.date(), T0.date())
    assert [e.query for e in scan] == ["after the tear"], "the torn fragment swallowed the entry"
    assert scan.skipped_lines == 1


def test_garbage_lines_do_not_hide_good_ones(tmp_path: Path) -> None:
    log = RetrievalLog(tmp_path)
    path = log.path_for(T0.date())
    path.parent.mkdir(parents=True)
    good = entry_to_line(search_entry()).encode()
    path.write_bytes(b"\xff\xfe\n[1, 2]\n" + good + b'\n{"op": "search"}\n\n')
    scan = log.read(T0.date(), T0.date())
    assert len(list(scan)) == 1
    assert scan.skipped_lines == 3


def test_record_retrieval_scores_are_null(tmp_path: Path) -> None:
    record = LogEntry(
        at=T0,
        op="record_retrieval",
        query="",
        intent="",
        intent_inferred=False,
        results=(("d-1", None),),
        latency_ms=0.3,
    )
    line = entry_to_line(record)
    assert json.loads(line)["results"] == [{"drawer_id": "d-1", "score": None}]
    assert entry_from_line(line) == record


def test_concurrent_appends_never_interleave(tmp_path: Path) -> None:
    log = RetrievalLog(tmp_path)
    threads_n, per_thread = 10, 50
    # Long queries make a torn or interleaved write visible as a parse failure.
    padding = "x" * 2000

    def writer(thread: int) -> None:
        for n in range(per_thread):
            log.append(search_entry(query=f"{thread}-{n}-{padding}"))

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(threads_n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    lines = log.path_for(T0.date()).read_bytes().splitlines()
    assert len(lines) == threads_n * per_thread, f"expected 500 lines, got {len(lines)}"
    queries = {entry_from_line(line.decode()).query for line in lines}
    assert len(queries) == threads_n * per_thread, "expected every entry exactly once"
