"""JSONL: dialog transcripts bundled into arcs, plain records verbatim, bad lines counted."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from services.corpus.core import (
    ChunkDraft,
    ChunkReport,
    DialogFormat,
    chunk_jsonl_file,
    read_lines,
)

FIXTURES = Path(__file__).parent / "fixtures"


def _run(
    body: bytes, *, tool_events: str = "summarise", max_chunk_chars: int = 2000
) -> tuple[str, str | None, list[ChunkDraft], ChunkReport]:
    report = ChunkReport()
    lines = read_lines(io.BytesIO(body), report=report)
    shape, chunks = chunk_jsonl_file(
        lines,
        report=report,
        max_chunk_chars=max_chunk_chars,
        tool_events=tool_events,  # type: ignore[arg-type]
    )
    return shape.origin_kind, shape.session_id, list(chunks), report


def _records(body: bytes, chunk: ChunkDraft) -> list[dict[str, object]]:
    """The JSONL records a chunk's byte range points at."""
    return [json.loads(line) for line in body[chunk.byte_start : chunk.byte_end].splitlines()]


def test_claude_code_transcript_becomes_two_arcs_with_tools_summarised() -> None:
    body = (FIXTURES / "claude_code_session.jsonl").read_bytes()
    origin, session, chunks, report = _run(body)
    assert origin == "claude_code"
    assert session == "7f3e2a10-9c4b-4d8e-b1a2-3c4d5e6f7a8b"
    assert [c.content for c in chunks] == [
        "User: Why does tests/test_login.py fail only on CI?\n"
        "Assistant: Let me run the test to see the failure.\n"
        "[tool: Bash — pytest tests/test_login.py -q]\n"
        "[tool output: 4 lines]\n"
        "Assistant: The redirect test builds its expiry with the local clock; CI runs in UTC. "
        "Run it with `TZ=UTC` to reproduce.",
        "User: Fix it please.\n"
        "[tool: Edit — /home/dev/shop/tests/test_login.py]\n"
        "[tool output: 1 line]\n"
        "Assistant: Pinned the clock to UTC in the fixture; the test now passes under any TZ.",
    ]
    assert all(c.origin_kind == "claude_code" for c in chunks)
    assert chunks[0].occurred_at == datetime(2025, 7, 14, 9, 12, 3, 123000, tzinfo=UTC)
    assert chunks[0].attributes["ended_at"] == "2025-07-14T09:12:12.300000+00:00"
    assert (chunks[0].line_start, chunks[0].line_end) == (4, 9)
    assert (chunks[1].line_start, chunks[1].line_end) == (10, 13)
    assert report.skipped_thinking_blocks == 1
    assert report.tool_events == 4
    # summary, isMeta caveat, /clear echo, system hook, file-history-snapshot
    assert report.skipped_meta_lines == 5
    assert report.arcs == 2


def test_an_arcs_byte_range_points_at_the_records_it_came_from() -> None:
    body = (FIXTURES / "claude_code_session.jsonl").read_bytes()
    _, _, chunks, _ = _run(body)
    records = _records(body, chunks[1])
    assert records[0]["message"] == {
        "role": "user",
        "content": [{"type": "text", "text": "Fix it please."}],
    }
    assert records[-1]["uuid"] == "b0c1d2e3-0001-4000-8000-00000000000c"


def test_tool_events_can_be_skipped_and_are_still_counted() -> None:
    body = (FIXTURES / "claude_code_session.jsonl").read_bytes()
    _, _, chunks, report = _run(body, tool_events="skip")
    assert chunks[0].content == (
        "User: Why does tests/test_login.py fail only on CI?\n"
        "Assistant: Let me run the test to see the failure.\n"
        "The redirect test builds its expiry with the local clock; CI runs in UTC. "
        "Run it with `TZ=UTC` to reproduce."
    )
    assert report.skipped_tool_events == 4
    assert report.tool_events == 0


def test_codex_rollout_uses_response_items_and_skips_event_copies() -> None:
    body = (FIXTURES / "codex_rollout.jsonl").read_bytes()
    origin, session, chunks, report = _run(body)
    assert origin == "codex"
    assert session == "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
    assert [c.content for c in chunks] == [
        "User: Add a --verbose flag to the CLI\n"
        '[tool: shell — rg -n "add_argument" src]\n'
        "[tool output: 2 lines]\n"
        "Assistant: Added `--verbose` next to `--quiet` in src/main.py; "
        "it sets the log level to DEBUG.",
        "User: Run the tests\n"
        "[tool: shell — pytest -q]\n"
        "[tool error: 1 failed, 14 passed in 3.91s]\n"
        "Assistant: One test fails: test_verbose_sets_debug expects the flag before the path "
        "argument.",
    ]
    assert "environment_context" not in chunks[0].content
    assert chunks[1].occurred_at == datetime(2025, 9, 2, 10, 0, 20, tzinfo=UTC)
    assert report.skipped_thinking_blocks == 1
    # session_meta, injected environment context, turn_context, three event_msg copies
    assert report.skipped_meta_lines == 6


def test_older_codex_rollouts_without_envelopes() -> None:
    body = (FIXTURES / "codex_rollout_legacy.jsonl").read_bytes()
    origin, session, chunks, report = _run(body)
    assert origin == "codex"
    assert session == "5e7c9a2b-1d3f-4e5a-9b8c-7d6e5f4a3b2c"
    assert [c.content for c in chunks] == [
        "User: What does utils.slugify do?\n"
        "[tool: shell — cat utils.py]\n"
        "[tool output: 2 lines]\n"
        "Assistant: It lowercases the string and replaces each run of non-alphanumerics with a "
        "single '-'."
    ]
    assert report.skipped_meta_lines == 3  # header and two state records


