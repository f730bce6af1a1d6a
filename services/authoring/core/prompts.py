"""The default authoring prompts, one per deployment mode, and how two versions differ.

A prompt is the full system text an LLM invoker sends before the session (see
`render_session`). It teaches the same rules `validate_draft` enforces and the exact schema
`parse_output` reads, so a model that follows it produces drafts that pass. The type lists
come from the mode's library; only the one-line guidance per type lives here.

Versions: "default-v2" and "companion-v2" (v2 added `speaker`: whose claim a drawer is).
Editing the text below means a new version label; the prompt lab stores operator versions
beside these.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from services.authoring.core.rules import DEFAULT_DRAFT_RULES, DraftRules
from services.runtime.errors import InvalidInput
from services.vocabulary import COMPANION_MODE, DEFAULT_MODE, MODES, library_for

DEFAULT_PROMPT_VERSION: Final = "default-v2"
COMPANION_PROMPT_VERSION: Final = "companion-v2"
PROMPT_VERSION_BY_MODE: Final[Mapping[str, str]] = MappingProxyType(
    {DEFAULT_MODE: DEFAULT_PROMPT_VERSION, COMPANION_MODE: COMPANION_PROMPT_VERSION}
)

# One line per type, for the model; keyed by the libraries' own type names.
TYPE_GUIDANCE: Final[Mapping[str, str]] = MappingProxyType(
    {
        "architecture": "how the system is structured: components, boundaries, data flow",
        "workflow": "how the team works: process, sequence of steps, conventions",
        "implementation": "what was built or changed in the code, and how",
        "decision": "a choice that was made, by whom, and what it settles (canonical)",
        "bug": "a defect: the symptom, where it shows, and the cause when known",
        "spike": "an investigation or experiment and what it found",
        "retrospective": "a look back: what went well or badly, the lesson",
        "acceptance": "a criterion or check that work must pass to count as done",
        "directive": "a standing instruction that binds future work (canonical)",
        "observation": "a fact someone noticed; the default for plain statements",
        "fact": "legacy: prefer observation",
        "consequence": "legacy: prefer observation or decision",
        "inference": "legacy: a conclusion drawn, not verified",
        "opinion": "legacy: a belief or judgement someone holds",
        "want": "something the user wants, plans or hopes to do",
        "preference": "what the user likes, dislikes or prefers",
    }
)
_COMPANION_GUIDANCE: Final[Mapping[str, str]] = MappingProxyType(
    {
        "opinion": "what the user thinks or feels about something",
        "observation": "the user's state or circumstances: mood, energy, what is happening",
    }
)


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    """A versioned authoring prompt for one deployment mode."""

    version: str
    mode: str
    text: str


def _type_lines(mode: str) -> str:
    guidance = dict(TYPE_GUIDANCE)
    if mode == COMPANION_MODE:
        guidance.update(_COMPANION_GUIDANCE)
    return "\n".join(
        f"- {name}: {guidance[name]}" if name in guidance else f"- {name}"
        for name in library_for(mode).types
    )


_SCHEMA: Final = """\
Output exactly one JSON object and nothing else (no prose, no code fence):

{"drawers": [
  {"content": "…", "memory_type": "…", "wing": "…", "room": "wing/name",
   "derived_from": ["<chunk id>", …],
   "pin_status": "active", "topic": "…", "signature": "…", "confidence": 0.9,
   "speaker": "…"}
]}

content, memory_type, wing, room and derived_from are required; pin_status, topic,
signature, confidence and speaker may be left out. speaker is whose claim the drawer is,
spelled exactly as the session labels them (the chunk's speaker or the line's label).
No other fields. An empty list is a valid answer: when the session holds nothing worth
remembering, return {"drawers": []}."""

_PLACEMENT: Final = """\
Wings and rooms:
- A wing is a KIND of memory (projects, work, philosophy, people), never a topic. Reuse an
  existing wing; a new one is refused unless an operator allows it.
- A room is a long-lived identity inside a wing, written wing/name (projects/rev-engram).
  Ask: will this room hold many drawers over time? Reuse existing rooms; never make a room
  per session, per date or per topic.
- Names are lower-case slugs: letters, digits, '.', '_', '-'.
- topic is a short free tag for what the drawer is about (one line, at most {topic} chars).
- derived_from lists the ids of the chunks the drawer was composed from (at least one)."""


def _default_text(rules: DraftRules) -> str:
    return f"""\
You are the authoring agent of Engram, a memory engine that ranks decisions over
discussion. You read one raw session of a multi-agent engineering conversation and write
drawers: framed memories another agent will retrieve later and build on.

