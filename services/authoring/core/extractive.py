"""The offline extractive invoker: cue language in, framed third-person drawers out.

Deterministic and without a network, it is the default when no provider is configured and
what the tests compose with. It returns JSON text in the output schema, so its drafts take
the same `parse_output` → `validate_draft` path as a model's.

How a session becomes drawers:

1. Turns: a chunk's lines that start ``Label:`` (User, Assistant, The_Architect, Kyle) open
   a turn of that speaker; text before any label is the chunk's own speaker's. System and
   tool lines are skipped. In companion mode only the user's turns are read: the drawers are
   what the companion remembers about its user, never what it said itself.
2. Sentences: questions, greetings and filler, tentative proposals ("maybe we could …") and
   sentences under five words are skipped; discourse lead-ins ("OK, so") are dropped.
3. Type, by the first cue that matches. Default mode: an imperative ("Always …", "Never …",
   "Don't …") is a directive, then decision cues ("we decided", "let's go with", "we'll
   use", "agreed to"), "must" (directive), retrospective, spike, implementation ("fixed",
   "added"), bug ("crash", "fails", "error"); a plain statement is an observation unless it
   addresses "you". Companion mode: want, preference, opinion, observation, cued only.
4. Framing, third person: a sentence led by "I"/"my" is rewritten with the speaker as
   subject ("I prefer tea" → "Kyle prefers tea"); a decision cue takes the speaker as the
   decider ("we'll use Redis" → "The Architect decided to use Redis"); an imperative becomes
   "X directed that the team …"; anything else is reported ("X noted that …"). Remaining
   first-person words become the speaker, and "we" the team (companion: "Kyle and company").
   Relative times ("today") get the chunk's date; a want gets the seed's forward intent
   ("Worth asking about it later …").
5. Decisions and directives are canonical: they get a signature, the longest 3–8 word phrase
   of the original sentence found verbatim in the framed content, else of the framed clause.
6. Placement: one room for the session (`choose_room`), pin_status active, no topic (a cue
   matcher has no honest way to name one), the sentence's chunk in derived_from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final

from services.authoring.core._text import (
    choose_signature,
    lower_first,
    normalise_space,
    split_sentences,
    third_person,
)
from services.authoring.core.invoker import ComposeChunk, ComposeInput, DraftProposal
from services.authoring.core.rules import DEFAULT_DRAFT_RULES, DraftRules, room_problem, slugify
from services.retrieval.core.constants import COMPANION_MODE, MODES, PIN_ACTIVE
from services.retrieval.core.library import library_for
from services.runtime.errors import InvalidInput

EXTRACTIVE_NAME: Final = "extractive"
EXTRACTIVE_MODEL: Final = "extractive-v1"  # bump when the rules below change what is emitted

CANONICAL_TYPES: Final = frozenset({"decision", "directive"})
_MIN_WORDS: Final = 5

_USER_ROLES: Final = frozenset({"user", "human", "customer"})
_ASSISTANT_ROLES: Final = frozenset({"assistant", "ai", "bot", "model", "agent", "chatbot", "gpt"})
_SKIPPED_ROLES: Final = frozenset({"system", "developer", "tool", "function"})
# Capitalised words that head a line like a speaker but are prose ("Note: …").
_PROSE_LABELS: Final = frozenset(
    {"note", "notes", "update", "edit", "warning", "error", "todo", "summary", "question",
     "answer", "decision", "example", "bug", "fix", "status", "result", "output", "input",
     "context", "caveat", "tip", "important", "re", "subject", "ps"}
)  # fmt: skip
# A speaker label: a role or a name of up to four capitalised words ("Kyle Smith:").
_LABEL: Final = re.compile(
    r"^\s*(?P<label>[A-Za-z][A-Za-z0-9_]{0,40}(?: [A-Z][A-Za-z0-9_]{0,40}){0,3})"
    r"\s*:\s+(?P<text>.*)$"
)

_I = r"(?:I|i)"
_CUE = re.IGNORECASE
# Lead-ins dropped from a sentence's start: some only with a comma ("Right, …" but "Right now"),
# and prose labels ("Note: …").
_LEAD_IN: Final = re.compile(
    r"^(?:(?:(?:ok(?:ay)?|well|yes|yeah|yep|right|alright|sure|great|cool|oh|hmm+|um+|uh+|"
    r"look)\s*[,!]|(?:note|update|edit|fyi|ps|tip|important)\s*:|so|and|but|also|plus|"
    r"honestly|actually|basically|anyway)[,!]?\s+)+",
    _CUE,
)
_FILLER: Final = re.compile(
    r"^(?:thanks|thank you|hi|hello|hey|(?:good )?(?:morning|afternoon|evening)|welcome|bye|"
    r"cheers|see you|good (?:point|idea|call)|"
    r"sounds good|got it|no problem|no worries|makes sense|let me|let's see|here(?:'s| is| are)|"
    rf"{_I}'ll (?:take a look|check|look|get)|{_I} can (?:help|do|take|look|check)|happy to|"
    r"you're welcome|nice|perfect|awesome|great|cool|sure)\b",
    _CUE,
)
_TENTATIVE: Final = re.compile(
    rf"^(?:maybe|perhaps|possibly|what if|how about|{_I} wonder|{_I} guess|{_I} suppose|"
    r"we (?:should|could|might))\b",
    _CUE,
)
_SECOND_PERSON: Final = re.compile(r"\b(?:you|your|you're|yours)\b", _CUE)
_IMPERATIVE: Final = re.compile(
    r"^(?:please\s+)?(?P<cue>always|never|do not|don't|make sure to|be sure to)\s+(?P<rest>.+)$",
    _CUE,
)
_RELATIVE_TIME: Final = re.compile(
    r"\b(?:today|tonight|yesterday|tomorrow|this (?:morning|afternoon|evening|week|weekend))\b",
    _CUE,
)


def _cues(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), _CUE)


# Decision cues spoken by the decider; (pattern, verb): the speaker becomes the subject.
_DECISION_FRAMES: Final = (
    (re.compile(rf"\b(?:we|{_I})(?:\s+have|'ve|’ve)?\s+decided\b[,:]?\s*", _CUE), "decided"),
    (re.compile(rf"\b(?:we|{_I})(?:\s+have|'ve|’ve)?\s+agreed\b[,:]?\s*", _CUE), "agreed"),
    (re.compile(r"\blet(?:'s|’s|\s+us)\s+go\s+with\s+", _CUE), "decided to go with"),
    (re.compile(r"\bwe(?:'re|’re|\s+are)\s+going\s+with\s+", _CUE), "decided to go with"),
    (
        re.compile(
            r"\bwe(?:'ll|’ll|\s+will)\s+(?P<verb>use|adopt|keep|switch\s+to|move\s+to|go\s+with)\s+",
            _CUE,
        ),
        "decided to {verb}",
    ),
    (re.compile(r"^decision:\s*", _CUE), "decided"),
)
_DECISION: Final = _cues(
    *(frame.pattern for frame, _ in _DECISION_FRAMES), r"\bagreed to\b", r"\bthe decision is\b"
)
_MUST: Final = _cues(r"\bmust(?:\s+not|n't)?\b(?!\s+(?:be\s+(?:why|the|a|an|because)|have\s+been))")
_DEFAULT_CUES: Final = (
    ("retrospective", _cues(r"\bin hindsight\b", r"\blooking back\b", r"\blessons? learned\b",
                            r"\bwent (?:well|wrong)\b", r"\bshould have\b")),
    ("spike", _cues(r"\bspiked?\b", r"\bprototyped?\b", r"\bexperiment(?:ed|ing)?\b",
                    r"\btried out\b", r"\bbenchmark(?:ed)?\b", r"\bproof of concept\b")),
    ("implementation", _cues(r"\b(?:implemented|added|changed|fixed|refactored|merged|shipped|"
                             r"wired|replaced|rewrote|renamed|removed|migrated|landed)\b")),
    ("bug", _cues(r"\bbugs?\b", r"\bcrash(?:es|ed|ing)?\b", r"\bfail(?:s|ed|ing)?\b",
                  r"\bbroken\b", r"\berrors?\b", r"\bexception\b", r"\bregression\b",
                  r"\bstack ?trace\b", r"\btraceback\b", r"\btimes? out\b")),
)  # fmt: skip
_COMPANION_CUES: Final = (
    ("want", _cues(rf"\b(?:{_I}|we)\s+(?:really\s+|also\s+|still\s+)?(?:want|need)\b",
                   rf"\b{_I}(?:'d|’d|\s+would)\s+(?:really\s+)?(?:like|love)\s+to\b",
                   r"\b(?:planning|hoping)\s+to\b", rf"\b{_I}(?:'m|’m|\s+am)\s+going\s+to\b",
                   r"\bcan't wait to\b")),
    ("preference", _cues(rf"\b{_I}\s+(?:really\s+|also\s+|still\s+|just\s+)?(?:prefer|like|love|"
                         r"hate|dislike|enjoy|adore)\b", r"\bcan(?:'t|’t|not)\s+stand\b",
                         r"\bfavou?rite\b", r"\bnot a fan of\b", r"\bbig fan of\b")),
    ("opinion", _cues(rf"\b{_I}\s+(?:really\s+|honestly\s+)?(?:think|believe|reckon|feel\s+like|"
                      r"feel\s+that)\b", r"\bin my (?:opinion|view)\b", r"\bnot worth\b",
                      r"\boverrated\b", r"\bwaste of\b")),
    ("observation", _cues(rf"\b{_I}(?:'m|’m|\s+am|\s+was|'ve been|\s+have been)\b",
                          _RELATIVE_TIME.pattern, r"\bfe(?:el|eling|els|lt)\b",
                          r"\b(?:tired|exhausted|stressed|sick|busy|anxious|sore)\b", r"\bmy\b")),
)  # fmt: skip
_REPORT_VERB: Final = {
    "decision": "recorded that",
    "directive": "directed that",
    "bug": "reported that",
    "implementation": "reported that",
    "spike": "reported that",
    "retrospective": "reflected that",
    "observation": "noted that",
}
_COMPANION_REPORT_VERB: Final = "mentioned that"


@dataclass(frozen=True, slots=True)
class _Speaker:
    """Who a sentence is attributed to, and how the team ("we") is named alongside."""

    name: str  # mid-sentence form: "The Architect", "Kyle", "the user"
    group: str  # what "we" becomes: "the team", or "Kyle and company"
    group_singular: bool  # "the team uses" vs "Kyle and company use"
    listener: str  # what "you" becomes: whoever the speaker addresses
    is_user: bool


@dataclass(frozen=True, slots=True)
class _Turn:
    chunk_id: str
    speaker: _Speaker
    text: str
    occurred_at: datetime | None


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


class _Cast:
    """Maps speaker labels to subjects for one session (stable within the session)."""

    def __init__(self, request: ComposeInput) -> None:
        self._companion = request.mode == COMPANION_MODE
        self._user = normalise_space(request.user_name.replace("_", " "))
        self._first_named: str | None = None

    def speaker(self, label: str) -> _Speaker | None:
        """The subject for `label`, or None when the turn is not read at all."""
        role = label.strip().lower()
        if role in _SKIPPED_ROLES:
            return None
        display = normalise_space(label.replace("_", " "))
        if role in _USER_ROLES or (not role and self._companion):
            return self._make(self._user or "the user", is_user=True, listener="the assistant")
        if role in _ASSISTANT_ROLES:
            return self._make("the assistant", is_user=False, listener=self._user or "the user")
        if not role:
            return self._make("the team", is_user=False)
        if display.islower():
            display = display.title()
        if self._first_named is None:
            self._first_named = display
        if self._user:
            is_user = display.lower() == self._user.lower()
        else:
            # With named speakers and no name given, whoever speaks first is the user: the
            # convention the corpus tier uses when it bundles named dialogs into arcs.
            is_user = display == self._first_named
        return self._make(display, is_user=is_user)

    def _make(self, name: str, *, is_user: bool, listener: str = "the team") -> _Speaker:
        if self._companion:
            # A companion's user talks to the companion; "we" is the user and their people.
            return _Speaker(name, f"{name} and company", False, "the companion", is_user)
        return _Speaker(name, "the team", True, listener, is_user)


def _turns(chunk: ComposeChunk, cast: _Cast) -> Iterator[_Turn]:
    label = chunk.speaker
    lines: list[str] = []

    def flush() -> Iterator[_Turn]:
        speaker = cast.speaker(label)
        text = "\n".join(lines).strip()
        if speaker is not None and text:
            yield _Turn(chunk.chunk_id, speaker, text, chunk.occurred_at)

    for line in chunk.content.splitlines():
        if line.lstrip().startswith("[tool"):
            continue
        match = _LABEL.match(line)
        role = match.group("label").lower() if match else ""
        if match is not None and (
            role in _USER_ROLES | _ASSISTANT_ROLES | _SKIPPED_ROLES
            or (match.group("label")[0].isupper() and role not in _PROSE_LABELS)
        ):
            yield from flush()
            label, lines = match.group("label"), [match.group("text")]
        else:
            lines.append(line)
    yield from flush()


# ---------------------------------------------------------------- sentences, types, framing

_CODE: Final = re.compile(r"```|^\s*(?:\$ |>>>|#!)|[{};]\s*$|\w\(.*\)")
_FIRST_PERSON_LEAD: Final = re.compile(r"^(?:i|i['’](?:m|ve|d|ll)|my|me)\b", _CUE)
_WANT_FOLLOW_UP: Final = " Worth asking about it later if they don't bring it up."


def _clean(raw: str) -> str | None:
    """The sentence without lead-ins, or None when it is not worth a drawer."""
    sentence = raw.strip()
    if sentence.endswith("?") or _CODE.search(sentence):
        return None
    sentence = _LEAD_IN.sub("", sentence).strip()
    if not sentence or _FILLER.match(sentence):
        return None
    if len(re.findall(r"\w+", sentence)) < _MIN_WORDS:
        return None
    return sentence


def _classify(sentence: str, *, companion: bool) -> str | None:
    """The memory type the cue language claims, or None when the sentence is not kept."""
    if companion:
        return next((kind for kind, cue in _COMPANION_CUES if cue.search(sentence)), None)
    if _TENTATIVE.match(sentence):
        return None  # discussion, not a claim: decisions over discussion
    if _IMPERATIVE.match(sentence):
        return "directive"
    if _DECISION.search(sentence):
        return "decision"
    if _MUST.search(sentence):
        return "directive"
    kind = next((kind for kind, cue in _DEFAULT_CUES if cue.search(sentence)), None)
    if kind is None and not _SECOND_PERSON.search(sentence):
        kind = "observation"  # a plain statement; one addressed to "you" is conversation
    return kind


_COMPLEMENT: Final = re.compile(r"(?:that|to|on|against|upon|with)\b", _CUE)


def _decision_frame(sentence: str) -> tuple[str, str, str] | None:
    """(text before the cue, verb, clause) when the speaker is the decider, else None."""
    for pattern, verb in _DECISION_FRAMES:
        match = pattern.search(sentence)
        if match is None:
            continue
        before = sentence[: match.start()].rstrip()
        if before and not before.endswith(","):
            return None  # "After the outage we decided …": not safely re-attributable
        rest = lower_first(sentence[match.end() :])
        if "{verb}" in verb:
            verb = verb.format(verb=normalise_space(match.group("verb")))
        elif verb in ("decided", "agreed") and not _COMPLEMENT.match(rest):
            verb += " that"  # "decided the API …" reads as "decided that the API …"
        return before, verb, rest
    return None


def _imperative_clause(sentence: str, speaker: _Speaker) -> str | None:
    match = _IMPERATIVE.match(sentence)
    if match is None:
        return None
    cue = match.group("cue").lower()
    modifier = {"always": " always", "never": " never", "do not": " not", "don't": " not"}
    return f"{speaker.group}{modifier.get(cue, '')} {match.group('rest')}"


def _frame(
    sentence: str, memory_type: str, speaker: _Speaker, *, companion: bool, when: datetime | None
) -> tuple[str, str]:
    """(framed content, its clause after the attribution) for one kept sentence."""

    def rewrite(text: str, *, named: bool = True) -> str:
        return third_person(
            text,
            name=speaker.name,
            group=speaker.group,
            group_singular=speaker.group_singular,
            listener=speaker.listener,
            named=named,
        )

    decision = _decision_frame(sentence) if memory_type == "decision" else None
    imperative = _imperative_clause(sentence, speaker) if memory_type == "directive" else None
    if decision is not None:
        before, verb, rest = decision
        lead = f"{rewrite(before, named=False)} {speaker.name} {verb}".strip()
        clause = rewrite(rest)
    elif imperative is not None:
        lead, clause = f"{speaker.name} directed that", rewrite(imperative)
    elif _FIRST_PERSON_LEAD.match(sentence):
        lead, clause = "", rewrite(sentence, named=False)
    else:
        verb = _COMPANION_REPORT_VERB if companion else _REPORT_VERB[memory_type]
        lead, clause = f"{speaker.name} {verb}", rewrite(lower_first(sentence))
    clause = clause.rstrip(" .!;:,")
    if when is not None and _RELATIVE_TIME.search(clause):
        clause += f" (as of {when.date().isoformat()})"
    content = _cap(f"{lead} {clause}".strip()) + "."
    if memory_type == "want":
        content += _WANT_FOLLOW_UP
    return content, clause


# ---------------------------------------------------------------- placement


def choose_room(request: ComposeInput) -> str:
    """The room drafts go to: the hinted room whose name the session mentions most, else a
    stable per-mode room (rooms are identities, never one per session)."""
    rooms = [room for room in request.rooms if room_problem(room) is None]
    if rooms:
        said = set(re.findall(r"[a-z0-9]+", " ".join(c.content for c in request.chunks).lower()))

        def mentions(room: str) -> int:
            parts = re.split(r"[-_.]", room.partition("/")[2])
            return sum(1 for part in parts if part in said)

        return max(rooms, key=mentions)  # max keeps the first of equals: the caller's order
    if request.mode == COMPANION_MODE:
        wing, name = "people", slugify(request.user_name) or "user"
    else:
        wing, name = "projects", "shared"
    wings = [w for w in request.wings if room_problem(f"{w}/{name}") is None]
    if wings and wing not in wings:
        wing = wings[0]
    return f"{wing}/{name}"


# ---------------------------------------------------------------- the invoker


def _claims(request: ComposeInput) -> Iterator[tuple[_Turn, str, str]]:
    """(turn, cleaned sentence, memory type) for every sentence worth a drawer, in order."""
    companion = request.mode == COMPANION_MODE
    cast = _Cast(request)
    for chunk in request.chunks:
        for turn in _turns(chunk, cast):
            if companion and not turn.speaker.is_user:
                continue
            for raw in split_sentences(turn.text):
                sentence = _clean(raw)
                kind = None if sentence is None else _classify(sentence, companion=companion)
                if sentence is not None and kind is not None:
                    yield turn, sentence, kind


def extract_drafts(
    request: ComposeInput, *, rules: DraftRules = DEFAULT_DRAFT_RULES
) -> list[DraftProposal]:
    """The drafts the extractive rules find in one session, in the order they were said."""
    try:
        library = library_for(request.mode)
    except ValueError:
        raise InvalidInput(
            f"unknown deployment mode {request.mode!r}: expected {' or '.join(MODES)}",
            field="mode",
        ) from None
    companion = request.mode == COMPANION_MODE
    room = choose_room(request)
    drafts: list[DraftProposal] = []
    index_of: dict[str, int] = {}
    for turn, sentence, kind in _claims(request):
        content, clause = _frame(
            sentence, kind, turn.speaker, companion=companion, when=turn.occurred_at
        )
        if len(content) > rules.max_content_chars or not library.has_type(kind):
            continue  # cutting a claim short would change what it says
        key = normalise_space(content)
        if key in index_of:  # said twice: one drawer citing both chunks
            earlier = drafts[index_of[key]]
            cited = tuple(dict.fromkeys((*earlier.derived_from, turn.chunk_id)))
            drafts[index_of[key]] = replace(earlier, derived_from=cited)
            continue
        signature = None
        if kind in CANONICAL_TYPES:
            signature = choose_signature(
                sentence, content, clause, min_chars=rules.min_signature_chars
            )
        index_of[key] = len(drafts)
        drafts.append(
            DraftProposal(
                content=content,
                memory_type=kind,
                wing=room.partition("/")[0],
                room=room,
                derived_from=(turn.chunk_id,),
                pin_status=PIN_ACTIVE,  # pinning is an operator's decision, never inferred
                signature=signature,
            )
        )
    return drafts


def compose_json(request: ComposeInput, *, rules: DraftRules = DEFAULT_DRAFT_RULES) -> str:
    """The extractive drafts of `request` as output-schema JSON text."""
    drafts = extract_drafts(request, rules=rules)
    return json.dumps({"drawers": [d.to_json() for d in drafts]}, ensure_ascii=False, indent=2)


class ExtractiveInvoker:
    """The offline, deterministic invoker: same session in, same JSON out.

    It ignores `prompt_text`: its rules are code, versioned by `model`.
    """

    def __init__(self, *, rules: DraftRules = DEFAULT_DRAFT_RULES) -> None:
        self.name = EXTRACTIVE_NAME
        self.model = EXTRACTIVE_MODEL
        self._rules = rules

    async def compose(self, request: ComposeInput) -> str:
        """The drafts of `request` as JSON text in the schema `parse_output` reads."""
        return compose_json(request, rules=self._rules)