def test_generic_chat_log_with_tool_calls_and_malformed_lines() -> None:
    body = (FIXTURES / "chat_log.jsonl").read_bytes()
    origin, session, chunks, report = _run(body)
    assert origin == "dialog"
    assert session is None
    assert [c.content for c in chunks] == [
        "User: Find me a train from Lyon to Turin on 3 May.\n"
        "Assistant: There is a TGV at 07:32 arriving 11:29, and a regional connection at 09:05.",
        "User: Is there anything after noon?\n"
        '[tool: search_trains — {"from": "Lyon", "to": "Turin", "after": "12:00"}]\n'
        "[tool output: 1 line]\n"
        "Assistant: Yes: 14:10, arriving 18:40.",
    ]
    assert chunks[0].occurred_at is not None
    assert chunks[0].occurred_at.utcoffset() is not None
    assert report.malformed_lines == 2  # never fails the file
    assert report.skipped_meta_lines == 1  # the system prompt


def test_named_speakers_alternate_into_arcs() -> None:
    lines = [
        {"speaker": "Ana", "text": "Did the migration finish?"},
        {"speaker": "Ben", "text": "Yes, at 02:10."},
        {"speaker": "Ben", "text": "No errors."},
        {"speaker": "Ana", "text": "Great, closing the ticket."},
    ]
    body = "\n".join(json.dumps(line) for line in lines).encode()
    origin, _, chunks, _ = _run(body)
    assert origin == "dialog"
    assert [c.content for c in chunks] == [
        "Ana: Did the migration finish?\nBen: Yes, at 02:10.\nNo errors.",
        "Ana: Great, closing the ticket.",
    ]
    assert chunks[0].attributes["participants"] == "Ana, Ben"


def test_a_long_arc_is_cut_in_parts_sharing_its_anchor() -> None:
    lines = [
        {"role": "user", "content": "Explain everything."},
        {"role": "assistant", "content": "Sentence of the long answer. " * 60},
    ]
    body = "\n".join(json.dumps(line) for line in lines).encode()
    _, _, chunks, _ = _run(body, max_chunk_chars=500)
    assert len(chunks) == 4
    assert [c.attributes["arc_part"] for c in chunks] == ["1/4", "2/4", "3/4", "4/4"]
    assert {(c.byte_start, c.byte_end, c.line_start, c.line_end) for c in chunks} == {
        (0, len(body), 1, 2)
    }
    assert all(len(c.content) <= 500 for c in chunks)
    assert [c.ordinal for c in chunks] == [0, 1, 2, 3]


def test_plain_jsonl_groups_short_records_verbatim_and_skips_bad_lines() -> None:
    good = [json.dumps({"id": i, "event": "login", "user": f"u{i}"}) for i in range(12)]
    body = ("\n".join(good[:6]) + "\n{not json\n\n" + "\n".join(good[6:]) + "\n").encode()
    origin, session, chunks, report = _run(body)
    assert (origin, session) == ("jsonl", None)
    assert report.malformed_lines == 1
    for chunk in chunks:
        assert body[chunk.byte_start : chunk.byte_end].decode() == chunk.content
        assert "{not json" not in chunk.content
    kept = [json.loads(line) for c in chunks for line in c.content.splitlines()]
    assert [record["id"] for record in kept] == list(range(12))
    assert len(chunks) < 12  # short records share chunks


def test_a_long_plain_record_is_its_own_chunk_cut_only_past_the_limit() -> None:
    big = json.dumps({"id": 1, "blob": "x" * 3000})
    body = (json.dumps({"id": 0}) + "\n" + big + "\n").encode()
    _, _, chunks, _ = _run(body, max_chunk_chars=1000)
    assert chunks[0].content == json.dumps({"id": 0})
    assert "".join(c.content for c in chunks[1:]) == big
    assert all(c.line_start == c.line_end == 2 for c in chunks[1:])


@pytest.mark.parametrize(
    ("first_line", "dialog"),
    [
        ({"type": "summary", "summary": "s", "leafUuid": "u"}, DialogFormat.CLAUDE_CODE),
        ({"timestamp": "t", "type": "session_meta", "payload": {"id": "x"}}, DialogFormat.CODEX),
        ({"role": "user", "content": "hi"}, DialogFormat.CHAT),
    ],
)
def test_the_first_dialog_record_decides_the_shape(
    first_line: dict[str, object], dialog: DialogFormat
) -> None:
    origin, _, _, _ = _run((json.dumps(first_line) + "\n").encode())
    assert origin == dialog.value


def test_an_oversized_record_is_skipped_and_counted() -> None:
    report = ChunkReport()
    body = (json.dumps({"role": "user", "content": "y" * 5000}) + "\n").encode()
    body += (json.dumps({"role": "user", "content": "short"}) + "\n").encode()
    lines = read_lines(io.BytesIO(body), report=report, max_line_bytes=1024)
    _, chunks = chunk_jsonl_file(lines, report=report)
    assert [c.content for c in chunks] == ["User: short"]
    assert report.oversized_lines == 1


def test_a_line_nested_too_deeply_is_a_malformed_line_not_a_crash() -> None:
    hostile = b"[" * 100_000 + b"]" * 100_000
    body = (
        b'{"role": "user", "content": "hi"}\n'
        + hostile
        + b'\n{"role": "assistant", "content": "hello"}\n'
    )
    _, _, chunks, report = _run(body)
    assert [c.content for c in chunks] == ["User: hi\nAssistant: hello"]
    assert report.malformed_lines == 1
