"""JSONL by line, with arc bundling for dialog transcripts.

The first lines of a file (up to `SNIFF_LINES`) decide its shape, by the first line that is
recognisably a dialog record:

- Claude Code (``~/.claude/projects/*/<session>.jsonl``): records with ``type`` "user" or
  "assistant" and a ``message`` ``{role, content}``, plus ``sessionId``/``uuid``; also
  ``summary`` (with ``leafUuid``) and ``file-history-snapshot`` records. Content is a string
  or a list of blocks: ``text``, ``thinking``, ``tool_use``, ``tool_result``, ``image``.
- Codex CLI rollouts (``~/.codex/sessions/…/rollout-*.jsonl``): envelopes ``{timestamp,
  type: session_meta|response_item|event_msg|turn_context|compacted, payload}``, the turns
  being ``response_item`` payloads ``{type: message, role, content: [{type: input_text|
  output_text, text}]}``; and the older shape where those items are the lines themselves,
  after a ``{id, timestamp, instructions}`` header.
- Generic chat logs: ``{role, content}`` (content a string or OpenAI-style parts), or
  ``{speaker, text}``.

Anything else is plain JSONL (see `chunk_jsonl`).

A dialog becomes arcs (`_arcs.bundle_arcs`): a user turn, everything up to the next user turn
that follows an answer (the assistant reply, its tool calls and their results) in one chunk,
rendered
``"User: …\\nAssistant: …"``. Tool calls and results are summarised to a line each
(``[tool: Bash — pytest -q]``, ``[tool output: 12 lines]``) or, with ``tool_events="skip"``,
left out; either way they are counted. Thinking blocks, system and developer messages,
injected context (Codex's ``<environment_context>``, Claude Code's ``isMeta`` caveats and
slash-command echoes) and bookkeeping records are skipped and counted. Codex's
``event_msg`` copies of the turns are skipped: the ``response_item`` is the record.

An arc's byte and line ranges cover the records it was rendered from; `occurred_at` is its
first turn's time. An arc longer than `max_chunk_chars` is cut in parts that share the
ranges (``attributes["arc_part"] = "2/3"``). One transcript file is one session; its id, when
the transcript names one, is the result's `session_id`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from itertools import chain
from typing import Any, Final

from services.corpus.core._arcs import Place, ToolEvents, bundle_arcs
from services.corpus.core._dialog import Event, parse_record, sniff_record
from services.corpus.core._source import SourceLine, Verbatim, split_verbatim
from services.corpus.core.chunk_text import WindowPacker, verbatim_draft
from services.corpus.core.chunks import (
    DEFAULT_MAX_CHUNK_CHARS,
    DIALOG_CHUNKER,
    JSONL_CHUNKER,
    ORIGIN_CLAUDE_CODE,
    ORIGIN_CODEX,
    ORIGIN_DIALOG,
    ORIGIN_JSONL,
    ChunkDraft,
    ChunkReport,
)

SNIFF_LINES: Final = 64


class DialogFormat(StrEnum):
    CLAUDE_CODE = ORIGIN_CLAUDE_CODE
    CODEX = ORIGIN_CODEX
    CHAT = ORIGIN_DIALOG


@dataclass(frozen=True, slots=True)
class JsonlShape:
    """What the first lines said about a JSONL file."""

    dialog: DialogFormat | None = None
    session_id: str | None = None

    @property
    def origin_kind(self) -> str:
        return str(self.dialog) if self.dialog else ORIGIN_JSONL

    @property
    def version(self) -> str:
        return DIALOG_CHUNKER if self.dialog else JSONL_CHUNKER


def _parse(line: SourceLine) -> Any:
    """The JSON value of a line; raises ValueError when it is not JSON (or nests too deeply
    for the parser: a hostile line is a malformed one, not a crash)."""
    try:
        return json.loads(line.text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def sniff_jsonl(lines: Iterable[SourceLine]) -> tuple[JsonlShape, Iterator[SourceLine]]:
    """Read ahead up to `SNIFF_LINES` lines to decide the shape; the lines are given back."""
    source = iter(lines)
    seen: list[SourceLine] = []
    dialog: DialogFormat | None = None
    session_id: str | None = None
    for line in source:
        seen.append(line)
        if line.starts_line and not line.continues and not line.is_blank:
            try:
                record = _parse(line)
            except ValueError:
                record = None
            if isinstance(record, dict):
                kind, session = sniff_record(record)
                session_id = session_id or session
                if kind is not None and dialog is None:
                    dialog = DialogFormat(kind)
        if len(seen) >= SNIFF_LINES or (dialog is not None and session_id is not None):
            break
    return JsonlShape(dialog, session_id), chain(seen, source)


def _records(lines: Iterable[SourceLine], report: ChunkReport) -> Iterator[tuple[SourceLine, Any]]:
    """Every line with its JSON value; blank, oversized and malformed lines skipped."""
    skipping = False  # inside a line longer than the segment limit
    for line in lines:
        if skipping or line.continues:
            if not skipping:
                report.oversized_lines += 1
            skipping = line.continues
            continue
        if line.is_blank:
            continue
        try:
            record = _parse(line)
        except ValueError:
            report.malformed_lines += 1
            continue
        yield line, record


def chunk_dialog(
    lines: Iterable[SourceLine],
    *,
    dialog: DialogFormat,
    report: ChunkReport,
    max_chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS,
    tool_events: ToolEvents = "summarise",
    first_ordinal: int = 0,
) -> Iterator[ChunkDraft]:
    """Bundle a transcript's turns into arcs (see the module docstring), streaming."""
    speakers: list[str] = []  # named speakers of a chat log, in order of appearance

    def events() -> Iterator[tuple[Event, Place]]:
        for line, record in _records(lines, report):
            if not isinstance(record, dict):
                report.skipped_meta_lines += 1  # valid JSON, but no dialog record
                continue
            place = Place(line.byte_start, line.byte_end, line.number, line.number)
            for event in parse_record(dialog, record, report, speakers):
                yield event, place

    return bundle_arcs(
        events(),
        origin_kind=str(dialog),
        report=report,
        max_chunk_chars=max_chunk_chars,
        tool_events=tool_events,
        first_ordinal=first_ordinal,
    )


