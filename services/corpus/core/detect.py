"""What kind of file a body is, from its name and its first bytes.

Order of evidence, strongest first:

1. Magic bytes (``%PDF-``, PNG, JPEG, GIF, WebP, zip, gzip, bzip2, xz, 7z, ELF, PE/``MZ``,
   Mach-O, WebAssembly, SQLite, a UTF-16 byte order mark). Content beats the name: a PNG
   renamed ``notes.md`` is still a PNG.
2. A ``.pdf`` name without the magic is still handed to the PDF reader, whose "not a readable
   PDF" says more than "binary".
3. A binary heuristic on the first 8 KiB: any NUL byte, or more than 10% control characters
   (tab, newline, carriage return, form feed, vertical tab and ESC — ANSI colours in logs —
   are text). Bytes >= 0x80 are not counted: Latin-1 text is text with replaced characters,
   not a binary.
4. The extension (``.md`` → markdown, ``.jsonl`` → JSONL, ``.txt``/``.log``/``.rst``/code →
   text).
5. Content sniffing for other names: a first non-empty line that is a JSON object means JSONL;
   a first line that is an ATX heading, or two heading lines, means markdown.
6. Otherwise plain text.

A chat export (ChatGPT's or Claude.ai's ``conversations.json``) is recognised by content
before the extension is looked at (step 3½): a JSON array whose first conversation has the
service's fields (`chunk_export.sniff_export`). A ``.json`` file that is not one stays text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath
from typing import Final, NoReturn

from services.corpus.core.chunk_export import sniff_export
from services.runtime.errors import InvalidInput

SNIFF_BYTES: Final = 8 * 1024
_CONTROL_RATIO: Final = 0.10
_TEXT_CONTROLS: Final = frozenset(b"\t\n\r\f\v\x1b")
_HEADING_LINE = re.compile(rb"^ {0,3}#{1,6}[ \t]+\S", re.MULTILINE)


class FileKind(StrEnum):
    MARKDOWN = "markdown"
    JSONL = "jsonl"
    PDF = "pdf"
    TEXT = "text"
    CHAT_EXPORT = "chat-export"  # ChatGPT's or Claude.ai's conversations.json
    PNG = "png"
    JPEG = "jpeg"
    GIF = "gif"
    WEBP = "webp"
    ZIP = "zip"
    GZIP = "gzip"
    BZIP2 = "bzip2"
    XZ = "xz"
    SEVEN_ZIP = "7z"
    ELF = "elf"
    EXE = "exe"
    MACH_O = "mach-o"
    WASM = "wasm"
    SQLITE = "sqlite"
    UTF16 = "utf-16"
    UNKNOWN_BINARY = "unknown-binary"


_READABLE: Final = frozenset(
    {FileKind.MARKDOWN, FileKind.JSONL, FileKind.PDF, FileKind.TEXT, FileKind.CHAT_EXPORT}
)

_MAGIC: Final[tuple[tuple[bytes, FileKind], ...]] = (
    (b"\x89PNG\r\n\x1a\n", FileKind.PNG),
    (b"\xff\xd8\xff", FileKind.JPEG),
    (b"GIF87a", FileKind.GIF),
    (b"GIF89a", FileKind.GIF),
    (b"PK\x03\x04", FileKind.ZIP),
    (b"PK\x05\x06", FileKind.ZIP),
    (b"PK\x07\x08", FileKind.ZIP),
    (b"\x1f\x8b", FileKind.GZIP),
    (b"\xfd7zXZ\x00", FileKind.XZ),
    (b"7z\xbc\xaf\x27\x1c", FileKind.SEVEN_ZIP),
    (b"\x7fELF", FileKind.ELF),
    (b"\xfe\xed\xfa\xce", FileKind.MACH_O),
    (b"\xfe\xed\xfa\xcf", FileKind.MACH_O),
    (b"\xce\xfa\xed\xfe", FileKind.MACH_O),
    (b"\xcf\xfa\xed\xfe", FileKind.MACH_O),
    (b"\x00asm", FileKind.WASM),
    (b"SQLite format 3\x00", FileKind.SQLITE),
    (b"\xff\xfe", FileKind.UTF16),
    (b"\xfe\xff", FileKind.UTF16),
)

_EXTENSIONS: Final[dict[str, FileKind]] = {
    **dict.fromkeys((".md", ".markdown", ".mdown", ".mkd", ".mkdn", ".mdx"), FileKind.MARKDOWN),
    **dict.fromkeys((".jsonl", ".ndjson", ".jsonlines"), FileKind.JSONL),
    **dict.fromkeys(
        (
            ".txt", ".text", ".log", ".rst", ".org", ".adoc", ".asciidoc", ".tex", ".csv",
            ".tsv", ".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".xml",
            ".html", ".htm", ".py", ".js", ".ts", ".go", ".rs", ".java", ".c", ".h", ".cpp",
            ".hpp", ".rb", ".sh", ".sql", ".srt", ".vtt", ".eml",
        ),
        FileKind.TEXT,
    ),
}  # fmt: skip


@dataclass(frozen=True, slots=True)
class DetectedType:
    """The kind of a file and the evidence it was decided on."""

    kind: FileKind
    name: str
    reason: str  # magic, extension, binary-heuristic, content, default

    @property
    def is_binary(self) -> bool:
        """Whether no chunker reads this kind (the upload or ingest should be refused)."""
        return self.kind not in _READABLE

    @property
    def is_chat_export(self) -> bool:
        return self.kind is FileKind.CHAT_EXPORT

    def refuse_binary(self, name: str | None = None) -> NoReturn:
        """Raise the InvalidInput that tells the user what the file looks like."""
        if not self.is_binary:
            raise ValueError(f"{self.kind} is readable; refuse_binary is for binary kinds")
        raise InvalidInput(
            f"{name or self.name} looks like a {self.kind} file (binary); "
            "upload text, markdown, JSONL, PDF or a chat export",
            field="name",
        )


def _magic(head: bytes) -> FileKind | None:
    # The PDF header may follow up to 1 KiB of junk (PDF 1.7, annex H).
    if b"%PDF-" in head[:1024]:
        return FileKind.PDF
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if head.startswith(b"RIFF") and head[8:12] == b"WEBP":
        return FileKind.WEBP
    if re.match(rb"BZh[1-9]1AY&SY", head):
        return FileKind.BZIP2
    # "MZ" also starts ordinary words; a DOS header has NUL bytes right after it.
    if head.startswith(b"MZ") and b"\x00" in head[2:64]:
        return FileKind.EXE
    return None


def looks_binary(head: bytes) -> bool:
    """NUL bytes, or more than 10% control characters, in the first 8 KiB."""
    sample = head[:SNIFF_BYTES]
    if not sample:
        return False
    if b"\x00" in sample:
        return True
    controls = sum(1 for b in sample if (b < 0x20 and b not in _TEXT_CONTROLS) or b == 0x7F)
    return controls / len(sample) > _CONTROL_RATIO


def _first_line(head: bytes) -> tuple[bytes, bool]:
    """The first non-blank line (stripped) and whether it is complete within `head`."""
    body = head.removeprefix(b"\xef\xbb\xbf")
    start = 0
    while start < len(body):
        end = body.find(b"\n", start)
        line = body[start:] if end < 0 else body[start:end]
        if line.strip():
            return line.strip(), end >= 0
        if end < 0:
            break
        start = end + 1
    return b"", False


def _sniff(head: bytes) -> FileKind | None:
    line, complete = _first_line(head)
    if line.startswith(b"{"):
        if not complete:
            return FileKind.JSONL if line.startswith(b'{"') else None
        try:
            value = json.loads(line)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return FileKind.JSONL
    if _HEADING_LINE.match(line) or len(_HEADING_LINE.findall(head[:SNIFF_BYTES])) >= 2:
        return FileKind.MARKDOWN
    return None


def detect_type(name: str, head: bytes) -> DetectedType:
    """Decide a file's kind from its name and first bytes (see the module docstring)."""
    kind = _magic(head)
    if kind is not None:
        return DetectedType(kind, name, "magic")
    extension = PurePosixPath(name).suffix.lower()
    if extension == ".pdf":
        return DetectedType(FileKind.PDF, name, "extension")
    if looks_binary(head):
        return DetectedType(FileKind.UNKNOWN_BINARY, name, "binary-heuristic")
    if sniff_export(head) is not None:
        return DetectedType(FileKind.CHAT_EXPORT, name, "content")
    if extension in _EXTENSIONS:
        return DetectedType(_EXTENSIONS[extension], name, "extension")
    kind = _sniff(head)
    if kind is not None:
        return DetectedType(kind, name, "content")
    return DetectedType(FileKind.TEXT, name, "default")
