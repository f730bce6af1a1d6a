"""Drawer JSONL: every stored field round-trips; every bad line is reported, none crash."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from engram.v1 import common_pb2

from services.retrieval.core.drawer_jsonl import (
    MAX_LINE_BYTES,
    ParseResult,
    drawer_to_line,
    drawers_to_chunks,
    parse_lines,
    split_lines,
)

Drawer = common_pb2.Drawer


def full_drawer(drawer_id: str = "d-1") -> Drawer:
    drawer = Drawer(
        id=drawer_id,
        content="The team chose two-phase commit — für alle Stores.",
        memory_type="decision",
        signature="two-phase commit",
        pin_status=common_pb2.PIN_STATUS_PINNED,
        salience=0.73,
        wing="projects",
        room="projects/engram",
        topic="storage",
        added_by="agent:planner",
        confidence=0.0,  # present and zero: presence must survive the trip
        retrieval_count=4,
        content_hash="ab" * 32,
        attributes={"prompt_version": "v3", "model": "m"},
    )
    drawer.created_at.FromDatetime(datetime(2026, 3, 1, 8, 0, tzinfo=UTC))
    drawer.last_activity_at.FromDatetime(datetime(2026, 4, 2, 9, 30, 15, 123000, tzinfo=UTC))
    drawer.updated_at.FromDatetime(datetime(2026, 4, 1, tzinfo=UTC))
    drawer.derived_from.add(raw_chunk_id="r-1", session_id="s-1", ordinal=0)
    drawer.derived_from.add(raw_chunk_id="r-2", session_id="s-1", ordinal=7)
    return drawer


def minimal_line(**fields: object) -> str:
    payload: dict[str, object] = {
        "id": "m-1",
        "content": "Alice prefers tabs.",
        "memory_type": "preference",
        "created_at": "2026-04-01T00:00:00Z",
    }
    payload.update(fields)
    return json.dumps(payload)


def only_error(result: ParseResult) -> str:
    assert len(result.errors) == 1, f"expected exactly one error, got {result.errors}"
    return result.errors[0].message


# ---------------------------------------------------------------- export


def test_a_line_is_one_json_object_with_proto_field_names() -> None:
    line = drawer_to_line(full_drawer())
    assert "\n" not in line
    payload = json.loads(line)
    assert payload["memory_type"] == "decision"
    assert payload["pin_status"] == "PIN_STATUS_PINNED", "enums are written by name"
    assert payload["created_at"] == "2026-03-01T08:00:00Z"
    assert payload["derived_from"][1] == {
        "raw_chunk_id": "r-2",
        "session_id": "s-1",
        "ordinal": 7,
        "excerpt": "",
    }


def test_default_valued_fields_are_written_and_unset_optionals_are_not() -> None:
    drawer = Drawer(id="d", content="c", memory_type="t")
    payload = json.loads(drawer_to_line(drawer))
    assert payload["topic"] == "" and payload["retrieval_count"] == 0
    assert "signature" not in payload and "confidence" not in payload


def test_read_only_fields_are_not_exported_but_session_descriptors_are() -> None:
    drawer = full_drawer()
    drawer.effective_salience = 0.5
    drawer.sessions.add(session_id="s-1", raw_chunk_count=2)
    payload = json.loads(drawer_to_line(drawer))
    assert "effective_salience" not in payload
    assert payload["sessions"][0]["session_id"] == "s-1", "session descriptors are stored data"
    assert drawer.effective_salience == 0.5, "export must not change the caller's drawer"


def test_lines_are_ascii_so_unicode_line_separators_cannot_split_them() -> None:
    drawer = full_drawer()
    drawer.content = "one\u2028two\u0085three"
    line = drawer_to_line(drawer)
    assert line.isascii()
    assert len(line.splitlines()) == 1


def test_round_trip_preserves_every_field() -> None:
    bare = Drawer(
        id="d-2",
        content="x",
        memory_type="bug",
        salience=0.1,
        pin_status=common_pb2.PIN_STATUS_ACTIVE,
    )  # no signature, no confidence: absence must survive too
    bare.created_at.FromDatetime(datetime(2026, 1, 1, tzinfo=UTC))
    bare.last_activity_at.FromDatetime(datetime(2026, 1, 2, tzinfo=UTC))
    originals = [full_drawer(), bare]
    result = parse_lines(drawer_to_line(d) for d in originals)
    assert result.ok, f"expected no errors, got {result.errors}"
    for got, want in zip(result.drawers, originals, strict=True):
        assert got == want, f"round trip changed the drawer:\nwant {want}\ngot  {got}"
    assert result.drawers[0].HasField("confidence")
    assert not result.drawers[1].HasField("confidence")
    assert not result.drawers[1].HasField("signature")


def test_chunks_hold_whole_lines_and_split_back_into_the_same_lines() -> None:
    drawers = [full_drawer(f"d-{n}") for n in range(20)]
    chunks = list(drawers_to_chunks(drawers, chunk_bytes=1000))
    assert len(chunks) > 1
    assert all(chunk.endswith(b"\n") for chunk in chunks), "every chunk ends on a line"
    # Re-chunk at odd sizes: lines must come back whole regardless of where chunks break.
    stream = b"".join(chunks)
    pieces = [stream[i : i + 37] for i in range(0, len(stream), 37)]
    result = parse_lines(split_lines(pieces))
    assert result.ok and [d.id for d in result.drawers] == [d.id for d in drawers]


def test_split_lines_keeps_a_last_line_without_newline() -> None:
    assert list(split_lines([b"a\nb", b"c"])) == [b"a", b"bc"]


# ---------------------------------------------------------------- import normalisation


def test_normalisation_fills_what_proto3_cannot_mark_as_unset() -> None:
    (drawer,) = parse_lines([minimal_line()]).drawers
    assert drawer.salience == 0.0, "salience left out stays 0: the writer applies its default"
    assert drawer.pin_status == common_pb2.PIN_STATUS_ACTIVE
    assert drawer.last_activity_at == drawer.created_at


def test_read_only_fields_in_an_import_are_discarded() -> None:
    line = minimal_line(effective_salience=0.3, sessions=[{"session_id": "s"}])
    (drawer,) = parse_lines([line]).drawers
    assert drawer.effective_salience == 0.0
    assert [s.session_id for s in drawer.sessions] == ["s"], "session descriptors are kept"


def test_a_blank_signature_is_cleared() -> None:
    (drawer,) = parse_lines([minimal_line(signature="  ")]).drawers
    assert not drawer.HasField("signature")


def test_blank_lines_are_skipped_but_still_numbered() -> None:
    lines: list[bytes | str] = [
        "",
        "  \n",
        minimal_line(),
        b"",
        minimal_line(id="m-2", content=""),
        minimal_line(id="m-3"),
    ]
    result = parse_lines(lines)
    assert [e.line for e in result.errors] == [5], f"got {result.errors}"
    assert [d.id for d in result.drawers] == ["m-1", "m-3"]
    assert result.line_numbers == [3, 6], "each drawer keeps the number of its line"


def test_content_over_the_writers_limit_is_an_error() -> None:
    result = parse_lines([minimal_line(content="x" * 11)], max_content_chars=10)
    assert "content is 11 characters; a drawer holds at most 10" in only_error(result)
    assert parse_lines([minimal_line(content="x" * 10)], max_content_chars=10).ok


def test_an_imported_drawer_carries_no_more_source_excerpt_than_a_written_one() -> None:
    arc = {"raw_chunk_id": "r-1", "session_id": "s-1", "excerpt": "x" * 2_001}
    result = parse_lines([minimal_line(derived_from=[arc])])
    assert "derived_from[0].excerpt is 2001 characters" in only_error(result)
    fits = {**arc, "excerpt": "x" * 2_000}
    assert parse_lines([minimal_line(derived_from=[fits])]).ok


# ---------------------------------------------------------------- import validation


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"id": ""}, "id is empty"),
        ({"id": "has space"}, "must be 1-128 characters"),
        ({"id": "x" * 129}, "must be 1-128 characters"),
        ({"content": "   "}, "content is empty"),
        ({"memory_type": ""}, "memory_type is empty"),
        ({"salience": 0.05}, "salience 0.05 is outside"),
        ({"salience": 1.5}, "salience 1.5 is outside"),
        ({"salience": "NaN"}, "salience nan is outside"),
        ({"confidence": 1.2}, "confidence 1.2 is outside"),
        ({"confidence": -0.1}, "confidence -0.1 is outside"),
        ({"pin_status": 9}, "pin_status 9 is not a known"),
        ({"pin_status": "PINNED"}, "Invalid enum value PINNED"),
        ({"created_at": None}, "created_at is missing"),
        ({"created_at": "yesterday"}, "Failed to parse created_at"),
        ({"derived_from": [{"raw_chunk_id": "r"}]}, "derived_from[0] needs both"),
        ({"colour": "red"}, 'no field named "colour"'),
        ({"retrieval_count": -1}, "retrieval_count"),
    ],
)
def test_each_rule_names_its_problem(fields: dict[str, object], expected: str) -> None:
    message = only_error(parse_lines([minimal_line(**fields)]))
    assert expected in message, f"expected {expected!r} in {message!r}"


def test_every_problem_of_a_line_is_reported_together() -> None:
    message = only_error(parse_lines([minimal_line(id="", content="", memory_type="")]))
    for part in ("id is empty", "content is empty", "memory_type is empty"):
        assert part in message, f"expected {part!r} in {message!r}"


def test_field_errors_stop_at_the_first_line_of_the_library_message() -> None:
    message = only_error(parse_lines([minimal_line(colour="red")]))
    assert "\n" not in message and "Available Fields" not in message


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"\xff\xfe{}", "not valid UTF-8"),
        ('{"id": "\ud800"}', "not valid UTF-8"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "one JSON object; got list"),
        ('{"id": "a", "id": "b"}', 'duplicate key "id"'),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ],
)
def test_malformed_lines_are_errors_not_crashes(line: bytes | str, expected: str) -> None:
    message = only_error(parse_lines([line]))
    assert expected in message, f"expected {expected!r} in {message!r}"


def test_an_oversized_line_is_an_error() -> None:
    line = minimal_line(content="x" * MAX_LINE_BYTES)
    message = only_error(parse_lines([line.encode()]))
    assert "the limit is 1,048,576" in message, f"got {message!r}"


def test_duplicate_ids_name_the_first_line() -> None:
    result = parse_lines([minimal_line(), minimal_line(), minimal_line(id="m-2")])
    assert [d.id for d in result.drawers] == ["m-1", "m-2"]
    assert only_error(result) == "duplicate id 'm-1' (first on line 1)"
    assert result.errors[0].line == 2


def test_all_bad_lines_are_collected_not_just_the_first() -> None:
    lines = [minimal_line(id=f"ok-{n}") if n % 2 else "{bad" for n in range(10)]
    result = parse_lines(lines)
    assert [e.line for e in result.errors] == [1, 3, 5, 7, 9]
    assert not result.ok and len(result.drawers) == 5


def test_errors_past_the_limit_are_counted_not_listed() -> None:
    result = parse_lines(["{bad"] * 7, max_errors=3)
    assert len(result.errors) == 3
    assert result.errors_not_listed == 4
    assert result.error_count == 7
