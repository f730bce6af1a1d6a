"""Markdown by heading: heading paths, fences, long sections, streaming."""

from __future__ import annotations

import io
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

from services.corpus.core import ChunkDraft, ChunkReport, chunk_markdown, read_lines
from services.corpus.core.chunk_markdown import FenceTracker, parse_atx_heading

GUIDE = (Path(__file__).parent / "fixtures" / "guide.md").read_bytes()


def _chunks(body: bytes, max_chunk_chars: int = 2000) -> list[ChunkDraft]:
    lines = read_lines(io.BytesIO(body), report=ChunkReport())
    return list(chunk_markdown(lines, max_chunk_chars=max_chunk_chars))


def test_each_section_carries_its_heading_path() -> None:
    chunks = _chunks(GUIDE)
    assert [c.heading_path for c in chunks] == [
        ("Deployment guide", "Install"),
        ("Deployment guide", "Install", "Linux"),
        ("Deployment guide", "Install", "macOS"),
        ("Deployment guide", "Configure"),
        ("Operations", "Backups"),
    ]
    assert all(c.origin_kind == "markdown" for c in chunks)


def test_a_bare_title_leads_its_first_child_instead_of_standing_alone() -> None:
    first = _chunks(GUIDE)[0]
    assert first.content.startswith("# Deployment guide\n\n## Install\n")
    assert first.line_start == 1


def test_hashes_inside_fenced_code_are_not_headings() -> None:
    chunks = _chunks(GUIDE)
    install = chunks[0].content
    configure = chunks[3].content
    assert "# this comment is code, not a heading" in install
    assert "# also not a heading" in configure
    assert "Settings are read once at start-up." in configure


def test_byte_and_line_ranges_slice_back_to_the_content() -> None:
    lines = GUIDE.decode().split("\n")
    for chunk in _chunks(GUIDE):
        assert GUIDE[chunk.byte_start : chunk.byte_end].decode() == chunk.content
        assert lines[chunk.line_start - 1] == chunk.content.split("\n")[0]
        assert lines[chunk.line_end - 1] == chunk.content.split("\n")[-1]


def test_a_long_section_is_split_and_every_part_keeps_the_path() -> None:
    body = ("# Big\n\n" + "\n\n".join(f"Paragraph {i} " + "word " * 40 for i in range(20))).encode()
    chunks = _chunks(body, max_chunk_chars=500)
    assert len(chunks) > 3
    assert all(c.heading_path == ("Big",) for c in chunks)
    assert all(len(c.content) <= 500 for c in chunks)
    assert "continued" not in chunks[0].attributes
    assert all(c.attributes["continued"] == "true" for c in chunks[1:])
    for chunk in chunks:
        assert body[chunk.byte_start : chunk.byte_end].decode() == chunk.content


def test_text_before_the_first_heading_has_an_empty_path() -> None:
    chunks = _chunks(b"Preamble line.\n\n# Title\n\nBody.\n")
    assert [(c.heading_path, c.content) for c in chunks] == [
        ((), "Preamble line."),
        (("Title",), "# Title\n\nBody."),
    ]


def test_siblings_reset_the_path_and_closing_hashes_are_dropped() -> None:
    body = b"# A\ntext a\n## B ##\ntext b\n## C\ntext c\n# D\ntext d\n"
    assert [c.heading_path for c in _chunks(body)] == [("A",), ("A", "B"), ("A", "C"), ("D",)]


def test_atx_heading_parsing() -> None:
    assert parse_atx_heading("## Install  ##\n") == (2, "Install")
    assert parse_atx_heading("   # Indented up to three") == (1, "Indented up to three")
    assert parse_atx_heading("    # four spaces is code") is None
    assert parse_atx_heading("#hashtag") is None
    assert parse_atx_heading("#") is None
    assert parse_atx_heading("####### seven") is None


def test_fence_tracking_needs_a_matching_closing_fence() -> None:
    fences = FenceTracker()
    flags = [fences.feed(line) for line in ["````", "```", "# x", "````", "# y"]]
    assert flags == [True, True, True, True, False]


def _generated_markdown(sections: int) -> Iterator[bytes]:
    """About 2 MB of markdown, produced a section at a time."""
    paragraph = ("Streaming keeps memory flat while the body goes past. " * 6 + "\n\n").encode()
    for index in range(sections):
        yield f"# Part {index}\n\n## Detail {index}\n\n".encode() + paragraph * 6


def test_two_megabytes_stream_through_without_the_body_in_memory() -> None:
    sections = 1020  # ~2.0 MB in all
    tracemalloc.start()
    try:
        count = 0
        size = 0
        lines = read_lines(_generated_markdown(sections), report=ChunkReport())
        for chunk in chunk_markdown(lines, max_chunk_chars=2000):
            count += 1
            size = max(size, chunk.byte_end)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size > 2_000_000
    assert count >= sections
    assert peak < 1_000_000, f"peak {peak:,} bytes: the body seems to be held whole"
