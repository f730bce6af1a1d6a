"""Reading bodies as lines with exact offsets, and cutting runs where decoding stays the same."""

from __future__ import annotations

import io
import random

import pytest

from services.corpus.core import ChunkReport, read_lines
from services.corpus.core._source import Verbatim, split_verbatim, tail_of

# Valid characters of 1 to 4 bytes, invalid sequences, a genuine U+FFFD, breaks and spaces.
_PIECES = [
    b"a", b" ", b"\n", b". ", b"\xc3\xa9", b"\xe2\x82\xac", b"\xf0\x9f\x98\x80",
    b"\xff", b"\x80", b"\xe2\x82", b"\xf0\x9f", b"\xef\xbf\xbd", b"\xe0\x80", b"\r\n",
]  # fmt: skip


def _random_bodies(count: int, seed: int = 7) -> list[bytes]:
    rng = random.Random(seed)
    return [b"".join(rng.choice(_PIECES) for _ in range(rng.randint(0, 300))) for _ in range(count)]


def _decoded(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def test_lines_slice_back_to_their_bytes_and_count_replacements() -> None:
    body = b"caf\xc3\xa9\r\nbad \xff\xfe byte\n\xef\xbf\xbd genuine\nlast"
    report = ChunkReport()
    lines = list(read_lines(io.BytesIO(body), report=report))
    assert [line.number for line in lines] == [1, 2, 3, 4]
    assert [body[line.byte_start : line.byte_end] for line in lines] == [line.raw for line in lines]
    assert lines[0].content == "café"
    assert lines[1].text == "bad \ufffd\ufffd byte\n"
    assert report.invalid_utf8_replacements == 2  # the genuine U+FFFD is not counted
    assert report.lines == 4


def test_a_byte_order_mark_is_skipped_and_offsets_stay_exact() -> None:
    body = b"\xef\xbb\xbf# Title\nbody\n"
    lines = list(read_lines([body], report=ChunkReport()))
    assert lines[0].text == "# Title\n"
    assert lines[0].byte_start == 3
    assert body[lines[0].byte_start : lines[0].byte_end] == b"# Title\n"


def test_block_iterables_need_not_be_aligned_to_lines() -> None:
    body = "première ligne\nsecond € line\nthird".encode()
    blocks = [body[i : i + 3] for i in range(0, len(body), 3)]  # cuts inside characters
    lines = list(read_lines(iter(blocks), report=ChunkReport()))
    assert [line.content for line in lines] == ["première ligne", "second € line", "third"]


def test_a_line_longer_than_the_limit_comes_in_segments_cut_between_characters() -> None:
    body = ("€" * 3000).encode() + b"\nnext\n"  # 9,000 bytes on line 1
    report = ChunkReport()
    lines = list(read_lines(io.BytesIO(body), report=report, max_line_bytes=1024))
    first = [line for line in lines if line.number == 1]
    assert len(first) > 1
    assert all(line.continues for line in first[:-1]) and not first[-1].continues
    assert [line.starts_line for line in first] == [True] + [False] * (len(first) - 1)
    assert "".join(line.text for line in first) == "€" * 3000 + "\n"
    assert report.invalid_utf8_replacements == 0
    assert report.lines == 2


@pytest.mark.parametrize("max_chars", [16, 23, 64])
def test_split_parts_decode_like_the_whole_and_fit(max_chars: int) -> None:
    for body in _random_bodies(150):
        run = Verbatim.of(body, 100, 1)
        parts = split_verbatim(run, max_chars)
        assert b"".join(part.raw for part in parts) == body
        assert "".join(part.text for part in parts) == run.text
        for part in parts:
            assert len(part.text) <= max_chars
            assert part.text == _decoded(body[part.byte_start - 100 : part.byte_end - 100])
            assert part.line_start == 1 + body.count(b"\n", 0, part.byte_start - 100)


def test_tails_fit_and_decode_like_the_whole() -> None:
    for body in _random_bodies(150, seed=11):
        run = Verbatim.of(body, 0, 1)
        tail = tail_of(run, 20)
        if tail is not None:
            assert len(tail.text) <= 20
            assert tail.byte_end == len(body)
            assert tail.text == _decoded(body[tail.byte_start :])


def test_splits_prefer_sentence_and_word_breaks() -> None:
    text = "First sentence here. Second sentence follows it. Third one ends the paragraph."
    parts = split_verbatim(Verbatim.of(text.encode(), 0, 1), 50)
    assert [part.text for part in parts] == [
        "First sentence here. Second sentence follows it. ",
        "Third one ends the paragraph.",
    ]
    words = split_verbatim(Verbatim.of(b"alpha beta gamma delta epsilon zeta eta", 0, 1), 16)
    assert all(part.text.endswith(" ") for part in words[:-1])
