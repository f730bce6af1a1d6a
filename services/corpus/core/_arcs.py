"""Bundling a dialog's events into arcs: a user turn and everything that answers it.

An arc is a user turn, then everything up to the next user turn that follows an answer (the
assistant reply, its tool calls and their results), rendered ``"User: …\\nAssistant: …"``. It
is one chunk, cut in parts that share its anchor when longer than `max_chunk_chars`
(``attributes["arc_part"] = "2/3"``). Its byte and line ranges cover the places its events came
from: JSONL records for a transcript, a whole conversation for an export.

The transcript chunkers (`chunk_jsonl`) and the export chunkers (`chunk_export`) both feed
this; only the reading of their formats differs.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from services.corpus.core._dialog import Event, ToolEvent, Turn
from services.corpus.core._source import split_text
from services.corpus.core.chunks import DEFAULT_MAX_CHUNK_CHARS, ChunkDraft, ChunkReport

ToolEvents = Literal["summarise", "skip"]


@dataclass(frozen=True, slots=True)
class Place:
    """Where an event was read: a byte range and its 1-based, inclusive lines."""

    byte_start: int
    byte_end: int
    line_start: int
    line_end: int


@dataclass
class _Arc:
    rendered: list[str] = field(default_factory=list)  # one entry per turn or tool event
    participants: list[str] = field(default_factory=list)
    first: Place | None = None
    last: Place | None = None
    started: Turn | None = None
    ended: Turn | None = None
    answered: bool = False
    last_label: str = ""

    def add(self, event: Event, place: Place) -> None:
        self.first = self.first or place
        self.last = place
        if isinstance(event, ToolEvent):
            self.rendered.append(event.summary)
            self.last_label = ""
            return
        self.started = self.started or event
        self.ended = event
        self.answered = self.answered or event.side == "assistant"
        if event.label not in self.participants:
            self.participants.append(event.label)
        if event.label == self.last_label:
            self.rendered[-1] += "\n" + event.text  # a message split over records
        else:
            self.rendered.append(f"{event.label}: {event.text}")
        self.last_label = event.label


def _arc_drafts(
    arc: _Arc,
    *,
    index: int,
    ordinal: int,
    origin_kind: str,
    max_chunk_chars: int,
    attributes: dict[str, str],
    session_key: str,
) -> list[ChunkDraft]:
    if arc.started is None or arc.first is None or arc.last is None or arc.ended is None:
        return []  # tool chatter with no turn around it
    text = "\n".join(arc.rendered)
    ranges = split_text(text, max_chunk_chars)
    own = attributes | {"arc": str(index), "participants": ", ".join(arc.participants)}
    if arc.ended.occurred_at and arc.ended.occurred_at != arc.started.occurred_at:
        own["ended_at"] = arc.ended.occurred_at.isoformat()
    drafts: list[ChunkDraft] = []
    for part, (start, end) in enumerate(ranges, 1):
        content = text[start:end].strip()
        if not content:
            continue
        extra = {"arc_part": f"{part}/{len(ranges)}"} if len(ranges) > 1 else {}
        drafts.append(
            ChunkDraft(
                content=content,
                ordinal=ordinal + len(drafts),
                origin_kind=origin_kind,
                byte_start=arc.first.byte_start,
                byte_end=arc.last.byte_end,
                line_start=arc.first.line_start,
                line_end=arc.last.line_end,
                occurred_at=arc.started.occurred_at,
                attributes=own | extra,
                session_key=session_key,
            )
        )
    return drafts


def bundle_arcs(
    events: Iterable[tuple[Event, Place]],
    *,
    origin_kind: str,
    report: ChunkReport,
    max_chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS,
    tool_events: ToolEvents = "summarise",
    first_ordinal: int = 0,
    attributes: dict[str, str] | None = None,
    session_key: str = "",
) -> Iterator[ChunkDraft]:
    """The arcs of one dialog's events, streaming; counts arcs and tool events in `report`.

    `attributes` are added to every chunk (an export's conversation id and title, say), and
    `session_key` names the session the chunks belong to within their file.
    """
    shared = dict(attributes or {})
    arc = _Arc()
    ordinal = first_ordinal

    def close() -> Iterator[ChunkDraft]:
        nonlocal arc, ordinal
        drafts = _arc_drafts(
            arc,
            index=report.arcs,
            ordinal=ordinal,
            origin_kind=origin_kind,
            max_chunk_chars=max_chunk_chars,
            attributes=shared,
            session_key=session_key,
        )
        if drafts:
            report.arcs += 1
            ordinal += len(drafts)
        arc = _Arc()
        yield from drafts

    for event, place in events:
        if isinstance(event, ToolEvent):
            if tool_events == "skip":
                report.skipped_tool_events += 1
                continue
            report.tool_events += 1
        elif event.side == "user" and arc.answered:
            yield from close()
        arc.add(event, place)
    yield from close()
