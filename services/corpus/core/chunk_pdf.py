"""PDF by page (pypdf): one chunk per page, long pages split.

Each chunk carries its 1-based `page`. A page longer than `max_chunk_chars` is split at
paragraph, line, sentence or word breaks, and each part says where it sits in the page's
extracted text (`attributes["char_start"]`, `["char_end"]`, `["page_part"]`). Byte and line
ranges are 0: the bytes of a PDF are compressed streams, not the text a reader would cite.

Failures are per file, with a message a person can act on:

- an encrypted PDF that does not open with the empty password (many "protected" PDFs only
  restrict printing) is InvalidInput "<name> is encrypted …";
- a PDF pypdf cannot parse is InvalidInput "<name> is not a readable PDF: <why>";
- a page whose text cannot be extracted is skipped and counted (`unreadable_pages`); only
  when no page at all can be read does the file fail. Pages without text (scans) are counted
  in `pages_without_text`.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Iterator
from typing import BinaryIO, Final

from pypdf import PdfReader
from pypdf.errors import PyPdfError

from services.corpus.core._source import split_text
from services.corpus.core.chunks import (
    DEFAULT_MAX_CHUNK_CHARS,
    ORIGIN_PDF,
    ChunkDraft,
    ChunkReport,
)
from services.runtime.errors import InvalidInput

# pypdf reports a malformed structure with whatever Python raised while walking it, not only
# its own errors; these are the ones a broken file is known to produce.
_PDF_ERRORS: Final = (
    PyPdfError,
    ValueError,
    KeyError,
    TypeError,
    AttributeError,
    IndexError,
    AssertionError,
    RecursionError,
    zlib.error,
    struct.error,
)


def open_pdf(stream: BinaryIO, name: str) -> PdfReader:
    """Open a PDF, decrypting it with the empty password if it must; InvalidInput otherwise."""
    try:
        reader = PdfReader(stream)
        if reader.is_encrypted and not _opens_without_password(reader):
            raise InvalidInput(
                f"{name} is encrypted; remove its password and upload it again", field="file"
            )
        len(reader.pages)  # reads the page tree now, so a broken one fails here
    except _PDF_ERRORS as error:
        raise InvalidInput(f"{name} is not a readable PDF: {error}", field="file") from error
    return reader


def _opens_without_password(reader: PdfReader) -> bool:
    try:
        return bool(reader.decrypt(""))
    except _PDF_ERRORS:  # DependencyError too: AES needs a crypto library we do not require
        return False


def iter_pages(reader: PdfReader, name: str, report: ChunkReport) -> Iterator[tuple[int, str]]:
    """(1-based page number, extracted text) of every page with text, counting the others."""
    readable = 0
    for number in range(1, len(reader.pages) + 1):
        report.pages += 1
        try:
            text = reader.pages[number - 1].extract_text()
        except _PDF_ERRORS:
            report.unreadable_pages += 1
            continue
        readable += 1
        if not text.strip():
            report.pages_without_text += 1
            continue
        yield number, text
    if report.pages and not readable:
        raise InvalidInput(f"{name} is not a readable PDF: no page could be read", field="file")


def chunk_pdf_pages(
    pages: Iterable[tuple[int, str]],
    *,
    max_chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS,
    first_ordinal: int = 0,
) -> Iterator[ChunkDraft]:
    """One chunk per page of text, long pages in parts (see the module docstring)."""
    ordinal = first_ordinal
    for number, text in pages:
        ranges = split_text(text, max_chunk_chars)
        parts = 0
        for start, end in ranges:
            piece = text[start:end]
            content = piece.strip()
            if not content:
                continue
            parts += 1
            attributes: dict[str, str] = {}
            if len(ranges) > 1:
                lead = len(piece) - len(piece.lstrip())
                attributes = {
                    "char_start": str(start + lead),
                    "char_end": str(start + lead + len(content)),
                    "page_part": str(parts),
                }
            yield ChunkDraft(
                content=content,
                ordinal=ordinal,
                origin_kind=ORIGIN_PDF,
                page=number,
                attributes=attributes,
            )
            ordinal += 1


def chunk_pdf(
    stream: BinaryIO,
    *,
    name: str,
    report: ChunkReport,
    max_chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS,
) -> Iterator[ChunkDraft]:
    """Open and chunk a PDF; opening errors raise now, page errors are counted as it goes."""
    reader = open_pdf(stream, name)
    return chunk_pdf_pages(iter_pages(reader, name, report), max_chunk_chars=max_chunk_chars)


def pdf_text(stream: BinaryIO, name: str) -> str:
    """The text of every page, pages separated by a blank line (for query_document)."""
    reader = open_pdf(stream, name)
    return "\n\n".join(text.strip("\n") for _, text in iter_pages(reader, name, ChunkReport()))
