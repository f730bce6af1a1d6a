"""When a note was written, for its chunks' `occurred_at`: a Markdown note says it in its front
matter (``date:``, ``created:``), or its name does (a daily note, ``2025-03-03.md``).

Front matter is the YAML block a note may open with, between ``---`` lines; only a key's plain
scalar is read (``date: 2025-03-03``, ``created: "2025-03-03T09:30"``), never the YAML as a
whole. A date alone is that day's midnight UTC; a time without a zone is read as UTC. A note
with neither keeps no time (its chunks are undated, as before).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Final

from services.corpus.core.chunks import ChunkDraft

_FRONT_MATTER: Final = re.compile(
    r"\A(?:\ufeff)?---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL
)
_KEYS: Final = ("date", "created", "created_at", "creation_date")
_NAME_DATE: Final = re.compile(r"(?<!\d)(\d{4}-\d{2}-\d{2})(?!\d)")


def _moment(value: str) -> datetime | None:
    text = value.strip().strip("'\"").strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace(" ", "T", 1) if " " in text else text)
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def note_time(name: str, head: str) -> datetime | None:
    """The time a note gives itself: front matter first, then a date in its file name."""
    front = _FRONT_MATTER.match(head)
    if front is not None:
        fields: dict[str, str] = {}
        for line in front.group(1).splitlines():
            key, sep, value = line.partition(":")
            if sep and not line.startswith((" ", "\t", "-")):
                fields.setdefault(key.strip().lower(), value)
        for key in _KEYS:
            moment = _moment(fields.get(key, ""))
            if moment is not None:
                return moment
    named = _NAME_DATE.search(PurePosixPath(name).stem)
    return _moment(named.group(1)) if named else None


def with_note_time(chunks: Iterable[ChunkDraft], name: str) -> Iterator[ChunkDraft]:
    """The chunks of one note, each dated as the note dates itself (read from its first
    chunk, which holds the front matter)."""
    source = iter(chunks)
    first = next(source, None)
    if first is None:
        return
    when = note_time(name, first.content)
    if when is None:
        yield first
        yield from source
        return
    yield replace(first, occurred_at=when)
    for chunk in source:
        yield replace(chunk, occurred_at=chunk.occurred_at or when)
