"""chunk_file: the right chunker by type, lazy, with report, synopsis and session hint."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from services.corpus.core import (
    ChunkOptions,
    ChunkResult,
    FileKind,
    chunk_file,
    chunk_synopsis,
    detect_type,
    synopsis_of,
)
from services.runtime.errors import InvalidInput

from ._pdf import encrypted, text_pdf

FIXTURES = Path(__file__).parent / "fixtures"


def _result_of(name: str, body: bytes, options: ChunkOptions | None = None) -> ChunkResult:
    return chunk_file(detect_type(name, body[:8192]), io.BytesIO(body), options=options)


@pytest.mark.parametrize(
    ("name", "origin", "version"),
    [
        ("guide.md", "markdown", "markdown/1"),
        ("claude_code_session.jsonl", "claude_code", "dialog/1"),
        ("codex_rollout.jsonl", "codex", "dialog/1"),
        ("chat_log.jsonl", "dialog", "dialog/1"),
    ],
)
def test_fixtures_dispatch_to_their_chunker(name: str, origin: str, version: str) -> None:
    result = _result_of(name, (FIXTURES / name).read_bytes())
    chunks = list(result.chunks)
    assert (result.origin_kind, result.version) == (origin, version)
    assert chunks and all(c.origin_kind == origin for c in chunks)
    assert result.report.chunks == len(chunks)


def test_text_and_pdf_dispatch() -> None:
    text = _result_of("notes.txt", b"one paragraph.\n\nanother one.\n")
    assert (text.origin_kind, text.version) == ("text", "text/1")
    assert [c.content for c in text.chunks] == ["one paragraph.\n\nanother one."]
    pdf = _result_of("doc.pdf", text_pdf(["page one", "page two"]))
    assert (pdf.origin_kind, pdf.version) == ("pdf", "pdf/1")
    assert [c.page for c in pdf.chunks] == [1, 2]


def test_binary_files_are_refused_with_the_detected_type() -> None:
    with pytest.raises(InvalidInput, match="looks like a gzip file"):
        _result_of("notes.md", b"\x1f\x8b\x08\x00" + b"\x00" * 20)


def test_an_encrypted_pdf_fails_at_dispatch_so_the_job_can_go_on() -> None:
    with pytest.raises(InvalidInput, match="is encrypted"):
        _result_of("locked.pdf", encrypted(text_pdf(["x"]), user_password="pw"))


def test_the_session_hint_is_the_transcripts_own_id() -> None:
    result = _result_of("s.jsonl", (FIXTURES / "claude_code_session.jsonl").read_bytes())
    assert result.session_hint == "7f3e2a10-9c4b-4d8e-b1a2-3c4d5e6f7a8b"
    assert _result_of("n.md", b"# x\n").session_hint is None


def test_the_synopsis_comes_from_the_same_pass_after_the_chunks() -> None:
    result = _result_of("guide.md", (FIXTURES / "guide.md").read_bytes())
    with pytest.raises(RuntimeError):
        result.synopsis()
    list(result.chunks)
    synopsis = result.synopsis()
    assert synopsis.startswith("# Deployment guide\n")
    outline = "- Deployment guide\n  - Install\n  - Configure\n- Operations\n  - Backups"
    assert synopsis.endswith("\n\n## Outline\n" + outline)


def test_invalid_utf8_is_reported_by_the_file() -> None:
    result = _result_of("bad.txt", b"caf\xe9 \xff\xfe ok\n")
    list(result.chunks)
    assert result.report.as_dict()["invalid_utf8_replacements"] == 3


def test_synopsis_of_reads_only_the_head_when_there_is_nothing_to_outline() -> None:
    body = b"x" * 20_000 + b"\n" + b"y" * 1_000_000
    read: list[int] = []

    class CountingReader(io.BytesIO):
        def read(self, size: int | None = -1, /) -> bytes:
            data = super().read(size)
            read.append(len(data))
            return data

    synopsis = synopsis_of(detect_type("big.txt", body[:8192]), CountingReader(body))
    assert synopsis == "x" * 8192
    assert sum(read) < 100_000, "the rest of the body should not be read"
    markdown = b"# A\n" + b"text\n" * 5000 + b"## B\n"
    assert synopsis_of(detect_type("big.md", markdown), io.BytesIO(markdown)).endswith(
        "## Outline\n- A\n  - B"
    )


def test_synopsis_of_a_pdf_is_made_of_its_text() -> None:
    synopsis = synopsis_of(detect_type("d.pdf", b"%PDF-"), io.BytesIO(text_pdf(["Hello", "World"])))
    assert synopsis == "Hello\nWorld\n"


def test_synopsis_chunks_say_where_they_come_from() -> None:
    result = chunk_synopsis(
        "# Big file\n\nIts first 8 KiB.\n\n## Outline\n- Big file", origin_kind="markdown"
    )
    chunks = list(result.chunks)
    assert result.version == "synopsis/1"
    assert [c.heading_path for c in chunks] == [("Big file",), ("Big file", "Outline")]
    assert all(c.attributes["source"] == "synopsis" for c in chunks)


def test_options_are_validated() -> None:
    with pytest.raises(ValueError, match="overlap_chars"):
        ChunkOptions(window_chars=100, overlap_chars=100)
    with pytest.raises(ValueError, match="tool_events"):
        ChunkOptions(tool_events="drop")  # type: ignore[arg-type]
    assert ChunkOptions().max_chunk_chars == 2000


def test_detected_kind_is_the_catalog_string() -> None:
    assert detect_type("a.md", b"").kind == "markdown"
    assert FileKind("pdf") is FileKind.PDF
