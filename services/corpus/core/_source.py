"""Reading a body as lines with exact byte offsets, and cutting verbatim runs of it.

Every verbatim chunk keeps the invariant ``text == original[byte_start:byte_end]
.decode("utf-8", errors="replace")``. It holds because every cut this module makes is at a
*consistent* boundary: one where decoding the two sides separately gives the same text as
decoding them together. Line ends are such boundaries (``\\n`` is ASCII and ends any invalid
sequence), and so is any position that is not inside a well-formed multi-byte character
(`_is_boundary`). Character counts come from decoding candidate byte ranges, never from mapping
character indices back to bytes, which is ambiguous once bytes have been replaced.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Final, Protocol, TypeAlias, runtime_checkable

from services.corpus.core.chunks import ChunkReport

READ_BLOCK_BYTES: Final = 64 * 1024
# A "line" longer than this is handed on in segments, so that a body without newlines (a
# minified file, a 40 MB log line) never has to sit in memory whole.
DEFAULT_MAX_LINE_BYTES: Final = 1 << 20
_BOM: Final = b"\xef\xbb\xbf"
_REPLACEMENT_BYTES: Final = "\ufffd".encode()
_WHITESPACE: Final = b" \t\r\n\f\v"

# Preferred places to cut a long run, best first; each is searched for in the second half of
# the allowed range so that no part is less than half full. All are whole characters.
_SEPARATORS: Final[tuple[tuple[bytes, ...], ...]] = (
    (b"\n\n", b"\r\n\r\n"),
    (b"\n",),
    (b". ", b"! ", b"? ", b"; ", "。".encode(), "！".encode(), "？".encode()),
    (b" ", b"\t"),
)
_TEXT_SEPARATORS: Final[tuple[tuple[str, ...], ...]] = tuple(
    tuple(s.decode() for s in group) for group in _SEPARATORS
)


@runtime_checkable
class Readable(Protocol):
    """A binary file-like object: anything with ``read(size) -> bytes``."""

    def read(self, size: int = -1, /) -> bytes: ...


# A body to chunk: a binary file object, or any iterable of byte blocks (lines or not).
ByteSource: TypeAlias = Readable | Iterable[bytes]


def decode(raw: bytes) -> tuple[str, int]:
    """Decode UTF-8 with replacement; return the text and how many replacements were made."""
    try:
        return raw.decode("utf-8"), 0
    except UnicodeDecodeError:
        text = raw.decode("utf-8", errors="replace")
        # A genuine U+FFFD in the source is not a replacement.
        return text, text.count("\ufffd") - raw.count(_REPLACEMENT_BYTES)


def _decoded(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _sequence_length(lead: int) -> int:
    """Bytes in a well-formed character starting with `lead`; 1 for ASCII and invalid leads."""
    if 0xC2 <= lead <= 0xDF:
        return 2
    if 0xE0 <= lead <= 0xEF:
        return 3
    if 0xF0 <= lead <= 0xF4:
        return 4
    return 1


def _is_boundary(raw: bytes | bytearray, at: int) -> bool:
    """Whether cutting at `at` decodes both sides consistently.

    Only a position inside a (possibly truncated) multi-byte sequence is not a boundary. Stray
    continuation bytes are each their own replaced character, so cuts between them are fine.
    Erring towards "not a boundary" only loses a cut point, never the invariant.
    """
    if at <= 0 or at >= len(raw) or not _is_continuation(raw[at]):
        return True
    for back in range(1, 4):
        if at - back < 0:
            return True
        byte = raw[at - back]
        if not _is_continuation(byte):
            return back >= _sequence_length(byte)
    return True


def _boundary_before(raw: bytes | bytearray, at: int, floor: int) -> int | None:
    """The last boundary in (floor, at], if any (it is at most three bytes back)."""
    at = min(at, len(raw))
    for cut in range(at, max(floor, at - 4), -1):
        if _is_boundary(raw, cut):
            return cut
    return None


def _boundary_after(raw: bytes | bytearray, at: int) -> int:
    """The first boundary strictly after `at` (the end of the character at `at`)."""
    cut = at + 1
    while not _is_boundary(raw, cut):
        cut += 1
    return min(cut, len(raw))


def utf8_prefix(raw: bytes, max_bytes: int) -> bytes:
    """At most `max_bytes` from the start of `raw`, never ending inside a character."""
    if len(raw) <= max_bytes:
        return raw
    return raw[: _boundary_before(raw, max_bytes, 0) or max_bytes]


def _blocks(source: ByteSource) -> Iterator[bytes]:
    if isinstance(source, Readable):
        while block := source.read(READ_BLOCK_BYTES):
            yield block
    else:
        yield from source


@dataclass(frozen=True, slots=True)
class SourceLine:
    """One line of the body (or one segment of a line longer than the segment limit)."""

    number: int  # 1-based
    byte_start: int
    raw: bytes  # with its line terminator, if it has one
    text: str
    starts_line: bool  # False for the second and later segments of a long line
    continues: bool  # the line goes on in the next segment

    @property
    def byte_end(self) -> int:
        return self.byte_start + len(self.raw)

    @property
    def content(self) -> str:
        """The text without its line terminator."""
        return self.text.rstrip("\r\n") if self.text.endswith("\n") else self.text

    @property
    def is_blank(self) -> bool:
        return not self.text.strip()


def read_lines(
    source: ByteSource, *, report: ChunkReport, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Iterator[SourceLine]:
    """Stream a body as lines, counting lines and replaced bytes in `report`.

    Holds one block plus one line (at most `max_line_bytes`) at a time. A leading UTF-8 byte
    order mark is skipped: line 1 then starts at byte 3.
    """
    if max_line_bytes < 16:
        raise ValueError(f"max_line_bytes must be at least 16, got {max_line_bytes}")
    buffer = bytearray()
    offset = 0  # of buffer[0] in the body
    number = 1
    starts_line = True
    first = True

    def segment(raw: bytes, continues: bool) -> SourceLine:
        nonlocal offset, number, starts_line, first
        start = offset
        offset += len(raw)
        if first:
            first = False
            if raw.startswith(_BOM):
                raw, start = raw[len(_BOM) :], start + len(_BOM)
        text, replaced = decode(raw)
        report.invalid_utf8_replacements += replaced
        if starts_line:
            report.lines += 1
        line = SourceLine(number, start, raw, text, starts_line, continues)
        starts_line = not continues
        if not continues:
            number += 1
        return line

    def segments(line: bytes) -> Iterator[SourceLine]:
        while len(line) > max_line_bytes:
            cut = _boundary_before(line, max_line_bytes, 0) or max_line_bytes
            yield segment(line[:cut], continues=True)
            line = line[cut:]
        yield segment(line, continues=False)

    for block in _blocks(source):
        buffer += block
        start = 0
        while (newline := buffer.find(b"\n", start)) >= 0:
            yield from segments(bytes(buffer[start : newline + 1]))
            start = newline + 1
        del buffer[:start]
        while len(buffer) > max_line_bytes:
            cut = _boundary_before(buffer, max_line_bytes, 0) or max_line_bytes
            yield segment(bytes(buffer[:cut]), continues=True)
            del buffer[:cut]
    if buffer:
        yield from segments(bytes(buffer))


@dataclass(frozen=True, slots=True)
class Verbatim:
    """A contiguous run of the original bytes and its decoded text."""

    raw: bytes
    text: str
    byte_start: int
    line_start: int

    @classmethod
    def of(cls, raw: bytes, byte_start: int, line_start: int) -> Verbatim:
        return cls(raw, _decoded(raw), byte_start, line_start)

    @classmethod
    def of_line(cls, line: SourceLine) -> Verbatim:
        return cls(line.raw, line.text, line.byte_start, line.number)

    @property
    def byte_end(self) -> int:
        return self.byte_start + len(self.raw)

    @property
    def line_end(self) -> int:
        """The line holding the last byte (a final line terminator belongs to its line)."""
        last = len(self.raw) - 1 if self.raw.endswith(b"\n") else len(self.raw)
        return self.line_start + self.raw.count(b"\n", 0, max(last, 0))

    def trimmed(self) -> Verbatim | None:
        """Without leading and trailing ASCII whitespace; None when nothing else is left."""
        stripped = self.raw.strip(_WHITESPACE)
        if not stripped:
            return None
        lead = len(self.raw) - len(self.raw.lstrip(_WHITESPACE))
        return Verbatim.of(
            stripped, self.byte_start + lead, self.line_start + self.raw.count(b"\n", 0, lead)
        )


def join(parts: Sequence[Verbatim]) -> Verbatim:
    """Concatenate adjacent runs (each must start where the previous one ends)."""
    if len(parts) == 1:
        return parts[0]
    for before, after in pairwise(parts):
        if before.byte_end != after.byte_start:
            raise ValueError(f"runs are not adjacent: {before.byte_end} != {after.byte_start}")
    return Verbatim(
        b"".join(p.raw for p in parts),
        "".join(p.text for p in parts),
        parts[0].byte_start,
        parts[0].line_start,
    )


def _longest_fitting(raw: bytes, start: int, max_chars: int) -> int:
    """The largest boundary `end` such that raw[start:end] decodes to <= max_chars chars."""
    # A character is 1..4 bytes (a replaced byte is one character), so max_chars bytes always
    # fit and 4 * max_chars bytes always suffice.
    limit = min(len(raw), start + 4 * max_chars)
    if limit < len(raw):
        limit = _boundary_before(raw, limit, start) or _boundary_after(raw, start)
    if len(_decoded(raw[start:limit])) <= max_chars:
        return limit
    low = _boundary_before(raw, start + max_chars, start) or _boundary_after(raw, start)
    high = limit  # does not fit
    while high - low > 1:
        middle = _boundary_before(raw, (low + high) // 2, low)
        if middle is None:
            middle = _boundary_after(raw, (low + high) // 2)
            if middle >= high:
                break
        if len(_decoded(raw[start:middle])) <= max_chars:
            low = middle
        else:
            high = middle
    return low


def _preferred_cut(raw: bytes, start: int, end: int) -> int:
    """The best separator end in the second half of raw[start:end], else `end`."""
    floor = start + (end - start) // 2
    for group in _SEPARATORS:
        found = [raw.rfind(sep, floor, end) + len(sep) for sep in group if sep in raw[floor:end]]
        if found:
            return max(found)
    return end


def split_verbatim(run: Verbatim, max_chars: int) -> list[Verbatim]:
    """Cut a run into parts of at most `max_chars` characters, at the best separators."""
    if len(run.text) <= max_chars:
        return [run]
    raw = run.raw
    parts: list[Verbatim] = []
    start = 0
    line = run.line_start
    while start < len(raw):
        end = _longest_fitting(raw, start, max_chars)
        if end < len(raw):
            end = _preferred_cut(raw, start, end)
        parts.append(Verbatim.of(raw[start:end], run.byte_start + start, line))
        line += raw.count(b"\n", start, end)
        start = end
    return parts


def tail_of(run: Verbatim, max_chars: int) -> Verbatim | None:
    """The end of a run in at most `max_chars` characters, starting after a word break."""
    if max_chars <= 0:
        return None
    if len(run.text) <= max_chars:
        return run
    raw = run.raw
    low = max(0, len(raw) - 4 * max_chars)  # may not fit
    high = len(raw)  # fits
    while high - low > 1:
        middle = _boundary_before(raw, (low + high) // 2, low)
        if middle is None:
            middle = _boundary_after(raw, (low + high) // 2)
            if middle >= high:
                break
        if len(_decoded(raw[middle:])) <= max_chars:
            high = middle
        else:
            low = middle
    start = high
    # Start on a word rather than in the middle of one, if a break is near the front.
    window_end = start + (len(raw) - start) // 2
    breaks = [raw.find(sep, start, window_end) for sep in (b"\n", b" ", b"\t")]
    found = [b for b in breaks if b >= 0]
    if found:
        start = min(found) + 1
    if start >= len(raw):
        return None
    return Verbatim.of(
        raw[start:], run.byte_start + start, run.line_start + raw.count(b"\n", 0, start)
    )


def split_text(text: str, max_chars: int) -> list[tuple[int, int]]:
    """Character ranges cutting `text` into parts of at most `max_chars`, at the best breaks.

    For text that has no byte positions worth keeping (PDF pages, rendered dialog arcs).
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    ranges: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        end = min(len(text), start + max_chars)
        if end < len(text):
            floor = start + (end - start) // 2
            for group in _TEXT_SEPARATORS:
                found = [text.rfind(s, floor, end) + len(s) for s in group if s in text[floor:end]]
                if found:
                    end = max(found)
                    break
        ranges.append((start, end))
        start = end
    return ranges
