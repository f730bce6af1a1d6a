"""`chunk_file`: the chunker for a detected type, run over a body as it streams.

Chat exports are read one conversation at a time (`chunk_export`). Text-like formats
(markdown, plain text, JSONL) are read in 64 KiB blocks and chunked line by
line: nothing holds the body whole, so a STREAMED-tier file of 8 MB costs one window of
memory, not two copies of the body. PDF needs random access (pypdf seeks through the file's
cross-reference table), so it gets the binary file object itself.

The synopsis of a large file comes from the same pass: every line (or PDF page) streamed to a
chunker is also fed to a `SynopsisBuilder`, so `ChunkResult.synopsis()` is ready once the
chunks have been consumed. For the DOCUMENT tier, whose body is not chunked, `synopsis_of`
makes that pass alone and `chunk_synopsis` chunks its result.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import BinaryIO, Final, get_args

from services.corpus.core._arcs import ToolEvents
from services.corpus.core._source import DEFAULT_MAX_LINE_BYTES, SourceLine, read_lines
from services.corpus.core.chunk_export import chunk_export, sniff_export
from services.corpus.core.chunk_jsonl import chunk_jsonl_file
from services.corpus.core.chunk_markdown import chunk_markdown
from services.corpus.core.chunk_pdf import chunk_pdf_pages, iter_pages, open_pdf
from services.corpus.core.chunk_text import (
    DEFAULT_OVERLAP_CHARS,
    DEFAULT_WINDOW_CHARS,
    chunk_text,
)
from services.corpus.core.chunks import (
    DEFAULT_MAX_CHUNK_CHARS,
    EXPORT_CHUNKER,
    MARKDOWN_CHUNKER,
    ORIGIN_MARKDOWN,
    ORIGIN_PDF,
    ORIGIN_TEXT,
    PDF_CHUNKER,
    SYNOPSIS_CHUNKER,
    TEXT_CHUNKER,
    ChunkDraft,
    ChunkReport,
)
from services.corpus.core.detect import SNIFF_BYTES, DetectedType, FileKind
from services.corpus.core.note_time import with_note_time
from services.corpus.core.synopsis import SynopsisBuilder
from services.runtime.errors import InvalidInput

# A JSONL record is parsed whole, so its line cannot be handed on in segments; one longer than
# this (a transcript line holding a large pasted image, say) is skipped and counted.
DEFAULT_MAX_RECORD_BYTES: Final = 16 << 20
_MIN_CHARS: Final = 16


@dataclass(frozen=True, slots=True)
class ChunkOptions:
    """Sizes and choices of the chunkers, from the tier's settings."""

    max_chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS  # markdown sections, pages, arcs, records
    window_chars: int = DEFAULT_WINDOW_CHARS  # plain-text window
    overlap_chars: int = DEFAULT_OVERLAP_CHARS  # plain-text overlap between windows
    tool_events: ToolEvents = "summarise"  # or "skip": tool calls and results in arcs
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES

    def __post_init__(self) -> None:
        if self.max_chunk_chars < _MIN_CHARS or self.window_chars < _MIN_CHARS:
            raise ValueError(
                f"max_chunk_chars and window_chars must be at least {_MIN_CHARS}, got "
                f"{self.max_chunk_chars} and {self.window_chars}"
            )
        if not 0 <= self.overlap_chars < self.window_chars:
            raise ValueError(
                f"overlap_chars must be in [0, window_chars={self.window_chars}), "
                f"got {self.overlap_chars}"
            )
        if self.tool_events not in get_args(ToolEvents):
            raise ValueError(f"tool_events must be one of {get_args(ToolEvents)}")
        if min(self.max_line_bytes, self.max_record_bytes) < 1024:
            raise ValueError("max_line_bytes and max_record_bytes must be at least 1024")


class ChunkResult:
    """Chunks of one file, produced lazily as `chunks` is consumed.

    `report` and `synopsis()` are complete once `chunks` is exhausted. `session_hint` is the
    session id a transcript names (Claude Code's sessionId, Codex's session_meta id), if any.
    """

    def __init__(
        self,
        chunks: Iterable[ChunkDraft],
        report: ChunkReport,
        *,
        origin_kind: str,
        version: str,
        session_hint: str | None = None,
        synopsis: SynopsisBuilder | None = None,
    ) -> None:
        self.report = report
        self.origin_kind = origin_kind
        self.version = version
        self.session_hint = session_hint
        self._builder = synopsis or SynopsisBuilder(outline=False)
        self._exhausted = False
        self.chunks: Iterator[ChunkDraft] = self._counted(chunks)

    def _counted(self, chunks: Iterable[ChunkDraft]) -> Iterator[ChunkDraft]:
        for chunk in chunks:
            self.report.chunks += 1
            yield chunk
        self._exhausted = True

    def synopsis(self) -> str:
        """The synopsis of the body (first 8 KiB and h1/h2 outline), after the chunks."""
        if not self._exhausted:
            raise RuntimeError("consume ChunkResult.chunks before asking for the synopsis")
        return self._builder.synopsis()


