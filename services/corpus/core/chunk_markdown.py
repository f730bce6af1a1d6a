"""Markdown by heading: one chunk per section, carrying its heading path.

A section runs from an ATX heading (``#`` … ``######``) to the next heading; its chunk's
`heading_path` names every enclosing heading, outermost first (``("Guide", "Install",
"Linux")``). A section longer than `max_chunk_chars` is split further at paragraph, line,
sentence or word breaks; every part keeps the path, and the parts after the first carry
``attributes["continued"] = "true"``. A heading directly followed by a deeper one ("# Guide"
then "## Install") is not a chunk of its own: its line leads the first child's chunk, so no
chunk is a bare title.

Decisions:

- ATX headings only. Setext headings (a line underlined with ``===`` or ``---``) would need a
  line of look-behind and are rare in notes; their text still lands in the chunks verbatim.
- Lines inside fenced code blocks (```` ``` ```` or ``~~~``) are never headings, so a
  ``# comment`` in a shell snippet does not start a section; a fence is kept in one part
  where it fits.
- Chunks are verbatim (see `chunks`): byte and line ranges slice back to the content.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from services.corpus.core._source import SourceLine, Verbatim
from services.corpus.core.chunk_text import ParagraphAssembler, WindowPacker, verbatim_draft
from services.corpus.core.chunks import DEFAULT_MAX_CHUNK_CHARS, ORIGIN_MARKDOWN, ChunkDraft

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


def parse_atx_heading(line: str) -> tuple[int, str] | None:
    """(level, text) of an ATX heading line, or None. Empty headings (``#`` alone) are None."""
    match = _ATX.match(line.rstrip("\r\n"))
    if match is None:
        return None
    text = _CLOSING_HASHES.sub("", match.group(2) or "").strip()
    if not text:
        return None
    return len(match.group(1)), text


class FenceTracker:
    """Knows whether a line is part of a fenced code block, fed the lines in order."""

    def __init__(self) -> None:
        self._fence = ""  # the opening run of ` or ~, while inside a block

    @property
    def inside(self) -> bool:
        return bool(self._fence)

    def feed(self, line: str) -> bool:
        """Whether `line` belongs to a fence (the opening and closing lines included)."""
        line = line.rstrip("\r\n")
        if self._fence:
            stripped = line.lstrip(" ")
            indent = len(line) - len(stripped)
            run = stripped[: len(stripped) - len(stripped.lstrip(self._fence[0]))]
            if indent <= 3 and len(run) >= len(self._fence) and not stripped[len(run) :].strip():
                self._fence = ""
            return True
        match = _FENCE_OPEN.match(line)
        if match is None:
            return False
        fence, info = match.group(1), match.group(2)
        if fence[0] == "`" and "`" in info:
            return False  # inline code spanning a line, not a fence (CommonMark)
        self._fence = fence
        return True


@dataclass
class _Section:
    path: tuple[str, ...] = ()
    level: int = 0
    has_body: bool = False
    parts: int = 0


def chunk_markdown(
    lines: Iterable[SourceLine],
    *,
    max_chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS,
    origin_kind: str = ORIGIN_MARKDOWN,
    first_ordinal: int = 0,
) -> Iterator[ChunkDraft]:
    """Chunk markdown by heading (see the module docstring), streaming."""
    fences = FenceTracker()
    stack: list[tuple[int, str]] = []
    section = _Section()
    assembler = ParagraphAssembler(max_chunk_chars)
    packer = WindowPacker(max_chunk_chars)
    ordinal = first_ordinal

    def emit(window: Verbatim | None) -> Iterator[ChunkDraft]:
        nonlocal ordinal
        if window is None:
            return
        attributes = {"continued": "true"} if section.parts else {}
        draft = verbatim_draft(
            window,
            ordinal=ordinal,
            origin_kind=origin_kind,
            heading_path=section.path,
            attributes=attributes,
        )
        if draft is not None:
            ordinal += 1
            section.parts += 1
            yield draft

    def add(units: list[Verbatim]) -> Iterator[ChunkDraft]:
        for unit in units:
            yield from emit(packer.add(unit))

    for line in lines:
        heading = None
        in_fence = False
        if line.starts_line:
            in_fence = fences.feed(line.text)
            if not in_fence:
                heading = parse_atx_heading(line.text)
        if heading is None:
            section.has_body = section.has_body or not line.is_blank
            yield from add(assembler.feed(line, blank=line.is_blank and not in_fence))
            continue
        level, text = heading
        yield from add(assembler.flush())
        title_only = section.level > 0 and not section.has_body and level > section.level
        if not title_only:
            yield from emit(packer.finish())
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, text))
        section = _Section(tuple(t for _, t in stack), level)
        yield from add(assembler.feed(line, blank=False))
    yield from add(assembler.flush())
    yield from emit(packer.finish())
