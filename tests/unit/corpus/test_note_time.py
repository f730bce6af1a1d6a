"""A note's chunks carry the time the note gives itself: front matter, else a daily-note name."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta, timezone

import pytest

from services.corpus.core import chunk_file, detect_type
from services.corpus.core.note_time import note_time


@pytest.mark.parametrize(
    ("name", "head", "expected"),
    [
        (
            "idea.md",
            "---\ntags: [x]\ndate: 2025-03-03\n---\n# Idea\n",
            datetime(2025, 3, 3, tzinfo=UTC),
        ),
        (
            "idea.md",
            '---\ncreated: "2025-03-03 09:30"\n---\n',
            datetime(2025, 3, 3, 9, 30, tzinfo=UTC),
        ),
        (
            "idea.md",
            "---\ndate: 2025-03-03T09:30:00+02:00\ncreated: 2020-01-01\n---\n",
            datetime(2025, 3, 3, 9, 30, tzinfo=timezone(timedelta(hours=2))),
        ),
        ("2024-11-05.md", "# Tuesday\n", datetime(2024, 11, 5, tzinfo=UTC)),
        ("2024-11-05.md", "---\ndate: not a date\n---\n", datetime(2024, 11, 5, tzinfo=UTC)),
        ("idea.md", "# No front matter\n\ndate: 2025-01-01\n", None),
        ("idea.md", "---\nalias:\n  - date: 2025-01-01\n---\n", None),
        ("v20240105123.md", "text", None),
    ],
)
def test_note_time(name: str, head: str, expected: datetime | None) -> None:
    assert note_time(name, head) == expected


def test_every_chunk_of_a_dated_note_carries_its_time() -> None:
    body = (
        b"---\ndate: 2025-03-03\n---\n\n# Garden\n\nIntro.\n\n## Tomatoes\n\nStake them in May.\n"
    )
    result = chunk_file(detect_type("garden.md", body), io.BytesIO(body))
    chunks = list(result.chunks)
    assert len(chunks) >= 2
    assert {c.occurred_at for c in chunks} == {datetime(2025, 3, 3, tzinfo=UTC)}
    undated = b"# Garden\n\nIntro.\n"
    result = chunk_file(detect_type("garden.md", undated), io.BytesIO(undated))
    assert [c.occurred_at for c in result.chunks] == [None]
