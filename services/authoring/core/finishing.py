"""What every invoker's drafts go through after parsing, whoever wrote them: the offline
composer and a provider's model alike (issue 13: "provider invokers use the same prompts and
post-processing").

- A transcript's stage directions ("[shares a photo of a tent]", a bracket opening lower-case)
  are what the transcript shows, not what anyone said: they leave the content.
- A drawer that says "yesterday" or "this week" keeps the day it was said on: "(as of
  2026-02-11)" after the first sentence that says it, from the earliest chunk it cites.
- A draft whose model named no speaker takes the one speaker of the chunks it cites.

Pure and idempotent: a draft finished twice is the draft finished once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Final

from services.authoring.core._text import normalise_space, split_sentences
from services.authoring.core.invoker import (
    ComposeChunk,
    DraftProposal,
    ParsedDrafts,
    parse_output,
)

STAGE_DIRECTION: Final = re.compile(r"\[[a-z][^\[\]]*\][.!]?")
RELATIVE_TIME: Final = re.compile(
    r"\b(?:today|tonight|yesterday|tomorrow|this (?:morning|afternoon|evening|week|weekend))\b",
    re.IGNORECASE,
)
_ANCHORED: Final = re.compile(r"\(as of \d{4}-\d{2}-\d{2}\)")


def without_stage_directions(text: str) -> str:
    """`text` without the transcript's stage directions, its spaces collapsed."""
    return normalise_space(STAGE_DIRECTION.sub(" ", text))


def dated(clause: str, when: datetime | None) -> str:
    """A clause that says "yesterday" or "this week" keeps the day it was said on."""
    if when is not None and RELATIVE_TIME.search(clause):
        return f"{clause} (as of {when.date().isoformat()})"
    return clause


def _anchored(content: str, when: datetime) -> str:
    """`content` with its first sentence that says a relative time dated."""
    sentences = split_sentences(content)
    for index, sentence in enumerate(sentences):
        if RELATIVE_TIME.search(sentence):
            stop = sentence[-1] if sentence[-1] in ".!" else "."
            sentences[index] = dated(sentence.rstrip(" .!"), when) + stop
            return " ".join(sentences)
    return content


def finish_draft(draft: DraftProposal, chunks: Mapping[str, ComposeChunk]) -> DraftProposal:
    """`draft` as the composer writes it, given the session's chunks by id."""
    cited = [chunks[c] for c in draft.derived_from if c in chunks]
    content = without_stage_directions(draft.content) or draft.content
    if draft.signature and draft.signature not in content:
        content = draft.content  # the signature must stay verbatim in what is written
    days = [c.occurred_at for c in cited if c.occurred_at is not None]
    if days and not _ANCHORED.search(content):
        content = _anchored(content, min(days))
    speaker = draft.speaker
    if not speaker:
        speakers = {c.speaker for c in cited if c.speaker}
        speaker = speakers.pop() if len(speakers) == 1 else ""
    return replace(draft, content=content, speaker=speaker)


def finished_output(text: str, *, mode: str, chunks: Sequence[ComposeChunk]) -> ParsedDrafts:
    """An invoker's output for a session of `chunks`, parsed (`parse_output`) and finished."""
    parsed = parse_output(text, mode=mode, chunk_ids={c.chunk_id for c in chunks})
    by_id = {c.chunk_id: c for c in chunks}
    return ParsedDrafts([finish_draft(d, by_id) for d in parsed.drafts], parsed.problems)
