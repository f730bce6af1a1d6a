"""LoCoMo (`shared/eval/locomo/locomo10.json`): long two-speaker conversations in dated
sessions, with QA pairs whose `evidence` names the dialog turns (`D<session>:<turn>`) that
hold the answer. Only retrieval is measured from it: no answer is generated or judged."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engram.v1 import corpus_pb2

from services.retrieval.pool.records import to_timestamp

# 1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop; 5 (adversarial) has no answer to find.
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_DIA_ID = re.compile(r"D(\d+):(\d+)")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


@dataclass(frozen=True)
class LocomoTurn:
    dia_id: str  # D<session>:<turn>
    speaker: str
    text: str

    def content(self) -> str:
        return self.text.strip()


@dataclass(frozen=True)
class LocomoSession:
    number: int
    occurred_at: datetime | None
    turns: tuple[LocomoTurn, ...]


@dataclass(frozen=True)
class LocomoQuestion:
    question: str
    category: int
    evidence: tuple[str, ...]  # normalised dialog ids, in the file's order

    @property
    def evidence_sessions(self) -> frozenset[int]:
        return frozenset(session_of(e) for e in self.evidence)


@dataclass(frozen=True)
class LocomoConversation:
    sample_id: str
    speakers: tuple[str, str]
    sessions: tuple[LocomoSession, ...]
    questions: tuple[LocomoQuestion, ...]  # categories 1-4 with evidence only
    skipped_questions: int  # category 5, or no usable evidence

    def session_id(self, number: int) -> str:
        return f"{self.sample_id}-s{number}"


def session_of(dia_id: str) -> int:
    """The session number of a dialog id ("D3:7" -> 3)."""
    match = _DIA_ID.fullmatch(dia_id)
    if not match:
        raise ValueError(f"{dia_id!r} is not a dialog id (D<session>:<turn>)")
    return int(match.group(1))


def parse_evidence(raw: list[Any]) -> tuple[str, ...]:
    """Dialog ids from the evidence list; some entries hold several ids or stray text
    ("D8:6; D9:17", "D:11:26"), so every well-formed id inside each entry is taken."""
    found: list[str] = []
    for entry in raw:
        for session, turn in _DIA_ID.findall(str(entry)):
            dia_id = f"D{int(session)}:{int(turn)}"
            if dia_id not in found:
                found.append(dia_id)
    return tuple(found)


def parse_date(text: str) -> datetime | None:
    """`"1:56 pm on 8 May, 2023"` as a UTC datetime; None when absent or unreadable."""
    try:
        return datetime.strptime(text.strip(), _DATE_FORMAT).replace(tzinfo=UTC)
    except (ValueError, AttributeError):
        return None


def _turn(raw: dict[str, Any]) -> LocomoTurn:
    text = str(raw.get("text", ""))
    caption = raw.get("blip_caption")
    if caption:  # the photo a speaker shared is part of what was said
        text = f"{text} [shares {caption}]"
    return LocomoTurn(dia_id=str(raw["dia_id"]), speaker=str(raw["speaker"]), text=text)


def _conversation(raw: dict[str, Any]) -> LocomoConversation:
    conversation = raw["conversation"]
    sessions = []
    for key, turns in conversation.items():
        match = _SESSION_KEY.match(key)
        if not match or not turns:
            continue
        number = int(match.group(1))
        sessions.append(
            LocomoSession(
                number=number,
                occurred_at=parse_date(conversation.get(f"{key}_date_time", "")),
                turns=tuple(_turn(t) for t in turns),
            )
        )
    sessions.sort(key=lambda s: s.number)
    known = {t.dia_id for s in sessions for t in s.turns}
    questions, skipped = [], 0
    for qa in raw.get("qa", []):
        category = int(qa.get("category", 0))
        evidence = tuple(e for e in parse_evidence(qa.get("evidence", [])) if e in known)
        if category not in CATEGORIES or not evidence:
            skipped += 1
            continue
        questions.append(LocomoQuestion(str(qa["question"]), category, evidence))
    return LocomoConversation(
        sample_id=str(raw["sample_id"]),
        speakers=(str(conversation["speaker_a"]), str(conversation["speaker_b"])),
        sessions=tuple(sessions),
        questions=tuple(questions),
        skipped_questions=skipped,
    )


def load_locomo(path: Path) -> list[LocomoConversation]:
    """Every conversation of a LoCoMo file."""
    return [_conversation(raw) for raw in json.loads(path.read_text(encoding="utf-8"))]


def session_request(
    conversation: LocomoConversation, session: LocomoSession
) -> corpus_pb2.AddRawSessionRequest:
    """One session as a raw session: one turn per chunk (no bundling), speaker and date kept,
    so chunk ordinal i is turn i of the session."""
    request = corpus_pb2.AddRawSessionRequest(
        session_id=conversation.session_id(session.number),
        origin_kind="dialog",
        bundle_turn_pairs=False,
        attributes={"dataset": "locomo", "sample_id": conversation.sample_id},
    )
    for turn in session.turns:
        raw = request.turns.add(role=turn.speaker, speaker=turn.speaker, content=turn.content())
        if session.occurred_at is not None:
            raw.occurred_at.CopyFrom(to_timestamp(session.occurred_at))
    return request
