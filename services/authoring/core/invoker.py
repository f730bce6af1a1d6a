"""The invoker interface, what it is given, and the one parser of what it returns.

An invoker turns one raw session into proposed drawers. Every invoker (an LLM behind an
API, a CLI, or the offline extractive one) returns the model's raw text, and every text
goes through `parse_output`: the same path for all of them, so a provider cannot smuggle a
shape past the rules.

The schema, exactly::

    {"drawers": [{"content": str, "memory_type": str, "wing": str, "room": str,
                  "derived_from": [chunk id, ...],
                  "pin_status": str?, "topic": str?, "signature": str?, "confidence": 0..1?}]}

or the bare list. Decisions:

- Structure is all-or-nothing: text that is not JSON, a wrong top-level shape, an unknown
  or missing field, or a field of the wrong type raises `MalformedOutput` and the caller
  fails that session, writing nothing from it. A model that gets the shape wrong once is
  not trusted with the drawers that happened to parse.
- One wrapping Markdown code fence (```json … ```) is tolerated: it is how chat models
  habitually quote JSON, and removing it changes no content. So is the case of memory_type
  and pin_status ("Decision" reads as "decision"); nothing else is rewritten.
- Sense is per drawer: a proposal whose type is outside the mode's library, that repeats
  an earlier one, or that cites no chunk of the session is dropped and named in `problems`;
  the others go on to `validate_draft`, which has the last word.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final, NamedTuple, Protocol, runtime_checkable

from services.authoring.core._text import normalise_space
from services.authoring.core.rules import DraftInput, library_of
from services.runtime.errors import InvalidInput
from services.vocabulary import DEFAULT_MODE, PIN_ACTIVE, PIN_STATUSES


class MalformedOutput(InvalidInput):
    """The model's output is not the drawer schema; the session fails and nothing is written."""

    def __init__(self, message: str) -> None:
        super().__init__(f"model output is malformed: {message}", field="output")


class ComposeChunk(NamedTuple):
    """One raw chunk of the session, as the invoker sees it."""

    chunk_id: str
    speaker: str
    content: str
    occurred_at: datetime | None = None
    role: str = ""  # the first turn's role (user, assistant, …) when the speaker is a name


@dataclass(frozen=True, slots=True, kw_only=True)
class ComposeInput:
    """Everything an invoker gets for one session.

    `wings` and `rooms` are the store's existing ones, as a hint to reuse them (best first).
    `user_name` is how companion drawers name the user; "" means "the user".
    """

    session_id: str
    chunks: Sequence[ComposeChunk]
    prompt_text: str
    mode: str = DEFAULT_MODE
    wings: Sequence[str] = ()
    rooms: Sequence[str] = ()
    user_name: str = ""
    # Lines the caller adds to the rendered header ("Keep memory_type: decision" for a
    # consolidation's merge); none for a compose.
    header_lines: Sequence[str] = ()


@runtime_checkable
class Invoker(Protocol):
    """Composes drawers from one session; returns the model's raw text (expected JSON)."""

    name: str
    model: str

    async def compose(self, request: ComposeInput) -> str:
        """The raw text of the model's answer for `request`; `parse_output` reads it."""
        ...


def render_session(request: ComposeInput) -> str:
    """The session as an LLM invoker sends it after the prompt: hints, then the chunks.

    Each chunk is headed by its id, so the model can cite it in `derived_from`.
    """
    lines = [
        f"Deployment mode: {request.mode}",
        f"Existing wings: {', '.join(request.wings) or '(none yet)'}",
        f"Existing rooms: {', '.join(request.rooms) or '(none yet)'}",
    ]
    if request.user_name:
        lines.append(f"The user's name: {request.user_name}")
    lines.extend(request.header_lines)
    lines.append(f"Session: {request.session_id}")
    for chunk in request.chunks:
        when = f" at {chunk.occurred_at.isoformat()}" if chunk.occurred_at else ""
        speaker = f" ({chunk.speaker})" if chunk.speaker else ""
        lines.append(f"\n--- chunk {chunk.chunk_id}{speaker}{when}\n{chunk.content}")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True, kw_only=True)
