"""What every chunker produces: chunk drafts with their anchors, and a per-file report.

A `ChunkDraft` is a raw chunk before storage gives it an id, a file id and a session id. Its
anchor says where it came from so that `expand_raw` can cite it:

- Verbatim chunkers (markdown, text, non-dialog JSONL) guarantee
  ``content == original[byte_start:byte_end].decode("utf-8", errors="replace")``: the byte
  range indexes the original file, so a citation can re-read exactly those bytes.
- Dialog arcs are rendered ("User: …\\nAssistant: …"); their byte and line ranges cover the
  JSONL records the arc was rendered from.
- PDF chunks carry the 1-based page; byte and line ranges are 0 (a PDF's text has no byte
  positions worth citing), and a page split in parts says where in the page text each part
  starts and ends (`attributes["char_start"]`, `attributes["char_end"]`).

Line numbers are 1-based and inclusive; byte ranges are half-open; ordinals are 0-based and
count the chunks of one file in order.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Final

# Chunker versions, stored with every chunk. Bump one when its output for the same bytes
# changes, so that re-ingesting a file can tell stale chunks from current ones.
MARKDOWN_CHUNKER: Final = "markdown/1"
TEXT_CHUNKER: Final = "text/1"
JSONL_CHUNKER: Final = "jsonl/1"
DIALOG_CHUNKER: Final = "dialog/1"
PDF_CHUNKER: Final = "pdf/1"
SYNOPSIS_CHUNKER: Final = "synopsis/1"
EXPORT_CHUNKER: Final = "export/1"

# origin_kind values a file chunk can carry (direct adds use "direct", set elsewhere).
ORIGIN_MARKDOWN: Final = "markdown"
ORIGIN_TEXT: Final = "text"
ORIGIN_JSONL: Final = "jsonl"
ORIGIN_PDF: Final = "pdf"
ORIGIN_CLAUDE_CODE: Final = "claude_code"
ORIGIN_CODEX: Final = "codex"
ORIGIN_DIALOG: Final = "dialog"
ORIGIN_CHATGPT: Final = "chatgpt"  # a ChatGPT export's conversations
ORIGIN_CLAUDE_AI: Final = "claude_ai"  # a Claude.ai export's conversations

DEFAULT_MAX_CHUNK_CHARS: Final = 2000


@dataclass(frozen=True, slots=True)
class ChunkDraft:
    """One chunk of a file with its citation anchor (see the module docstring)."""

    content: str
    ordinal: int
    origin_kind: str
    byte_start: int = 0
    byte_end: int = 0
    line_start: int = 0
    line_end: int = 0
    page: int = 0
    heading_path: tuple[str, ...] = ()
    speaker: str = ""
    occurred_at: datetime | None = None
    attributes: dict[str, str] = field(default_factory=dict)
    # The session within its file, for a file that holds several (an export's conversation
    # id); "" = the file's one session.
    session_key: str = ""


@dataclass(slots=True)
class ChunkReport:
    """Counters about one file's chunking, stored with the file (`CorpusFile.report`).

    Bad input is counted here rather than failing the file: a replaced byte, a malformed
    JSONL line or a PDF page without text costs that piece, never the whole file.
    """

    lines: int = 0
    chunks: int = 0
    invalid_utf8_replacements: int = 0
    malformed_lines: int = 0
    oversized_lines: int = 0
    skipped_meta_lines: int = 0
    tool_events: int = 0
    skipped_tool_events: int = 0
    skipped_thinking_blocks: int = 0
    arcs: int = 0
    pages: int = 0
    pages_without_text: int = 0
    unreadable_pages: int = 0

    def as_dict(self) -> dict[str, int]:
        """Every counter by name, for the file's report map."""
        return {f.name: int(getattr(self, f.name)) for f in fields(self)}
