"""File names and folder paths of the corpus catalog, validated.

Names and folders are catalog entries, never filesystem paths: bodies are stored under their
content hash, so nothing here is ever joined onto a directory. They are still held to the
rules of a portable filesystem, because operators export and reorganise the corpus, and a
name that is hostile on disk (``..``, ``/etc/passwd``, a control character, a right-to-left
override that disguises an extension) is hostile in a listing too.

Rules, checked on the NFC form (so "é" typed two ways is one name):

- a file name is one segment; a folder path is segments joined by "/", "" being the root;
  one trailing "/" is dropped ("notes/" is "notes"), a leading one is refused (absolute);
- a segment is not empty, ".", or ".."; has no "/" or "\\" and no control, line-separator,
  surrogate or bidirectional-override character; does not start with a space or end with a
  space or a dot (Windows drops those silently, so two names would collide); is not a
  Windows device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with or without an extension);
- at most 255 UTF-8 bytes a segment and 1,024 a path (the usual filesystem limits).
"""

from __future__ import annotations

import unicodedata
from typing import Final

from services.runtime.errors import InvalidInput

MAX_SEGMENT_BYTES: Final = 255
MAX_PATH_BYTES: Final = 1024
_SHOWN_CHARS: Final = 60

# Categories never allowed: controls (Cc), surrogates (Cs), line and paragraph separators.
_FORBIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cs", "Zl", "Zp"})
# Bidirectional embeddings, overrides and isolates: they reorder how a name is displayed
# ("invoice\u202efdp.exe" shows as "invoiceexe.pdf").
_BIDI_CONTROLS: Final = frozenset(
    "\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
_WINDOWS_DEVICES: Final = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{i}" for i in range(1, 10)}
    | {f"lpt{i}" for i in range(1, 10)}
)


def _shown(value: str) -> str:
    """The value as it can be safely quoted in a message (escaped, shortened)."""
    text = value if len(value) <= _SHOWN_CHARS else value[:_SHOWN_CHARS] + "…"
    return ascii(text) if any(not c.isprintable() for c in text) else repr(text)


def _check_segment(segment: str, *, what: str, whole: str, field: str) -> None:
    def refuse(problem: str) -> InvalidInput:
        return InvalidInput(f"{what} {_shown(whole)} {problem}", field=field)

    if not whole:
        raise refuse("is empty")
    if not segment:
        raise refuse("has an empty part (two slashes in a row)")
    if segment in (".", ".."):
        raise refuse(f"has a {segment!r} part; '.' and '..' are not names in the catalog")
    if "\\" in segment:
        raise refuse("contains a backslash; use '/' between folders")
    for char in segment:
        if unicodedata.category(char) in _FORBIDDEN_CATEGORIES or char in _BIDI_CONTROLS:
            raise refuse(f"contains the control character U+{ord(char):04X}")
    if segment[0] == " " or segment[-1] in " .":
        raise refuse("starts with a space or ends with a space or a dot")
    if segment.split(".", 1)[0].rstrip(" ").lower() in _WINDOWS_DEVICES:
        raise refuse("is a reserved device name on Windows; rename it")
    if len(segment.encode("utf-8")) > MAX_SEGMENT_BYTES:
        raise refuse(f"has a part longer than {MAX_SEGMENT_BYTES} bytes; shorten it")


def validate_file_name(name: str) -> str:
    """The NFC form of a valid file name (one segment); InvalidInput naming the problem."""
    normal = unicodedata.normalize("NFC", name)
    if "/" in normal:
        raise InvalidInput(
            f"file name {_shown(normal)} contains '/'; put the file in a folder instead",
            field="name",
        )
    _check_segment(normal, what="file name", whole=normal, field="name")
    return normal


def validate_folder_path(path: str) -> str:
    """The NFC form of a valid folder path ("" is the root); InvalidInput naming the problem."""
    normal = unicodedata.normalize("NFC", path)
    if normal == "":
        return ""
    if normal.startswith("/"):
        raise InvalidInput(
            f"folder {_shown(normal)} is absolute; catalog folders are relative ('notes/2026')",
            field="folder",
        )
    if normal.endswith("/"):
        normal = normal[:-1]
    if len(normal.encode("utf-8")) > MAX_PATH_BYTES:
        raise InvalidInput(
            f"folder {_shown(normal)} is longer than {MAX_PATH_BYTES} bytes; shorten it",
            field="folder",
        )
    for segment in normal.split("/"):
        _check_segment(segment, what="folder", whole=normal, field="folder")
    return normal
