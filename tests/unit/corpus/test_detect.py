"""Type detection: magic first, then the binary heuristic, then the name, then the content."""

from __future__ import annotations

import pytest

from services.corpus.core import FileKind, detect_type
from services.runtime.errors import InvalidInput

from ._pdf import text_pdf


@pytest.mark.parametrize(
    ("head", "kind"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", FileKind.PNG),
        (b"\xff\xd8\xff\xe0\x00\x10JFIF", FileKind.JPEG),
        (b"GIF89a\x01\x00\x01\x00", FileKind.GIF),
        (b"PK\x03\x04\x14\x00\x06\x00", FileKind.ZIP),
        (b"\x1f\x8b\x08\x00\x00\x00\x00\x00", FileKind.GZIP),
        (b"\x7fELF\x02\x01\x01\x00", FileKind.ELF),
        (b"MZ\x90\x00\x03\x00\x00\x00\x04\x00", FileKind.EXE),
        (b"SQLite format 3\x00\x10\x00", FileKind.SQLITE),
        (b"BZh91AY&SY\x00", FileKind.BZIP2),
        (b"\xff\xfeh\x00i\x00", FileKind.UTF16),
    ],
)
def test_magic_bytes_beat_a_text_extension(head: bytes, kind: FileKind) -> None:
    detected = detect_type("innocent.md", head)
    assert detected.kind is kind
    assert detected.is_binary
    assert detected.reason == "magic"


def test_pdf_is_recognised_by_its_header() -> None:
    detected = detect_type("report.bin", text_pdf(["hello"]))
    assert detected.kind is FileKind.PDF
    assert not detected.is_binary


def test_a_pdf_name_without_the_header_still_goes_to_the_pdf_reader() -> None:
    assert detect_type("broken.pdf", b"\x00\x01garbage").kind is FileKind.PDF


def test_binary_refusal_names_the_file_and_its_type() -> None:
    detected = detect_type("photo.md", b"\x89PNG\r\n\x1a\n")
    with pytest.raises(InvalidInput) as caught:
        detected.refuse_binary()
    assert caught.value.message == (
        "photo.md looks like a png file (binary); "
        "upload text, markdown, JSONL, PDF or a chat export"
    )


def test_nul_bytes_or_many_controls_make_an_unknown_binary() -> None:
    assert detect_type("data.txt", b"abc\x00def").kind is FileKind.UNKNOWN_BINARY
    noisy = bytes(range(1, 32)) * 10 + b"text"
    assert detect_type("noise.log", noisy).kind is FileKind.UNKNOWN_BINARY


def test_text_with_ansi_colours_and_latin1_bytes_is_still_text() -> None:
    log = b"\x1b[32mOK\x1b[0m caf\xe9 ready\r\n" * 50
    assert detect_type("build.log", log).kind is FileKind.TEXT


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("notes.md", FileKind.MARKDOWN),
        ("notes.MARKDOWN", FileKind.MARKDOWN),
        ("events.jsonl", FileKind.JSONL),
        ("events.ndjson", FileKind.JSONL),
        ("readme.txt", FileKind.TEXT),
        ("server.log", FileKind.TEXT),
        ("index.rst", FileKind.TEXT),
    ],
)
def test_extension_decides_for_text(name: str, kind: FileKind) -> None:
    assert detect_type(name, b"plain words\n").kind is kind


def test_content_sniffing_without_a_known_extension() -> None:
    assert detect_type("export", b'\n{"role": "user", "content": "hi"}\n').kind is FileKind.JSONL
    assert detect_type("export", b'{"a": ' + b"1" * 9000).kind is FileKind.JSONL  # cut line
    assert detect_type("NOTES", b"# Title\n\nbody\n").kind is FileKind.MARKDOWN
    assert detect_type("script", b"#!/bin/sh\necho hi\n").kind is FileKind.TEXT
    assert detect_type("data", b'{\n  "pretty": true\n}\n').kind is FileKind.TEXT


def test_refuse_binary_on_a_readable_kind_is_a_programming_error() -> None:
    with pytest.raises(ValueError):
        detect_type("a.md", b"# hi").refuse_binary()
