"""The rules of a valid drawer, and who may write what (seed: HEAVY-SPLIT, "Wings, rooms").

`validate_draft` is the one gate every write passes, ambient or signed, direct or composed.
It raises for what is wrong (`InvalidInput`) or not allowed (`PermissionDenied`), and
returns soft warnings for shapes that are legal but read badly at retrieval time.

Decisions:

- The caller's scope is checked first (a read token learns nothing about the draft), then
  the fields in reading order; a field's permission (a forbidden type, pinning, a new wing)
  right after that field's shape, so the first error names the first thing to fix.
- A wing is a slug ``[a-z0-9][a-z0-9._-]{0,31}``; a room is ``wing/name`` with the name
  ``[a-z0-9][a-z0-9._-]{0,63}``. The leading character must be a letter or digit, so "."
  and ".." are never names. Wings are kinds, rooms identities: a wing the store has never
  seen needs the admin tier (or whatever the policy says) or an explicit `allow_new_wing`,
  which is the fix for the 706-wings store; a new room inside a known wing is normal.
- A signature is compared case-sensitively after collapsing whitespace runs: the phrase is
  kept verbatim for the keyword index, but a line break in the content must not make an
  exact phrase "missing". It must start and end on word boundaries (half a word never hits
  the keyword index) and must not be the whole content (then it distinguishes nothing).
- Only "pinned" needs the pin permission; "deprecated" claims less authority, not more.
- Warnings are counts, not parsing: at most one of verbatim log / first person / no one
  named (the fix is the same reframing), plus the sentence count. They under-warn by design.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import Final

from services.authoring.core._text import (
    AGENT_HANDLE,
    EDGE_PUNCTUATION,
    normalise_space,
    signature_in,
    split_sentences,
)
from services.runtime.errors import InvalidInput, PermissionDenied
from services.vocabulary import (
    MODES,
    PIN_ACTIVE,
    PIN_PINNED,
    PIN_STATUSES,
    TIER_ADMIN,
    TIER_WRITE,
    TIERS,
    TypeLibrary,
    library_for,
)

_WING: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,31}")
_ROOM_NAME: Final = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_SHOWN_CHARS: Final = 60


def _frozen_types(raw: Mapping[str, Iterable[str]]) -> Mapping[str, frozenset[str]]:
    return MappingProxyType({tier: frozenset(types) for tier, types in raw.items()})


def _names(value: object, key: str) -> frozenset[str]:
    """A config list of tier or type names, lower-cased; a lone string is refused."""
    if isinstance(value, str | Mapping) or not isinstance(value, Iterable):
        raise InvalidInput(f"write policy {key!r} must be a list of names", field="policy")
    return frozenset(str(name).strip().lower() for name in value)


@dataclass(frozen=True, slots=True)
class WritePolicy:
    """Write scope per caller tier, configurable per store (seed: tiers govern write scope).

    The default: read never writes; write may author every type except directive and may
    not pin; admin may do all, including opening a new wing without the explicit flag.
    """

    writers: frozenset[str] = frozenset({TIER_WRITE, TIER_ADMIN})
    forbidden_types: Mapping[str, frozenset[str]] = field(
        default_factory=lambda: _frozen_types({TIER_WRITE: {"directive"}})
    )
    pinners: frozenset[str] = frozenset({TIER_ADMIN})
    wing_creators: frozenset[str] = frozenset({TIER_ADMIN})

    def __post_init__(self) -> None:
        named = self.writers | self.pinners | self.wing_creators | set(self.forbidden_types)
        unknown = sorted(named - set(TIERS))
        if unknown:
            raise InvalidInput(
                f"write policy names unknown tiers {unknown}: expected {', '.join(TIERS)}",
                field="policy",
            )

    @classmethod
    def from_config(cls, config: Mapping[str, object]) -> WritePolicy:
        """A policy from plain config (a store's settings); keys left out keep the default.

        Keys: ``writers``, ``pinners``, ``wing_creators`` (lists of tiers) and
        ``forbidden_types`` (tier → list of memory types).
        """
        unknown = sorted(set(config) - {"writers", "forbidden_types", "pinners", "wing_creators"})
        if unknown:
            raise InvalidInput(f"write policy has unknown keys {unknown}", field="policy")
        default = cls()
        forbidden = config.get("forbidden_types")
        if forbidden is not None and not isinstance(forbidden, Mapping):
            raise InvalidInput(
                "write policy 'forbidden_types' must map a tier to a list of types", field="policy"
            )
        return cls(
            writers=_names(config.get("writers", default.writers), "writers"),
            forbidden_types=default.forbidden_types
            if forbidden is None
            else _frozen_types(
                {str(t): _names(v, "forbidden_types") for t, v in forbidden.items()}
            ),
            pinners=_names(config.get("pinners", default.pinners), "pinners"),
            wing_creators=_names(
                config.get("wing_creators", default.wing_creators), "wing_creators"
            ),
        )

    def to_config(self) -> dict[str, object]:
        """The plain-config form `from_config` reads back (sorted, for stable storage)."""
        return {
            "writers": sorted(self.writers),
            "forbidden_types": {
                tier: sorted(t) for tier, t in sorted(self.forbidden_types.items())
            },
            "pinners": sorted(self.pinners),
            "wing_creators": sorted(self.wing_creators),
        }


@dataclass(frozen=True, slots=True)
class DraftRules:
    """Shape limits of a drawer (seed: a drawer is 1–3 sentences, signature opt-in)."""

    max_content_chars: int = 600
    min_signature_chars: int = 12
    max_sentences: int = 3  # soft: more is a warning, not an error
    max_topic_chars: int = 64

    def __post_init__(self) -> None:
        for rule in fields(self):
            if getattr(self, rule.name) < 1:
                raise InvalidInput(f"draft rule {rule.name} must be at least 1", field=rule.name)


DEFAULT_WRITE_POLICY: Final = WritePolicy()
DEFAULT_DRAFT_RULES: Final = DraftRules()


@dataclass(frozen=True, slots=True, kw_only=True)
class DraftInput:
    """The author-chosen fields of a drawer that the rules look at (from `DrawerDraft`)."""

    content: str
    memory_type: str
    wing: str
    room: str
    pin_status: str = PIN_ACTIVE  # "" (unspecified) reads as active
    topic: str = ""
    added_by: str = ""


@dataclass(frozen=True, slots=True)
class Validation:
    """A draft that passed: soft warnings to return to the author, and whether it opens a wing."""

    warnings: list[str]
    new_wing: bool = False


def _shown(value: str) -> str:
    text = value if len(value) <= _SHOWN_CHARS else value[:_SHOWN_CHARS] + "…"
    return repr(text)


def slugify(text: str, *, max_chars: int = 64) -> str:
    """A lower-case slug of `text` fit for a wing or room name; "" when nothing is left."""
    slug = re.sub(r"[^a-z0-9._-]+", "-", text.strip().lower()).strip("-._")
    return slug[:max_chars].rstrip("-._")


def room_problem(room: str, wing: str | None = None) -> str | None:
    """Why `room` is not a well-formed ``wing/name`` (of `wing`, when given); None if it is."""
    prefix, slash, name = room.partition("/")
    if not slash or "/" in name:
        return f"room {_shown(room)} must be written wing/name, with exactly one '/'"
    if wing is not None and prefix != wing:
        return f"room {_shown(room)} belongs to wing {prefix!r}, not to the drawer's wing {wing!r}"
    if not _WING.fullmatch(prefix):
        return f"room {_shown(room)} has a wing part that is not a slug"
    if not _ROOM_NAME.fullmatch(name):
        return (
            f"room {_shown(room)}: the name must be 1-64 of a-z, 0-9, '.', '_', '-', "
            "starting with a letter or digit"
        )
    return None


def library_of(mode: str) -> TypeLibrary:
    """The store mode's type library; an unknown mode is InvalidInput on field "mode"."""
    try:
        return library_for(mode)
    except ValueError:
        raise InvalidInput(
            f"unknown deployment mode {mode!r}: expected {' or '.join(MODES)}", field="mode"
        ) from None


def _check_scope(tier: str, policy: WritePolicy) -> str:
    normalised = tier.strip().lower()
    if normalised not in TIERS:
        raise PermissionDenied(
            f"unknown caller tier {tier!r}: expected {', '.join(TIERS)}", field="tier"
        )
    if normalised not in policy.writers:
        raise PermissionDenied(
            f"the {normalised} tier may not write drawers in this store: use a write token",
            field="tier",
        )
    return normalised


def check_pinned_change(tier: str, policy: WritePolicy, drawer_id: str, action: str) -> None:
    """Changing a pinned drawer at all (unpinning, deprecating, editing, moving) is a
    pinner's act: PermissionDenied naming the refused action otherwise."""
    caller = tier.strip().lower()
    if caller not in policy.pinners:
        raise PermissionDenied(
            f"drawer {drawer_id} is pinned: the {caller} tier may not {action} a pinned drawer "
            "in this store; ask an admin",
            field="id",
        )


def _check_content(content: str, rules: DraftRules) -> None:
    if not content.strip():
        raise InvalidInput("content is empty: a drawer is 1–3 sentences", field="content")
    if len(content) > rules.max_content_chars:
        raise InvalidInput(
            f"content is {len(content)} characters; the limit is {rules.max_content_chars}: "
            "a drawer is 1–3 sentences, so split it into several drawers",
            field="content",
        )


def _check_type(memory_type: str, mode: str, library: TypeLibrary) -> None:
    if library.has_type(memory_type):
        return
    valid = ", ".join(library.types)
    hint = ""
    if library.has_type(memory_type.strip().lower()):
        hint = f" (types are lower-case: {memory_type.strip().lower()!r})"
    else:
        others = [m for m in MODES if m != mode and library_for(m).has_type(memory_type)]
        if others:
            hint = f" ({memory_type!r} is a {others[0]}-mode type; this store is in {mode} mode)"
    raise InvalidInput(
        f"memory_type {_shown(memory_type)} is not in the {mode} library{hint}; valid: {valid}",
        field="memory_type",
    )


def _check_place(
    draft: DraftInput,
    *,
    tier: str,
    existing_wings: Collection[str],
    allow_new_wing: bool,
    policy: WritePolicy,
) -> bool:
    """Wing and room shape, and whether a new wing may open; True when it is new."""
    if not _WING.fullmatch(draft.wing):
        raise InvalidInput(
            f"wing {_shown(draft.wing)} must be 1-32 of a-z, 0-9, '.', '_', '-', starting with "
            "a letter or digit; wings are kinds of memory (projects, work, philosophy)",
            field="wing",
        )
    problem = room_problem(draft.room, draft.wing)
    if problem is not None:
        raise InvalidInput(
            f"{problem}; rooms are long-lived identities, e.g. projects/rev-engram", field="room"
        )
    if draft.wing in existing_wings:
        return False
    if tier in policy.wing_creators or allow_new_wing:
        return True
    close = difflib.get_close_matches(draft.wing, list(existing_wings), n=1)
    hint = f" did you mean {close[0]!r}?" if close else ""
    known = ", ".join(sorted(existing_wings)[:12]) or "none yet"
    raise PermissionDenied(
        f"wing {draft.wing!r} does not exist in this store (wings: {known});{hint} wings are "
        "kinds of memory, not topics: reuse one, or set allow_new_wing if this is a new kind",
        field="wing",
    )


def _check_signature(
    content: str, *, signed: bool, signature: str | None, rules: DraftRules
) -> None:
    given = signature is not None and signature.strip() != ""
    if not signed:
        if given:
            raise InvalidInput(
                "add_drawer is the ambient write and takes no signature: use "
                "add_drawer_signed for a canonical claim",
                field="signature",
            )
        return
    if signature is None or not given:
        raise InvalidInput(
            "add_drawer_signed needs a signature: a distinctive phrase copied verbatim from "
            "the content (use add_drawer for an ambient write)",
            field="signature",
        )
    phrase = normalise_space(signature)
    if len(phrase) < rules.min_signature_chars:
        raise InvalidInput(
            f"signature {_shown(phrase)} is {len(phrase)} characters; at least "
            f"{rules.min_signature_chars} are needed to be distinctive",
            field="signature",
        )
    body = normalise_space(content)
    if not signature_in(phrase, body):
        raise InvalidInput(
            f"signature {_shown(phrase)} does not appear verbatim in the content (case "
            "matters; it must start and end on whole words): copy the phrase from the content",
            field="signature",
        )
    if phrase.strip(EDGE_PUNCTUATION) == body.strip(EDGE_PUNCTUATION):
        raise InvalidInput(
            "signature is the whole content: pick the distinctive phrase within it",
            field="signature",
        )


def validate_draft(
    draft: DraftInput,
    *,
    mode: str,
    tier: str,
    existing_wings: Collection[str],
    allow_new_wing: bool,
    signed: bool,
    signature: str | None,
    policy: WritePolicy = DEFAULT_WRITE_POLICY,
    rules: DraftRules = DEFAULT_DRAFT_RULES,
) -> Validation:
    """Check one draft against the store's library, the caller's scope and the shape rules.

    `signed` says which HEAVY-SPLIT operation is writing (add_drawer_signed or add_drawer).
    Raises PermissionDenied or InvalidInput naming the field; returns soft warnings.
    """
    library = library_of(mode)
    caller = _check_scope(tier, policy)
    _check_content(draft.content, rules)
    _check_type(draft.memory_type, mode, library)
    if draft.memory_type in policy.forbidden_types.get(caller, frozenset()):
        raise PermissionDenied(
            f"the {caller} tier may not author {draft.memory_type!r} drawers in this store: "
            "ask an admin, or record it as a decision or observation",
            field="memory_type",
        )
    pin_status = draft.pin_status.strip().lower() or PIN_ACTIVE
    if pin_status not in PIN_STATUSES:
        raise InvalidInput(
            f"pin_status {_shown(draft.pin_status)} is not one of {', '.join(PIN_STATUSES)}",
            field="pin_status",
        )
    if pin_status == PIN_PINNED and caller not in policy.pinners:
        raise PermissionDenied(
            f"the {caller} tier may not pin drawers in this store: write it active and ask "
            "an admin to pin it",
            field="pin_status",
        )
    new_wing = _check_place(
        draft,
        tier=caller,
        existing_wings=existing_wings,
        allow_new_wing=allow_new_wing,
        policy=policy,
    )
    if len(draft.topic) > rules.max_topic_chars or "\n" in draft.topic:
        raise InvalidInput(
            f"topic must be one line of at most {rules.max_topic_chars} characters; it is a "
            "short semantic tag, not a summary",
            field="topic",
        )
    _check_signature(draft.content, signed=signed, signature=signature, rules=rules)
    return Validation(warnings=shape_warnings(draft.content, rules=rules), new_wing=new_wing)


# ---------------------------------------------------------------- soft warnings

_LOG_LINE: Final = re.compile(
    r"^\s*(?:(?:user|assistant|human|ai|system|bot|tool)(?:\s+said)?\s*:"
    r"|\[tool"
    r"|\[?\d{4}-\d{2}-\d{2}[ T]\d{1,2}:\d{2}"
    r"|\[?\d{1,2}:\d{2}(?::\d{2})?\]?\s)",
    re.IGNORECASE,
)
# "Name: …" in any alphabet; `_is_speaker_line` checks the capital.
_SPEAKER_LINE: Final = re.compile(r"^\s*(?P<name>[^\W\d_]\w{1,40}):\s")
_WORD: Final = re.compile(r"[A-Za-z][A-Za-z'’]*")
_FIRST_PERSON_LOWER: Final = frozenset(
    {"me", "my", "mine", "myself", "we", "we're", "we've", "we'd", "we'll", "us", "our",
     "ours", "ourselves"}
)  # fmt: skip
_FIRST_PERSON_I: Final = frozenset({"I", "I'm", "I've", "I'd", "I'll"})
# Who a memory is about, by real cues (decision 0014), never "any capitalised word":
# - a role or group noun, with up to three modifiers ("the payments team", "our on-call
#   engineer", "finance", "the user");
_ROLE_NOUNS: Final = (
    r"team|squad|group|department|committee|board|desk|crew|org|user|users|customer|customers|"
    r"assistant|agent|agents|bot|operator|operators|author|speaker|architect|engineer|engineers|"
    r"developer|developers|lead|manager|owner|reviewer|reviewers|designer|analyst|admin|pm|"
    r"founder|cto|ceo|on-call|maintainer|maintainers|finance|legal|security|support|ops|qa|"
    r"company|client|patient|nurse|doctor|editor|writer|researcher|scientist|teacher"
)
_ROLE_SUBJECT: Final = re.compile(
    rf"\b(?:the|our|their|a|an|each|every)\s+(?:[\w-]+\s+){{0,3}}(?:{_ROLE_NOUNS})\b"
    rf"|^(?:{_ROLE_NOUNS})\b",
    re.IGNORECASE,
)
# - an agent's handle ("coding-agent", "ops_bot", "reviewer-bot": `AGENT_HANDLE`);
# - a name doing what people do in memories ("Maya decided", "Kyle prefers", "Raj Patel
#   said"), or a name's possessive ("Kyle's sister"), or he/she/they as a subject.
_ACTS: Final = (
    r"decided|decides|said|says|noted|notes|reported|reports|directed|directs|agreed|agrees|"
    r"prefers|preferred|wants|wanted|thinks|thought|likes|liked|loves|hates|dislikes|asked|"
    r"proposed|chose|chooses|recorded|explained|mentioned|believes|feels|felt|needs|needed|"
    r"plans|planned|is|was|has|had|will|would|can|can't|doesn't|didn't|won't|set|ruled|fixed|"
    r"added|built|found|owns|runs|ran|shipped|wrote|suggested|confirmed|approved|rejected"
)
_NAMED_ACTOR: Final = re.compile(
    rf"\b[A-Z][\w.-]*(?:\s+[A-Z][\w.-]*){{0,2}}\s+(?:also\s+|still\s+|really\s+)?(?:{_ACTS})\b"
    r"|\b[A-Z][\w-]*['’]s\s"
    r"|\b(?:he|she|they)\s+\w+",
)
_SENTENCE_START_WORDS: Final = frozenset(
    {"the", "a", "an", "this", "that", "these", "those", "it", "there", "here", "if", "when",
     "while", "after", "before", "because", "so", "but", "and", "or", "also", "then", "today",
     "every", "each", "all", "some", "no", "in", "on", "at", "for", "with", "to", "as", "by",
     "from", "always", "never", "what", "why", "how", "where", "which", "yes", "ok", "okay"}
)  # fmt: skip
# Content that reads like a decision or a standing rule: worth writing signed.
_READS_CANONICAL: Final = re.compile(
    r"\b(?:decided|agreed|chose|settled on|going with|will use|ruled|the decision is|"
    r"must(?:\s+not)?|must never|never|always|from now on|going forward|no one may|"
    r"nobody may|is required to|are required to)\b",
    re.IGNORECASE,
)
CANONICAL_TYPES: Final = frozenset({"decision", "directive"})


def first_person_count(text: str) -> int:
    """How many first-person words `text` holds ("I", "I'm", "my", "we", "us"; not "US")."""
    count = 0
    for token in (t.replace("’", "'") for t in _WORD.findall(text)):
        if token in _FIRST_PERSON_I or (token.lower() in _FIRST_PERSON_LOWER and token != "US"):
            count += 1
    return count


def _subject_count(text: str) -> int:
    """How many times `text` names someone: roles and groups, agent handles, names doing
    something (a capitalised sentence opener like "The" or "When" is not a name)."""
    named = sum(
        1
        for m in _NAMED_ACTOR.finditer(text)
        if m.group(0).split()[0].lower().rstrip("'’s") not in _SENTENCE_START_WORDS
    )
    return len(_ROLE_SUBJECT.findall(text)) + len(AGENT_HANDLE.findall(text)) + named


def names_someone(text: str) -> bool:
    """Whether `text` says who it is about: a role or group ("the payments team"), an
    agent's handle, a name doing something ("Maya decided") or its possessive, a pronoun."""
    return _subject_count(text) > 0


def signing_hint(content: str, memory_type: str, *, signed: bool) -> str | None:
    """A hint for an ambient (unsigned) write that is, or reads like, a canonical claim."""
    if signed:
        return None
    if memory_type in CANONICAL_TYPES:
        return (
            f"a {memory_type} written without a signature ranks as ambient discussion: write "
            "it with add_drawer_signed and a distinctive verbatim phrase of the content"
        )
    if _READS_CANONICAL.search(content):
        return (
            "this reads like a decision or a standing rule: if it is one, write it as a "
            "decision or directive with add_drawer_signed and a signature phrase, so it "
            "outranks discussion of the same topic"
        )
    return None


def _is_speaker_line(line: str) -> bool:
    match = _SPEAKER_LINE.match(line)
    return match is not None and match.group("name")[0].isupper()


def shape_warnings(content: str, *, rules: DraftRules = DEFAULT_DRAFT_RULES) -> list[str]:
    """Soft warnings for shapes the seed calls wrong; an empty list for a well-framed drawer."""
    warnings: list[str] = []
    lines = [line for line in content.splitlines() if line.strip()]
    log_line = next((line for line in lines if _LOG_LINE.match(line)), None)
    speaker_lines = [line for line in lines if _is_speaker_line(line)]
    if log_line is None and len(speaker_lines) >= 2:
        log_line = speaker_lines[0]
    first, third = first_person_count(content), _subject_count(content)
    if log_line is not None:
        warnings.append(
            f"content looks like a verbatim log ({_shown(log_line.strip())}): frame what was "
            "learned in the third person; the raw chunk keeps the transcript"
        )
    elif first > third:
        warnings.append(
            "content reads as a first-person transcript: frame it in the third person and "
            "name who it is about (e.g. 'Kyle prefers tea over coffee.')"
        )
    elif third == 0:
        warnings.append(
            "content does not say who: name the person or agent the memory is about "
            "(e.g. 'The Architect decided that …')"
        )
    count = len(split_sentences(content))
    if count > rules.max_sentences:
        warnings.append(
            f"content has {count} sentences; a drawer is 1–{rules.max_sentences}: split it "
            "into separate drawers so each is retrievable on its own"
        )
    return warnings
