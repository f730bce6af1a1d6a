"""The synopsis of a large file (size tiers STREAMED and DOCUMENT, seed 004).

A synopsis is what stands for a file too large to keep as its own summary: the first 8 KiB of
its text verbatim, then an outline of its h1/h2 headings of at most 2 KiB::

    <the first 8 KiB, cut at a character boundary>

    ## Outline
    - Guide
      - Install
      - Usage
    … (212 more headings)

Sizes are UTF-8 bytes of the synopsis text (KiB, as the seed says: 8,192 and 2,048 bytes).
The outline is left out when the file has no h1/h2 headings. Headings are collected while the
body streams past (`HeadingCollector`), keeping only as many as the outline can show, so a
50 MB file with a million headings costs a few KiB.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from services.corpus.core._source import utf8_prefix
from services.corpus.core.chunk_markdown import FenceTracker, parse_atx_heading

SYNOPSIS_HEAD_BYTES: Final = 8 * 1024
OUTLINE_MAX_BYTES: Final = 2 * 1024
OUTLINE_TITLE: Final = "\n\n## Outline\n"
_OUTLINE_LEVELS: Final = 2
# Room kept for the "… (N more headings)" line when the outline is cut.
_MORE_LINE_RESERVE: Final = len("… (9999999999 more headings)\n".encode())


def _outline_line(level: int, text: str) -> str:
    return f"{'  ' * (level - 1)}- {text}\n"


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def head_text(head: bytes | str, max_bytes: int = SYNOPSIS_HEAD_BYTES) -> str:
    """At most `max_bytes` of UTF-8 from the start of `head`, cut at a character boundary."""
    raw = head.encode("utf-8", errors="replace") if isinstance(head, str) else head
    text = utf8_prefix(raw, max_bytes).decode("utf-8", errors="replace")
    # A replaced byte is one byte in the source but three in the synopsis; keep the promise.
    while _utf8_len(text) > max_bytes:
        text = text[: len(text) - max(1, (_utf8_len(text) - max_bytes) // 3)]
    return text


class HeadingCollector:
    """Collects the h1/h2 headings of markdown fed line by line, outside fenced code.

    Keeps the headings an outline of `max_bytes` can show and only counts the rest.
    """

    def __init__(self, max_bytes: int = OUTLINE_MAX_BYTES) -> None:
        self._max_bytes = max_bytes
        self._fences = FenceTracker()
        self._kept: list[tuple[int, str]] = []
        self._kept_bytes = 0
        self.total = 0

    @property
    def headings(self) -> list[tuple[int, str]]:
        """The headings kept, in order (see `total` for how many were seen)."""
        return list(self._kept)

    def feed(self, line: bytes | str) -> None:
        """Feed one line of the body (bytes are decoded with replacement)."""
        text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
        if self._fences.feed(text):
            return
        heading = parse_atx_heading(text)
        if heading is None or heading[0] > _OUTLINE_LEVELS:
            return
        self.total += 1
        size = _utf8_len(_outline_line(*heading))
        if self._kept_bytes + size <= self._max_bytes:
            self._kept.append(heading)
            self._kept_bytes += size


def render_outline(
    headings: Sequence[tuple[int, str]],
    *,
    total: int | None = None,
    max_bytes: int = OUTLINE_MAX_BYTES,
) -> str:
    """The h1/h2 outline in at most `max_bytes`, cut at a line, the rest counted."""
    shown = [(level, text) for level, text in headings if level <= _OUTLINE_LEVELS]
    total = max(total or 0, len(shown))
    lines = [_outline_line(level, text) for level, text in shown]
    if sum(_utf8_len(line) for line in lines) <= max_bytes and total == len(lines):
        return "".join(lines)
    budget = max_bytes - _MORE_LINE_RESERVE
    kept: list[str] = []
    used = 0
    for line in lines:
        size = _utf8_len(line)
        if used + size > budget:
            break
        kept.append(line)
        used += size
    kept.append(f"… ({total - len(kept)} more headings)\n")
    return "".join(kept)


def build_synopsis(
    head: bytes | str,
    headings: Sequence[tuple[int, str]],
    *,
    total_headings: int | None = None,
) -> str:
    """First 8 KiB of `head` verbatim, then the h1/h2 outline (see the module docstring).

    `head` may be longer than 8 KiB (it is cut); `total_headings` is how many headings the
    body had when `headings` holds only the first of them (`HeadingCollector.total`).
    """
    text = head_text(head)
    outline = render_outline(headings, total=total_headings)
    if not outline:
        return text
    return text.rstrip("\n") + OUTLINE_TITLE + outline.rstrip("\n")


class SynopsisBuilder:
    """Builds a synopsis from the text lines of a body as they stream past.

    `outline` is off for formats whose '#' lines are not headings (JSONL, plain text).
    """

    def __init__(self, *, outline: bool) -> None:
        self._head: list[str] = []
        self._head_bytes = 0
        self._head_full = False
        self._collector = HeadingCollector() if outline else None

    @property
    def head_full(self) -> bool:
        """Whether the verbatim head is complete (only headings can still be collected)."""
        return self._head_full

    def feed(self, text: str) -> None:
        """Feed the next piece of text (a line, or a page of a PDF)."""
        if not self._head_full:
            piece = head_text(text, SYNOPSIS_HEAD_BYTES - self._head_bytes)
            self._head.append(piece)
            self._head_bytes += _utf8_len(piece)
            # Once a piece is cut, nothing after it may join: the head stays one verbatim run.
            self._head_full = len(piece) < len(text) or self._head_bytes >= SYNOPSIS_HEAD_BYTES
        if self._collector is not None:
            self._collector.feed(text)

    def synopsis(self) -> str:
        """The synopsis of everything fed so far."""
        head = "".join(self._head)
        if self._collector is None:
            return build_synopsis(head, [])
        return build_synopsis(head, self._collector.headings, total_headings=self._collector.total)