def _tapped(lines: Iterable[SourceLine], builder: SynopsisBuilder) -> Iterator[SourceLine]:
    for line in lines:
        builder.feed(line.text)
        yield line


def _page_line(text: str) -> str:
    """A page's text as the synopsis sees it: ending with a newline, like a line."""
    return text if text.endswith("\n") else text + "\n"


def _pages_tapped(
    pages: Iterable[tuple[int, str]], builder: SynopsisBuilder
) -> Iterator[tuple[int, str]]:
    for number, text in pages:
        builder.feed(_page_line(text))
        yield number, text


def chunk_file(
    detected: DetectedType, stream: BinaryIO, *, options: ChunkOptions | None = None
) -> ChunkResult:
    """Chunk a body by its detected type, lazily.

    Raises InvalidInput now for a binary kind and for a PDF that cannot be opened; a PDF
    whose every page fails raises while `chunks` is consumed.
    """
    options = options or ChunkOptions()
    if detected.is_binary:
        detected.refuse_binary()
    report = ChunkReport()
    builder = SynopsisBuilder(outline=detected.kind is FileKind.MARKDOWN)

    def result(
        chunks: Iterator[ChunkDraft], origin_kind: str, version: str, session: str | None = None
    ) -> ChunkResult:
        return ChunkResult(
            chunks,
            report,
            origin_kind=origin_kind,
            version=version,
            session_hint=session,
            synopsis=builder,
        )

    if detected.kind is FileKind.PDF:
        pages = _pages_tapped(
            iter_pages(open_pdf(stream, detected.name), detected.name, report), builder
        )
        return result(
            chunk_pdf_pages(pages, max_chunk_chars=options.max_chunk_chars),
            ORIGIN_PDF,
            PDF_CHUNKER,
        )
    if detected.kind is FileKind.CHAT_EXPORT:
        export = sniff_export(stream.read(SNIFF_BYTES))
        stream.seek(0)
        if export is None:
            raise InvalidInput(f"{detected.name} is no longer a chat export", field="file")
        chunks = chunk_export(
            stream,
            export=export,
            name=detected.name,
            report=report,
            max_chunk_chars=options.max_chunk_chars,
            tool_events=options.tool_events,
        )
        return result(chunks, str(export), EXPORT_CHUNKER)
    limit = options.max_record_bytes if detected.kind is FileKind.JSONL else options.max_line_bytes
    lines = _tapped(read_lines(stream, report=report, max_line_bytes=limit), builder)
    if detected.kind is FileKind.MARKDOWN:
        chunks = chunk_markdown(lines, max_chunk_chars=options.max_chunk_chars)
        return result(with_note_time(chunks, detected.name), ORIGIN_MARKDOWN, MARKDOWN_CHUNKER)
    if detected.kind is FileKind.JSONL:
        shape, chunks = chunk_jsonl_file(
            lines,
            report=report,
            max_chunk_chars=options.max_chunk_chars,
            tool_events=options.tool_events,
        )
        return result(chunks, shape.origin_kind, shape.version, shape.session_id)
    chunks = chunk_text(
        lines, window_chars=options.window_chars, overlap_chars=options.overlap_chars
    )
    return result(chunks, ORIGIN_TEXT, TEXT_CHUNKER)


def synopsis_of(
    detected: DetectedType, stream: BinaryIO, *, options: ChunkOptions | None = None
) -> str:
    """The synopsis of a body without chunking it (the DOCUMENT tier), in one streaming pass.

    Reading stops after the first 8 KiB of text unless the format has headings to outline.
    """
    options = options or ChunkOptions()
    if detected.is_binary:
        detected.refuse_binary()
    outline = detected.kind is FileKind.MARKDOWN
    builder = SynopsisBuilder(outline=outline)
    report = ChunkReport()
    if detected.kind is FileKind.PDF:
        pages = iter_pages(open_pdf(stream, detected.name), detected.name, report)
        texts: Iterable[str] = (_page_line(text) for _, text in pages)
    else:
        texts = (
            line.text
            for line in read_lines(stream, report=report, max_line_bytes=options.max_line_bytes)
        )
    for text in texts:
        builder.feed(text)
        if not outline and builder.head_full:
            break
    return builder.synopsis()


def chunk_synopsis(
    synopsis: str, *, origin_kind: str, options: ChunkOptions | None = None
) -> ChunkResult:
    """Chunk a synopsis (DOCUMENT tier) as markdown; byte ranges index the synopsis text.

    Every chunk says so with ``attributes["source"] = "synopsis"``; the full body stays
    reachable through query_document.
    """
    options = options or ChunkOptions()
    report = ChunkReport()
    lines = read_lines([synopsis.encode("utf-8")], report=report)
    drafts = (
        replace(
            draft, origin_kind=origin_kind, attributes=draft.attributes | {"source": "synopsis"}
        )
        for draft in chunk_markdown(lines, max_chunk_chars=options.max_chunk_chars)
    )
    return ChunkResult(drafts, report, origin_kind=origin_kind, version=SYNOPSIS_CHUNKER)
