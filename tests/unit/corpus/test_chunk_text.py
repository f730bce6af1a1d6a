"""Plain text: paragraphs in a sliding window, byte ranges that slice back to the content."""

from __future__ import annotations

import io
from itertools import pairwise

from services.corpus.core import ChunkDraft, ChunkReport, chunk_text, read_lines


def _chunks(body: bytes, *, window: int, overlap: int) -> list[ChunkDraft]:
    lines = read_lines(io.BytesIO(body), report=ChunkReport())
    return list(chunk_text(lines, window_chars=window, overlap_chars=overlap))


def _paragraph(index: int) -> str:
    return f"Paragraph {index} talks about topic {index}. It has two sentences, this is one."


def test_every_chunk_slices_back_to_its_bytes_and_lines() -> None:
    body = "\n\n".join(_paragraph(i) for i in range(30)).encode()
    chunks = _chunks(body, window=300, overlap=60)
    assert len(chunks) > 5
    for chunk in chunks:
        assert body[chunk.byte_start : chunk.byte_end].decode() == chunk.content
        assert len(chunk.content) <= 300
        assert chunk.line_start == 1 + body.count(b"\n", 0, chunk.byte_start)
        assert chunk.line_end == 1 + body.count(b"\n", 0, chunk.byte_end - 1)
        assert chunk.origin_kind == "text"
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))


def test_windows_overlap_and_cover_the_whole_body() -> None:
    body = "\n\n".join(_paragraph(i) for i in range(30)).encode()
    chunks = _chunks(body, window=300, overlap=100)
    for before, after in pairwise(chunks):
        assert after.byte_start < before.byte_end, "consecutive windows should overlap"
        assert after.byte_end > before.byte_end, "every window brings something new"
    assert chunks[0].byte_start == 0
    assert chunks[-1].byte_end == len(body)


def test_no_overlap_means_adjacent_windows() -> None:
    body = "\n\n".join(_paragraph(i) for i in range(12)).encode()
    chunks = _chunks(body, window=250, overlap=0)
    for before, after in pairwise(chunks):
        assert after.byte_start >= before.byte_end


def test_a_paragraph_longer_than_the_window_is_cut_at_sentences() -> None:
    sentence = "This sentence is exactly as long as it needs to be. "
    body = (sentence * 40).encode()
    chunks = _chunks(body, window=200, overlap=0)
    assert len(chunks) >= 10
    assert all(len(c.content) <= 200 for c in chunks)
    assert all(c.content.endswith(".") for c in chunks)


def test_invalid_utf8_is_replaced_counted_and_ranges_still_slice_back() -> None:
    body = b"Caf\xe9 au lait costs \x80\x80 two euros.\n\nSecond \xf0\x9f paragraph \xe2\x82\xac.\n"
    report = ChunkReport()
    lines = read_lines(io.BytesIO(body), report=report)
    chunks = list(chunk_text(lines, window_chars=30, overlap_chars=0))
    assert report.invalid_utf8_replacements == 4
    joined = "".join(c.content for c in chunks)
    assert "\ufffd" in joined
    for chunk in chunks:
        assert body[chunk.byte_start : chunk.byte_end].decode("utf-8", "replace") == chunk.content


def test_whitespace_only_and_empty_bodies_make_no_chunks() -> None:
    assert _chunks(b"", window=100, overlap=10) == []
    assert _chunks(b"\n \n\t\n", window=100, overlap=10) == []
