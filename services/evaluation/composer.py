"""The composer set: sessions with the drawers a careful author would write, and how close an
invoker's drafts come (eval/sets/composer/, schema in eval/sets/README.md).

Each session is composed as the authoring tier composes a raw session: one chunk per turn,
named by the turn's speaker label and rendered as the corpus tier renders it ("label:
text"). A draft *covers* an expected drawer when it cites one of
the expected drawer's turns; each expected drawer is paired with the covering draft of the
best (same type, most shared words) fit, each draft used once. Figures:

- coverage: expected drawers covered by any draft (the extraction ceiling of the session);
  precision: drafts that cover some expected drawer (the rest are drawers nobody wanted).
- type accuracy: paired drafts with the expected type.
- canonical (decision and directive) precision and recall: a canonical draft counts when it
  cites a turn of an expected canonical drawer, and an expected canonical drawer is found
  when such a draft cites one of its turns.
- attribution: paired drafts whose content names the expected speaker first among the
  session's speakers (a label's words, "user" as the user's name or "the user", "assistant"
  as "the assistant"); `speaker_field`: paired drafts whose `speaker` field is the expected
  label (case-insensitive), for invokers that fill it.
- clean text: drafts with no speaker label glued in ("Maya: …"), no question, no first-person
  leftovers ("I", "my", "we"), no interjection or chat laughter, no verbless fragment
  reported as a clause ("noted that about 14 stops per shift"), at least five words, opening
  with a capital.
- signatures: canonical drafts whose signature is verbatim in a turn they cite.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from services.authoring.core import ComposeChunk, ComposeInput, DraftProposal, finished_output
from services.authoring.core.extractive import reads_as_fragment
from services.authoring.core.rules import CANONICAL_TYPES

Compose = Callable[[ComposeInput], Awaitable[str]]
# "mine" after a determiner is the noun ("the mine planner"), not the pronoun.
_FIRST_PERSON = re.compile(
    r"\b(?:I|I'm|I've|I'd|I'll|my|(?<!\bthe )(?<!\ba )(?<!\ban )(?<!\bthis )mine|we|we're|"
    r"we've|our|us)\b"
)
_WORDS = re.compile(r"[a-z0-9]+")
# A speaker's interjection carried into the claim: "Maya noted that okay the rollout …",
# "Sam mentioned that nah, Sam will …" (at the start of the draft or of a reported clause).
_LEFT_INTERJECTION = re.compile(
    r"(?:^|\bthat\s|[.!;]\s)(?:ok(?:ay)?|yeah|yep|nah|nope|oh|wait|um+|uh+|hmm+|lol|haha+|ugh|"
    r"tbh|ngl)\b"
    r"(?![-'’])",
    re.IGNORECASE,
)

# Chat laughter left anywhere in a claim ("… never owned a coat lol").
_LAUGHTER_LEFT = re.compile(r"\b(?:lol|lmao|rofl|haha+|hehe+)\b", re.IGNORECASE)
# A reported clause: what follows "noted that", "reported that", … must be a sentence.
_REPORTED_CLAUSE = re.compile(
    r"\b(?:noted|reported|mentioned|explained|reflected|recorded|said) that "
    r"(?P<clause>.+?)(?:[.;!](?:\s|$)|$)"
)


def _fragment_as_clause(text: str) -> bool:
    """Whether a reported clause in `text` is a verbless fragment ("… noted that about 14
    stops per shift")."""
    return any(
        reads_as_fragment(m["clause"][:1].upper() + m["clause"][1:])
        for m in _REPORTED_CLAUSE.finditer(text)
    )


@dataclass(frozen=True)
class ExpectedDrawer:
    type: str
    speaker: str
    turns: tuple[int, ...]
    signature: str | None
    content: str


@dataclass(frozen=True)
class ComposerSession:
    id: str
    mode: str
    date: str
    user_name: str
    turns: tuple[tuple[str, str], ...]  # (speaker label, text)
    expected: tuple[ExpectedDrawer, ...]

    def chunk_id(self, turn: int) -> str:
        return f"{self.id}:{turn}"

    def compose_input(self) -> ComposeInput:
        when = datetime.fromisoformat(self.date).replace(hour=12, tzinfo=UTC)
        return ComposeInput(
            session_id=self.id,
            chunks=[
                ComposeChunk(self.chunk_id(i), speaker, f"{speaker}: {text}", when)
                for i, (speaker, text) in enumerate(self.turns)
            ],
            prompt_text="",
            mode=self.mode,
            user_name=self.user_name,
        )


def load_composer_set(path: Path) -> list[ComposerSession]:
    """The sessions of one composer set file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    mode = data["mode"]
    sessions = []
    for s in data["sessions"]:
        sessions.append(
            ComposerSession(
                id=s["id"],
                mode=mode,
                date=s["date"],
                user_name=s.get("user_name", ""),
                turns=tuple((t["speaker"], t["text"]) for t in s["turns"]),
                expected=tuple(
                    ExpectedDrawer(
                        e["type"], e["speaker"], tuple(e["turns"]), e.get("signature"), e["content"]
                    )
                    for e in s["expected"]
                ),
            )
        )
    return sessions


def _words(text: str) -> set[str]:
    return set(_WORDS.findall(text.lower()))


def _turns_of(session: ComposerSession, draft: DraftProposal) -> set[int]:
    prefix = f"{session.id}:"
    return {int(c[len(prefix) :]) for c in draft.derived_from if c.startswith(prefix)}


_ROLE_NAMES = {"user": ("the user",), "human": ("the user",), "assistant": ("the assistant",),
               "ai": ("the assistant",)}  # fmt: skip


def named_first(content: str, session: ComposerSession) -> str | None:
    """The speaker label whose name appears first in `content` (None when none does)."""
    text = content.lower()
    best: tuple[int, str] | None = None
    for label in {s for s, _ in session.turns}:
        names = [
            " ".join(re.split(r"[_\s]+", label.lower())).strip(),
            label.lower().replace("_", "-"),
        ]
        names += _ROLE_NAMES.get(label.lower(), ())
        # the person the session is about, under a role label or a chat export's "me"
        if label.lower() in ("user", "human", "me") and session.user_name:
            names.append(session.user_name.lower())
        for name in names:
            found = re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text)
            if found and (best is None or found.start() < best[0]):
                best = (found.start(), label)
    return None if best is None else best[1]


def is_clean(draft: DraftProposal, speakers: Sequence[str]) -> bool:
    """No glued speaker label, no question, no first person, no interjection left in, ≥ 5
    words, a capital first."""
    text = draft.content
    glued = any(re.search(rf"(?:^|\s){re.escape(s)}:\s", text) for s in speakers if s)
    return (
        not glued
        and "?" not in text
        and _FIRST_PERSON.search(text) is None
        and _LEFT_INTERJECTION.search(text) is None
        and not _fragment_as_clause(text)
        and _LAUGHTER_LEFT.search(text) is None
        and len(text.split()) >= 5
        and text[:1].isupper()
    )


@dataclass
class _Tally:
    expected: int = 0
    covered: int = 0
    drafts: int = 0
    useful: int = 0
    paired: int = 0
    typed_right: int = 0
    attributed_right: int = 0
    speaker_field_right: int = 0
    canonical_expected: int = 0
    canonical_found: int = 0
    canonical_drafts: int = 0
    canonical_right: int = 0
    clean: int = 0
    signed: int = 0
    signature_verbatim: int = 0


def score_session(session: ComposerSession, drafts: Sequence[DraftProposal], tally: _Tally) -> None:
    """Add one session's figures to `tally`."""
    cited = [_turns_of(session, d) for d in drafts]
    speakers = sorted({s for s, _ in session.turns})
    tally.expected += len(session.expected)
    tally.drafts += len(drafts)
    for draft, turns in zip(drafts, cited, strict=True):
        tally.useful += any(turns & set(e.turns) for e in session.expected)
        tally.clean += is_clean(draft, speakers)
        if draft.memory_type in CANONICAL_TYPES:
            tally.canonical_drafts += 1
            tally.canonical_right += any(
                turns & set(e.turns) for e in session.expected if e.type in CANONICAL_TYPES
            )
        if draft.signature:
            tally.signed += 1
            tally.signature_verbatim += any(
                draft.signature in session.turns[t][1] for t in turns if t < len(session.turns)
            )
    used: set[int] = set()
    for expected in session.expected:
        covering = [i for i, turns in enumerate(cited) if turns & set(expected.turns)]
        tally.covered += bool(covering)
        if expected.type in CANONICAL_TYPES:
            tally.canonical_expected += 1
            tally.canonical_found += any(drafts[i].memory_type in CANONICAL_TYPES for i in covering)
        free = [i for i in covering if i not in used]
        if not free:
            continue
        want = _words(expected.content)

        def fit(i: int, want: set[str] = want, kind: str = expected.type) -> tuple[bool, float]:
            words = _words(drafts[i].content)
            overlap = len(words & want) / max(1, len(words | want))
            return drafts[i].memory_type == kind, overlap

        best = max(free, key=fit)
        used.add(best)
        tally.paired += 1
        tally.typed_right += drafts[best].memory_type == expected.type
        named = named_first(drafts[best].content, session)
        tally.attributed_right += (named or "").lower() == expected.speaker.lower()
        speaker = getattr(drafts[best], "speaker", "")
        tally.speaker_field_right += speaker.lower() == expected.speaker.lower()


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


async def run_composer_set(sessions: Sequence[ComposerSession], compose: Compose) -> dict[str, Any]:
    """Compose every session with `compose` (an invoker's) and score the drafts."""
    tally = _Tally()
    problems = 0
    for session in sessions:
        request = session.compose_input()
        parsed = finished_output(await compose(request), mode=session.mode, chunks=request.chunks)
        problems += len(parsed.problems)
        score_session(session, parsed.drafts, tally)
    return {
        "sessions": len(sessions),
        "expected_drawers": tally.expected,
        "drafts": tally.drafts,
        "coverage": _ratio(tally.covered, tally.expected),
        "precision": _ratio(tally.useful, tally.drafts),
        "type_accuracy": _ratio(tally.typed_right, tally.paired),
        "canonical_recall": _ratio(tally.canonical_found, tally.canonical_expected),
        "canonical_precision": _ratio(tally.canonical_right, tally.canonical_drafts),
        "attribution": _ratio(tally.attributed_right, tally.paired),
        "speaker_field": _ratio(tally.speaker_field_right, tally.paired),
        "clean_text": _ratio(tally.clean, tally.drafts),
        "signature_verbatim": _ratio(tally.signature_verbatim, tally.signed),
        "parse_problems": problems,
    }


COMPOSER_DIR = Path(__file__).resolve().parents[2] / "eval" / "sets" / "composer"


async def run_composer_sets(
    compose: Compose,
    invoker: str,
    files: Sequence[Path] = (),
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every composer set file (default: eval/sets/composer/*.json), composed and scored."""
    chosen = list(files) or sorted(COMPOSER_DIR.glob("*.json"))
    out: dict[str, Any] = {"invoker": invoker, "files": {}}
    for path in chosen:
        sessions = load_composer_set(path)
        if progress is not None:
            progress(f"composer {path.stem}: {len(sessions)} sessions")
        out["files"][path.stem] = await run_composer_set(sessions, compose)
    return out