class DraftProposal:
    """One drawer a model proposed, structurally sound but not yet validated."""

    content: str
    memory_type: str
    wing: str
    room: str
    derived_from: tuple[str, ...]
    pin_status: str = PIN_ACTIVE
    topic: str = ""
    signature: str | None = None
    confidence: float | None = None
    # Whose claim it is: the session's speaker label ("Maya", "coding-agent", "user"); ""
    # when the model did not say. Kept on the drawer as its `speaker` attribute.
    speaker: str = ""

    @property
    def signed(self) -> bool:
        """Whether this is a canonical claim (goes through add_drawer_signed's rules)."""
        return self.signature is not None

    def to_input(self, *, added_by: str = "") -> DraftInput:
        """The fields `validate_draft` checks."""
        return DraftInput(
            content=self.content,
            memory_type=self.memory_type,
            wing=self.wing,
            room=self.room,
            pin_status=self.pin_status,
            topic=self.topic,
            added_by=added_by,
        )

    def to_json(self) -> dict[str, object]:
        """The proposal in the output schema; optional fields only when set."""
        item: dict[str, object] = {
            "content": self.content,
            "memory_type": self.memory_type,
            "pin_status": self.pin_status,
            "wing": self.wing,
            "room": self.room,
        }
        if self.topic:
            item["topic"] = self.topic
        if self.signature is not None:
            item["signature"] = self.signature
        if self.confidence is not None:
            item["confidence"] = self.confidence
        if self.speaker:
            item["speaker"] = self.speaker
        item["derived_from"] = list(self.derived_from)
        return item


@dataclass(frozen=True, slots=True)
class ParsedDrafts:
    """The proposals that survived parsing, and why any others were dropped."""

    drafts: list[DraftProposal]
    problems: list[str]


_REQUIRED: Final = ("content", "memory_type", "wing", "room", "derived_from")
_OPTIONAL_TEXT: Final = ("pin_status", "topic", "signature", "speaker")
_KNOWN: Final = frozenset((*_REQUIRED, *_OPTIONAL_TEXT, "confidence"))
MAX_SPEAKER_CHARS: Final = 80
_FENCE: Final = re.compile(r"\A```[A-Za-z]*[ \t]*\n(?P<body>.*)\n```\s*\Z", re.DOTALL)


def _type_name(value: object) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), type(value).__name__)


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON number")


