"""Chat exports: ChatGPT's and Claude.ai's conversations.json, one session per conversation."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from services.corpus.core import ChunkDraft, ChunkReport, FileKind, chunk_file, detect_type
from services.corpus.core.chunk_export import chunk_export, sniff_export
from services.runtime.errors import InvalidInput

FIXTURES = Path(__file__).parent / "fixtures"


def _chunks(body: bytes, name: str = "conversations.json") -> tuple[list[ChunkDraft], ChunkReport]:
    detected = detect_type(name, body[:8192])
    assert detected.kind is FileKind.CHAT_EXPORT, detected
    result = chunk_file(detected, io.BytesIO(body))
    return list(result.chunks), result.report


def test_chatgpt_export_follows_the_branch_the_user_saw_one_session_per_conversation() -> None:
    body = (FIXTURES / "chatgpt_conversations.json").read_bytes()
    chunks, report = _chunks(body)
    assert [c.content for c in chunks] == [
        # The edited question (the branch to current_node), not the first draft of it; the
        # python call and its output as tool lines; thinking and context left out.
        "User: What hydration should I use for my first sourdough loaf with bread flour?\n"
        "[tool: python — print(500 * 0.7)]\n"
        "[tool output: 1 line]\n"
        "Assistant: Start at 70% hydration: 350 g water for 500 g bread flour.",
        "User: I'll go with 70% then and bake on Saturday.\n"
        "Assistant: Good plan. Autolyse for 30 minutes before adding the starter.",
        "User: [image]\nWill this shelf hold 40 kg?\n"
        "Assistant: Yes, if both brackets go into studs.",
    ]
    assert [c.session_key for c in chunks] == [
        "6631a1b0-0000-4000-8000-000000000001",
        "6631a1b0-0000-4000-8000-000000000001",
        "6631a1b0-0000-4000-8000-000000000002",
    ]
    assert [c.ordinal for c in chunks] == [0, 1, 2]
    assert all(c.origin_kind == "chatgpt" for c in chunks)
    assert chunks[0].occurred_at == datetime.fromtimestamp(1714550420.0, UTC)
    # A message without a time takes its conversation's.
    assert chunks[2].occurred_at == datetime.fromtimestamp(1717200000.5, UTC)
    assert chunks[0].attributes["conversation_title"] == "Sourdough hydration"
    assert chunks[2].attributes["conversation_title"] == "Kitchen shelf — café plan"
    assert report.skipped_thinking_blocks == 1
    assert report.skipped_meta_lines == 2  # the hidden system message, the custom context
    assert report.tool_events == 2


def test_an_export_chunk_cites_its_conversation_by_bytes_and_lines() -> None:
    body = (FIXTURES / "chatgpt_conversations.json").read_bytes()
    chunks, _ = _chunks(body)
    first = json.loads(body[chunks[0].byte_start : chunks[0].byte_end])
    second = json.loads(body[chunks[2].byte_start : chunks[2].byte_end])
    assert first["title"] == "Sourdough hydration"
    assert second["title"] == "Kitchen shelf — café plan"  # multi-byte text before it counts
    lines = body.decode().splitlines()
    assert lines[chunks[2].line_start - 1].strip() == "{"
    assert lines[chunks[2].line_end - 1].strip() == "}"


def test_claude_export_with_tools_thinking_and_attachments() -> None:
    body = (FIXTURES / "claude_conversations.json").read_bytes()
    chunks, report = _chunks(body)
    assert [c.content for c in chunks] == [
        "User: Should we call it ledger or payments-core?\n"
        'Assistant: "ledger" says what it keeps; payments-core says who owns it.\n'
        "[tool: web_search — ledger service naming]\n"
        "[tool output: 2 lines]",
        "User: Let's go with ledger.\n[attachment: services.txt]\nAssistant: Ledger it is.",
    ]
    assert {c.session_key for c in chunks} == {"a9b8c7d6-0000-4000-8000-000000000001"}
    assert all(c.origin_kind == "claude_ai" for c in chunks)
    assert chunks[1].occurred_at == datetime(2025, 3, 3, 9, 5, tzinfo=UTC)
    assert chunks[0].attributes["conversation_title"] == "Renaming the billing service"
    assert report.skipped_thinking_blocks == 1


def test_a_json_file_that_is_not_an_export_stays_text() -> None:
    assert detect_type("data.json", b'[{"name": "a", "value": 1}]').kind is FileKind.TEXT
    assert detect_type("data.json", b'{"mapping": {}}').kind is FileKind.TEXT
    assert sniff_export(b'\xef\xbb\xbf [ {"mapping": {}, "current_node": null}]') == "chatgpt"


def _export(conversations: list[object]) -> bytes:
    return json.dumps(conversations).encode()


CHATGPT_HEAD = {"title": "ok", "create_time": 1.0, "current_node": None, "mapping": {}}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (
            b'[{"title": "ok", "create_time": 1, "mapping": {}, "current_node": null},\n'
            b' {"title": "cut", "create_time": 2, "mapping": {"a": ',
            "conversations.json: not valid JSON",
        ),
        (
            _export([CHATGPT_HEAD, {"title": "Broken", "create_time": 2, "mapping": []}]),
            "conversation 2 'Broken' (line 1): has no 'mapping' object",
        ),
        (
            _export([CHATGPT_HEAD, "just a string"]),
            "conversation 2 (line 1): is not an object",
        ),
        (
            _export(
                [
                    CHATGPT_HEAD,
                    {
                        "title": "Loop",
                        "mapping": {
                            "a": {"id": "a", "parent": "b", "message": None},
                            "b": {"id": "b", "parent": "a", "message": None},
                        },
                        "current_node": "a",
                    },
                ]
            ),
            "conversation 2 'Loop' (line 1): its message tree loops",
        ),
        (
            b'[{"title": "ok", "create_time": 1, "mapping": {}, "current_node": null}] extra',
            "text after the end of the array",
        ),
    ],
)
def test_a_malformed_export_names_the_conversation_and_line(body: bytes, message: str) -> None:
    with pytest.raises(InvalidInput) as raised:
        list(chunk_export(io.BytesIO(body), export="chatgpt", name="conversations.json",
                          report=ChunkReport()))  # fmt: skip
    assert message in raised.value.message


def test_a_hostile_nesting_is_refused_not_crashed_on() -> None:
    deep = b"[" * 200_000 + b"]" * 200_000
    body = b'[{"title": "t", "create_time": 1, "current_node": null, "mapping": {}, "x": '
    with pytest.raises(
        InvalidInput, match=r"nested too deeply to read at line 1 \(conversation 1\)"
    ):
        list(chunk_export(io.BytesIO(body + deep + b"}]"), export="chatgpt", name="c.json",
                          report=ChunkReport()))  # fmt: skip


def test_the_line_of_a_syntax_error_is_the_line_in_the_file() -> None:
    body = b'[\n{"title": "a", "mapping": {}, "create_time": 1},\n{"title": "b",,}\n]'
    with pytest.raises(InvalidInput) as raised:
        list(chunk_export(io.BytesIO(body), export="chatgpt", name="c.json", report=ChunkReport()))
    assert "at line 3 (conversation 2)" in raised.value.message


def test_a_claude_message_without_a_sender_is_refused() -> None:
    body = _export([{"uuid": "u", "name": "N", "chat_messages": [{"text": "hi"}]}])
    with pytest.raises(InvalidInput, match="message 1 has no sender"):
        list(
            chunk_export(io.BytesIO(body), export="claude_ai", name="c.json", report=ChunkReport())
        )


def test_large_exports_are_read_in_pieces_with_exact_places() -> None:
    conversations = [
        {
            "uuid": f"conv-{n}",
            "name": f"Conversation {n} ✓",
            "created_at": "2025-01-01T00:00:00Z",
            "chat_messages": [
                {"sender": "human", "text": f"question {n} " + "é" * 3000},
                {"sender": "assistant", "text": f"answer {n}"},
            ],
        }
        for n in range(60)
    ]
    body = json.dumps(conversations, ensure_ascii=False).encode()
    assert len(body) > 5 * 64 * 1024  # more than one read
    chunks = list(chunk_export(io.BytesIO(body), export="claude_ai", name="c.json",
                               report=ChunkReport(), max_chunk_chars=100_000))  # fmt: skip
    assert len(chunks) == 60
    for n, chunk in enumerate(chunks):
        assert chunk.session_key == f"conv-{n}"
        assert json.loads(body[chunk.byte_start : chunk.byte_end])["uuid"] == f"conv-{n}"


def test_invalid_utf8_is_replaced_and_counted_without_moving_the_places() -> None:
    body = (
        b'[{"uuid": "a", "name": "x", "chat_messages": [{"sender": "human", "text": "caf\xe9"}]},'
        b' {"uuid": "b", "name": "y", "chat_messages": [{"sender": "human", "text": "ok"}]}]'
    )
    report = ChunkReport()
    chunks = list(chunk_export(io.BytesIO(body), export="claude_ai", name="c.json", report=report))
    assert chunks[0].content == "User: caf\ufffd"
    assert report.invalid_utf8_replacements == 1
    assert json.loads(body[chunks[1].byte_start : chunks[1].byte_end])["uuid"] == "b"