def chunk_jsonl(
    lines: Iterable[SourceLine],
    *,
    report: ChunkReport,
    max_chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS,
    first_ordinal: int = 0,
) -> Iterator[ChunkDraft]:
    """Plain JSONL: each record verbatim, short ones grouped.

    Records up to a quarter of `max_chunk_chars` share a chunk with their neighbours (tiny
    records would each cost an embedding and say little alone); a longer record is a chunk of
    its own, cut in parts only when it is longer than `max_chunk_chars`. A malformed line
    ends the group, so no chunk contains bytes that are not a record.
    """
    group_chars = max(16, max_chunk_chars // 4)
    packer = WindowPacker(group_chars)
    ordinal = first_ordinal
    previous_end: int | None = None

    def emit(window: Verbatim | None) -> Iterator[ChunkDraft]:
        nonlocal ordinal
        if window is not None:
            draft = verbatim_draft(window, ordinal=ordinal, origin_kind=ORIGIN_JSONL)
            if draft is not None:
                ordinal += 1
                yield draft

    for line, _record in _records(lines, report):
        if previous_end is not None and line.byte_start != previous_end:
            yield from emit(packer.finish())  # a skipped line lies in between
        previous_end = line.byte_end
        run = Verbatim.of_line(line)
        if len(line.text) <= group_chars:
            yield from emit(packer.add(run))
            continue
        yield from emit(packer.finish())
        for part in split_verbatim(run, max_chunk_chars):
            yield from emit(part)
    yield from emit(packer.finish())


def chunk_jsonl_file(
    lines: Iterable[SourceLine],
    *,
    report: ChunkReport,
    max_chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS,
    tool_events: ToolEvents = "summarise",
) -> tuple[JsonlShape, Iterator[ChunkDraft]]:
    """Sniff the shape, then chunk as a dialog or as plain JSONL."""
    shape, replay = sniff_jsonl(lines)
    if shape.dialog is None:
        return shape, chunk_jsonl(replay, report=report, max_chunk_chars=max_chunk_chars)
    return shape, chunk_dialog(
        replay,
        dialog=shape.dialog,
        report=report,
        max_chunk_chars=max_chunk_chars,
        tool_events=tool_events,
    )
