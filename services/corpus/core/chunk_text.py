"""Plain text by paragraph, packed into a sliding window.

Paragraphs (runs of non-blank lines, with the blank lines after them) are packed greedily into
windows of at most `window_chars`; each window after the first starts with the end of the one
before, up to `overlap_chars`, so a sentence cut by a window edge is whole in one of the two.
A paragraph longer than a window is cut at a line, sentence or word break.

Streaming: at most one window plus one paragraph part is held at a time, whatever the size
of the body. Chunks are verbatim: ``content == body[byte_start:byte_end]`` decoded (see
`chunks`), with leading and trailing whitespace left out of both.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from services.corpus.core._source import SourceLine, Verbatim, join, split_verbatim, tail_of
from services.corpus.core.chunks import ORIGIN_TEXT, ChunkDraft

DEFAULT_WINDOW_CHARS = 1200
DEFAULT_OVERLAP_CHARS = 200


class ParagraphAssembler:
    """Groups lines into units: a paragraph and the blank lines after it, each <= max_chars.

    Units partition the body (each starts where the previous one ended), which is what lets a
    packer join any adjacent run of them into one verbatim chunk.
    """

    def __init__(self, max_chars: int) -> None:
        self._max_chars = max_chars
        self._parts: list[Verbatim] = []
        self._chars = 0
        self._has_text = False
        self._after_blank = False

    def feed(self, line: SourceLine, *, blank: bool) -> list[Verbatim]:
        """Add a line; return the units it completed. `blank` ends a paragraph."""
        done: list[Verbatim] = []
        if not blank and self._after_blank:
            done.extend(self.flush())
        self._parts.append(Verbatim.of_line(line))
        self._chars += len(line.text)
        if blank:
            self._after_blank = self._has_text
        else:
            self._has_text = True
        if self._chars > self._max_chars:
            # A paragraph longer than a unit: hand on all but its last part, which may still
            # grow with the lines that follow.
            pieces = split_verbatim(join(self._parts), self._max_chars)
            done.extend(pieces[:-1])
            self._parts = [pieces[-1]]
            self._chars = len(pieces[-1].text)
        return done

    def flush(self) -> list[Verbatim]:
        """The unit being built, if any; the assembler starts afresh."""
        done = [join(self._parts)] if self._parts else []
        self._parts, self._chars = [], 0
        self._has_text = self._after_blank = False
        return done


class WindowPacker:
    """Packs adjacent units into windows of at most `max_chars`, overlapping by a tail.

    Every unit added must be at most `max_chars` long (the assembler guarantees it). The
    overlap never crowds out the new unit: it gets only what the unit leaves of the window.
    """

    def __init__(self, max_chars: int, overlap_chars: int = 0) -> None:
        if not 0 <= overlap_chars < max_chars:
            raise ValueError(f"overlap_chars must be in [0, {max_chars}), got {overlap_chars}")
        self._max_chars = max_chars
        self._overlap_chars = overlap_chars
        self._parts: list[Verbatim] = []
        self._chars = 0

    def add(self, unit: Verbatim) -> Verbatim | None:
        """Add a unit; return the window it closed, if it did not fit in the open one."""
        closed = None
        if self._parts and self._chars + len(unit.text) > self._max_chars:
            closed = join(self._parts)
            budget = min(self._overlap_chars, self._max_chars - len(unit.text))
            self._parts = self._overlap(budget)
            self._chars = sum(len(p.text) for p in self._parts)
        self._parts.append(unit)
        self._chars += len(unit.text)
        return closed

    def finish(self) -> Verbatim | None:
        """The open window, if any."""
        closed = join(self._parts) if self._parts else None
        self._parts, self._chars = [], 0
        return closed

    def _overlap(self, budget: int) -> list[Verbatim]:
        """The trailing units of the closed window that fit in `budget`, the last one cut."""
        kept: list[Verbatim] = []
        for part in reversed(self._parts):
            if len(part.text) <= budget:
                kept.append(part)
                budget -= len(part.text)
                continue
            tail = tail_of(part, budget)
            if tail is not None:
                kept.append(tail)
            break
        kept.reverse()
        return kept


def verbatim_draft(
    run: Verbatim,
    *,
    ordinal: int,
    origin_kind: str,
    heading_path: tuple[str, ...] = (),
    attributes: Mapping[str, str] | None = None,
) -> ChunkDraft | None:
    """A chunk of a verbatim run without its surrounding whitespace; None if only whitespace."""
    trimmed = run.trimmed()
    if trimmed is None:
        return None
    return ChunkDraft(
        content=trimmed.text,
        ordinal=ordinal,
        origin_kind=origin_kind,
        byte_start=trimmed.byte_start,
        byte_end=trimmed.byte_end,
        line_start=trimmed.line_start,
        line_end=trimmed.line_end,
        heading_path=heading_path,
        attributes=dict(attributes or {}),
    )


def chunk_text(
    lines: Iterable[SourceLine],
    *,
    window_chars: int = DEFAULT_WINDOW_CHARS,
    overlap_chars: int = DEFAULT_OVERLAP_CHARS,
    origin_kind: str = ORIGIN_TEXT,
    first_ordinal: int = 0,
) -> Iterator[ChunkDraft]:
    """Chunk plain text: paragraphs in a sliding window (see the module docstring)."""
    assembler = ParagraphAssembler(window_chars)
    packer = WindowPacker(window_chars, overlap_chars)
    ordinal = first_ordinal

    def drafts(windows: Iterable[Verbatim | None]) -> Iterator[ChunkDraft]:
        nonlocal ordinal
        for window in windows:
            if window is None:
                continue
            draft = verbatim_draft(window, ordinal=ordinal, origin_kind=origin_kind)
            if draft is not None:
                ordinal += 1
                yield draft

    for line in lines:
        for unit in assembler.feed(line, blank=line.is_blank):
            yield from drafts([packer.add(unit)])
    for unit in assembler.flush():
        yield from drafts([packer.add(unit)])
    yield from drafts([packer.finish()])