A drawer:
- is 1–{rules.max_sentences} sentences and at most {rules.max_content_chars} characters, \
retrievable on its own;
- is written in the third person and names who said or decided it ("The Architect decided
  that the API returns 404 for missing drawers."), never "I" or "we";
- keeps the speakers' own distinctive vocabulary: do not paraphrase a phrase someone will
  search for verbatim;
- is interpretive, not a transcript: never copy "User:" / "Assistant:" lines or logs.

Keep decisions, directives, bugs and what was built; skip greetings, questions, chatter
and tentative proposals ("maybe we could …"): the discussion is not the decision.

memory_type, one of:
{_type_lines(DEFAULT_MODE)}

Canonical claims (decision, directive) carry a signature: a distinctive phrase of the
content, at least {rules.min_signature_chars} characters, copied verbatim (same case, \
whole words),
and not the whole content. Other types leave signature out.

pin_status is "active". Do not pin: pinning is an operator's decision.

{_PLACEMENT.format(topic=rules.max_topic_chars)}

{_SCHEMA}"""


def _companion_text(rules: DraftRules) -> str:
    return f"""\
You are the archivist of a companion: one AI companion, one human user. You read one raw
session of their conversation and write what the companion should remember about the
user. The companion reads these later as background knowledge, with judgment, not as
commands.

Framing is where care lives. Be interpretive, not transcriptive:
- Wrong (verbatim log): User said: 'I'm going to try that new pho place this week.'
- Right (framed memory): Kyle is planning to check out the new pho place this week. Worth
  asking how it went if they don't bring it up.

A drawer:
- is 1–{rules.max_sentences} sentences and at most {rules.max_content_chars} characters;
- names the user (by name when the session gives it, else "the user") in the third person;
- captures what the utterance means (a want, a preference, an opinion, a state) and, where
  it helps, the forward intent (what is worth asking or remembering next time);
- keeps the user's own words for things they care about; never quotes a whole turn.

Remember only what the user expressed. Skip what the companion said, greetings, questions
and small talk. A quiet session gives no drawers.

memory_type, one of (the speech act the user made):
{_type_lines(COMPANION_MODE)}

signature: leave it out unless the user coined a phrase worth finding verbatim; then copy
it exactly from content: at least {rules.min_signature_chars} characters, not the whole content.

pin_status is "active". Do not pin.

{_PLACEMENT.format(topic=rules.max_topic_chars)}
- In companion stores the user is an identity: people/<name> is a good room.

{_SCHEMA}"""


def default_prompt(mode: str, *, rules: DraftRules = DEFAULT_DRAFT_RULES) -> PromptTemplate:
    """The built-in authoring prompt of `mode` ("default-v2" or "companion-v2")."""
    if mode not in MODES:
        raise InvalidInput(
            f"unknown deployment mode {mode!r}: expected {' or '.join(MODES)}", field="mode"
        )
    text = _companion_text(rules) if mode == COMPANION_MODE else _default_text(rules)
    return PromptTemplate(version=PROMPT_VERSION_BY_MODE[mode], mode=mode, text=text + "\n")


MERGE_PROMPT_VERSION: Final = "merge-v1"


def merge_prompt(rules: DraftRules = DEFAULT_DRAFT_RULES) -> str:
    """The system text for consolidation: the chunks are drawers that say the same thing, and
    the answer is the one drawer that says it once (read back by `consolidation.read_merge`)."""
    return f"""\
You are the archivist of Engram, a memory engine. The chunks below are drawers of one room
that say the same thing in different words. Write the ONE drawer that replaces them all.

The drawer:
- states everything the chunks state, once; adds nothing they do not say;
- keeps every number, date, time, name and negation exactly as the chunks give them;
- starts from the first chunk's wording (it stands highest) and keeps the speakers'
  distinctive vocabulary: someone will search for those words verbatim;
- is 1–{rules.max_sentences} sentences and at most {rules.max_content_chars} characters;
- keeps the memory_type, wing and room given below the chunks, unchanged;
- cites every chunk id in derived_from;
- when a signature is given, contains that phrase verbatim and carries it as its signature.

Output exactly one JSON object and nothing else (no prose, no code fence):

{{"drawers": [{{"content": "…", "memory_type": "…", "wing": "…", "room": "wing/name",
  "derived_from": ["<chunk id>", …], "signature": "…"}}]}}

Leave signature out when none is given.
"""


def diff_prompts(a: str, b: str, *, from_name: str = "a", to_name: str = "b") -> str:
    """A unified diff from prompt text `a` to `b` ("" when they are equal)."""
    lines = difflib.unified_diff(
        a.splitlines(keepends=True),
        b.splitlines(keepends=True),
        fromfile=from_name,
        tofile=to_name,
    )
    # A last line without a newline would run into the next hunk header; end it explicitly.
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
