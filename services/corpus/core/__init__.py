"""The corpus tier's pure core: names, type detection, size tiers, chunkers, synopsis, spans.

No storage, no gRPC and no filesystem paths here: the functions read the bytes or streams
they are handed and return plain values. The servicer and the ingest job translate.
"""

from services.corpus.core._arcs import Place
from services.corpus.core._source import ByteSource, SourceLine, read_lines
from services.corpus.core.chunk_jsonl import (
    DialogFormat,
    JsonlShape,
    chunk_dialog,
    chunk_jsonl,
    chunk_jsonl_file,
    sniff_jsonl,
)
from services.corpus.core.chunk_markdown import chunk_markdown, parse_atx_heading
from services.corpus.core.chunk_pdf import chunk_pdf, chunk_pdf_pages, open_pdf, pdf_text
from services.corpus.core.chunk_text import chunk_text
from services.corpus.core.chunks import (
    DIALOG_CHUNKER,
    JSONL_CHUNKER,
    MARKDOWN_CHUNKER,
    PDF_CHUNKER,
    SYNOPSIS_CHUNKER,
    TEXT_CHUNKER,
    ChunkDraft,
    ChunkReport,
)
from services.corpus.core.detect import DetectedType, FileKind, detect_type
from services.corpus.core.dispatch import (
    ChunkOptions,
    ChunkResult,
    chunk_file,
    chunk_synopsis,
    synopsis_of,
)
from services.corpus.core.names import validate_file_name, validate_folder_path
from services.corpus.core.spans import (
    Span,
    SpanSearch,
    find_spans,
    fit_to_budget,
    search_spans,
)
from services.corpus.core.synopsis import (
    HeadingCollector,
    SynopsisBuilder,
    build_synopsis,
)
from services.corpus.core.tiers import (
    HARD_LIMIT_BYTES,
    SizeTier,
    SizeTierPolicy,
    check_size,
)

__all__ = [
    "DIALOG_CHUNKER",
    "HARD_LIMIT_BYTES",
    "JSONL_CHUNKER",
    "MARKDOWN_CHUNKER",
    "PDF_CHUNKER",
    "SYNOPSIS_CHUNKER",
    "TEXT_CHUNKER",
    "ByteSource",
    "ChunkDraft",
    "ChunkOptions",
    "ChunkReport",
    "ChunkResult",
    "DetectedType",
    "DialogFormat",
    "FileKind",
    "HeadingCollector",
    "JsonlShape",
    "Place",
    "SizeTier",
    "SizeTierPolicy",
    "SourceLine",
    "Span",
    "SpanSearch",
    "SynopsisBuilder",
    "build_synopsis",
    "check_size",
    "chunk_dialog",
    "chunk_file",
    "chunk_jsonl",
    "chunk_jsonl_file",
    "chunk_markdown",
    "chunk_pdf",
    "chunk_pdf_pages",
    "chunk_synopsis",
    "chunk_text",
    "detect_type",
    "find_spans",
    "fit_to_budget",
    "open_pdf",
    "parse_atx_heading",
    "pdf_text",
    "read_lines",
    "search_spans",
    "sniff_jsonl",
    "synopsis_of",
    "validate_file_name",
    "validate_folder_path",
]
