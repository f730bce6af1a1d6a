"""PDF by page: real text pages, long pages split, encrypted and corrupt files refused."""

from __future__ import annotations

import io

import pytest

from services.corpus.core import ChunkReport, chunk_pdf, pdf_text
from services.runtime.errors import InvalidInput

from ._pdf import encrypted, text_pdf

PAGES = [
    "Quarterly report\nRevenue grew 12% (in euros).",
    "Costs\nHosting stayed flat.",
    "Outlook\nWe expect growth to continue.",
]


def test_one_chunk_per_page_with_its_page_number() -> None:
    report = ChunkReport()
    chunks = list(chunk_pdf(io.BytesIO(text_pdf(PAGES)), name="q3.pdf", report=report))
    assert [c.page for c in chunks] == [1, 2, 3]
    assert [c.content for c in chunks] == PAGES
    assert all(c.origin_kind == "pdf" for c in chunks)
    assert all((c.byte_start, c.byte_end, c.line_start) == (0, 0, 0) for c in chunks)
    assert report.pages == 3


def test_a_long_page_is_split_with_offsets_into_the_page_text() -> None:
    long_page = "\n".join(f"Line {i} of a long page with some words." for i in range(60))
    chunks = list(
        chunk_pdf(
            io.BytesIO(text_pdf(["short", long_page])),
            name="long.pdf",
            report=ChunkReport(),
            max_chunk_chars=500,
        )
    )
    parts = [c for c in chunks if c.page == 2]
    assert len(parts) > 3
    assert all(len(c.content) <= 500 for c in parts)
    assert [c.attributes["page_part"] for c in parts] == [str(i) for i in range(1, len(parts) + 1)]
    page_text = pdf_text(io.BytesIO(text_pdf([long_page])), "one.pdf")
    for part in parts:
        start, end = int(part.attributes["char_start"]), int(part.attributes["char_end"])
        assert page_text[start:end] == part.content


def test_pages_without_text_are_counted_not_chunked() -> None:
    report = ChunkReport()
    chunks = list(chunk_pdf(io.BytesIO(text_pdf(["", "text"])), name="s.pdf", report=report))
    assert [c.page for c in chunks] == [2]
    assert report.pages_without_text == 1


def test_an_encrypted_pdf_fails_with_a_clear_message() -> None:
    data = encrypted(text_pdf(PAGES), user_password="secret")
    with pytest.raises(InvalidInput) as caught:
        chunk_pdf(io.BytesIO(data), name="locked.pdf", report=ChunkReport())
    assert caught.value.message == (
        "locked.pdf is encrypted; remove its password and upload it again"
    )


def test_a_pdf_encrypted_with_an_empty_user_password_opens() -> None:
    data = encrypted(text_pdf(PAGES), user_password="")
    chunks = list(chunk_pdf(io.BytesIO(data), name="owner-only.pdf", report=ChunkReport()))
    assert [c.content for c in chunks] == PAGES


@pytest.mark.parametrize(
    "data",
    [b"", b"%PDF-1.4\ngarbage", text_pdf(PAGES)[:200], text_pdf(PAGES)[:-80]],
    ids=["empty", "garbage", "head-only", "truncated"],
)
def test_a_corrupt_pdf_fails_that_file_with_the_reason(data: bytes) -> None:
    with pytest.raises(InvalidInput) as caught:
        list(chunk_pdf(io.BytesIO(data), name="broken.pdf", report=ChunkReport()))
    assert caught.value.message.startswith("broken.pdf is not a readable PDF: ")


def test_pdf_text_joins_pages_for_query_document() -> None:
    assert pdf_text(io.BytesIO(text_pdf(PAGES)), "q3.pdf") == "\n\n".join(PAGES)