def _load(text: str) -> object:
    stripped = text.strip()
    if not stripped:
        raise MalformedOutput('it is empty; expected a JSON object {"drawers": [...]}')
    fenced = _FENCE.match(stripped)
    if fenced:
        stripped = fenced.group("body").strip()
    try:
        return json.loads(stripped, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise MalformedOutput(
            f"not JSON ({error.msg} at line {error.lineno} column {error.colno}); expected "
            'a JSON object {"drawers": [...]}'
        ) from None
    except ValueError as error:
        raise MalformedOutput(f"not JSON ({error})") from None


def _drawer_items(loaded: object) -> list[object]:
    if isinstance(loaded, list):
        return loaded
    if not isinstance(loaded, dict):
        raise MalformedOutput(
            f'the top level is {_type_name(loaded)}; expected an object {{"drawers": [...]}}'
        )
    extra = sorted(set(loaded) - {"drawers"})
    if extra or "drawers" not in loaded:
        raise MalformedOutput(
            f"the top-level object must have exactly the key 'drawers' (got {sorted(loaded)})"
        )
    items = loaded["drawers"]
    if not isinstance(items, list):
        raise MalformedOutput(f"'drawers' is {_type_name(items)}; expected a list")
    return items


def _proposal(index: int, item: object) -> DraftProposal:
    where = f"drawer #{index}"
    if not isinstance(item, dict):
        raise MalformedOutput(f"{where} is {_type_name(item)}; expected an object")
    unknown = sorted(set(item) - _KNOWN)
    if unknown:
        raise MalformedOutput(f"{where} has unknown fields {unknown}; allowed: {sorted(_KNOWN)}")
    missing = [name for name in _REQUIRED if name not in item]
    if missing:
        raise MalformedOutput(f"{where} lacks required fields {missing}")
    text: dict[str, str] = {}
    for name in ("content", "memory_type", "wing", "room"):
        value = item[name]
        if not isinstance(value, str):
            raise MalformedOutput(
                f"{where} field {name!r} is {_type_name(value)}; expected a string"
            )
        text[name] = value
    for name in _OPTIONAL_TEXT:
        value = item.get(name)
        if value is not None and not isinstance(value, str):
            raise MalformedOutput(
                f"{where} field {name!r} is {_type_name(value)}; expected a string or null"
            )
        text[name] = value or ""
    pin_status = text["pin_status"].strip().lower() or PIN_ACTIVE
    if pin_status not in PIN_STATUSES:
        raise MalformedOutput(
            f"{where} field 'pin_status' is {text['pin_status']!r}; expected one of "
            f"{', '.join(PIN_STATUSES)}"
        )
    derived = item["derived_from"]
    if not isinstance(derived, list) or not all(isinstance(c, str) and c for c in derived):
        raise MalformedOutput(
            f"{where} field 'derived_from' is {_type_name(derived)}; expected a list of "
            "chunk ids (non-empty strings)"
        )
    confidence = item.get("confidence")
    if confidence is not None:
        if isinstance(confidence, bool) or not isinstance(confidence, int | float):
            raise MalformedOutput(
                f"{where} field 'confidence' is {_type_name(confidence)}; expected a number"
            )
        if not 0.0 <= confidence <= 1.0:
            raise MalformedOutput(f"{where} field 'confidence' is {confidence}; expected 0..1")
    return DraftProposal(
        content=text["content"],
        memory_type=text["memory_type"].strip().lower(),
        wing=text["wing"].strip(),
        room=text["room"].strip(),
        derived_from=tuple(dict.fromkeys(derived)),
        pin_status=pin_status,
        topic=text["topic"].strip(),
        signature=text["signature"] if text["signature"].strip() else None,
        confidence=None if confidence is None else float(confidence),
        speaker=normalise_space(text["speaker"])[:MAX_SPEAKER_CHARS],
    )


def parse_output(text: str, *, mode: str, chunk_ids: Collection[str] | None = None) -> ParsedDrafts:
    """Read a model's output into proposals, or raise `MalformedOutput` for the session.

    With `chunk_ids` (the session's), citations of other chunks are dropped as invented.
    """
    library = library_of(mode)
    proposals = [_proposal(index, item) for index, item in enumerate(_drawer_items(_load(text)), 1)]
    drafts: list[DraftProposal] = []
    problems: list[str] = []
    first_seen: dict[str, int] = {}
    for index, proposal in enumerate(proposals, 1):
        where = f"drawer #{index}"
        if not library.has_type(proposal.memory_type):
            problems.append(
                f"{where}: memory_type {proposal.memory_type!r} is not in the {mode} library "
                f"({', '.join(library.types)}); dropped"
            )
            continue
        cited = proposal.derived_from
        if chunk_ids is not None:
            invented = [c for c in cited if c not in chunk_ids]
            if invented:
                problems.append(f"{where}: cites chunks not in the session {invented}; ignored")
                cited = tuple(c for c in cited if c in chunk_ids)
        if not cited:
            problems.append(
                f"{where}: cites no chunk of the session, so it cannot be walked back; dropped"
            )
            continue
        key = normalise_space(proposal.content)
        if key in first_seen:
            problems.append(f"{where}: repeats drawer #{first_seen[key]}; dropped")
            continue
        first_seen[key] = index
        drafts.append(replace(proposal, derived_from=cited))
    return ParsedDrafts(drafts=drafts, problems=problems)
