"""The offline extractive invoker: said sentences in, typed, framed, attributed drawers out.

Deterministic and without a provider, it is the default when no provider is configured and
what the tests compose with. It returns JSON text in the output schema, so its drafts take
the same `parse_output` → `validate_draft` path as a model's.

How a session becomes drawers:

1. Turns: each chunk is one speaker's turn, named by its `speaker` (a role or a name, however
   spelled: "user", "ASSISTANT", "Maya", "coding-agent", "dana.k"). A chunk that holds a
   pasted transcript is split at its ``Label:`` lines: a role, a speaker of the session, a
   handle ("priya_s", "ops-bot") or a capitalised name, never prose ("Note:"). System and
   tool lines are skipped. In companion mode the assistant's turns (an assistant role, or a
   name sent with one) are not read: the drawers are what the companion remembers about its
   user and the people they talk with, never what it said itself.
2. Sentences (`said_sentences`): questions, code, greetings, listed alternatives ("Option
   A: …") and sentences under five words are skipped; discourse lead-ins ("OK, so") are
   dropped; backticks go. A short settling turn ("Ok, option B then.") is resolved to the
   option an earlier turn described and cites both turns.
3. Type: a trained classifier (`sentence_types`, the shared linear text classifier over the
   sentence embedding and its words) labels each sentence with a type of the store's library
   or "none" (not a memory: a proposal left open, an acknowledgement, chatter). The invoker
   embeds the sentences through the embedder tier; `extract_drafts` takes the labels, so the
   framing rules below are pure and testable with given types. In default mode the
   sentence's own words overrule the guess where they settle it: a decider's cue ("we
   decided", "let's go with", a settled option) makes a decision, an imperative a directive.
4. Framing, third person: a sentence led by "I"/"my" is rewritten with the speaker as
   subject ("I prefer tea" → "Kyle prefers tea"); a decision cue takes the speaker as the
   decider ("we'll use Redis" → "The Architect decided to use Redis"); an imperative becomes
   "X directed that the team …"; anything else is reported ("X noted that …", "X decided
   that …"). Remaining first-person words become the speaker, and "we" the team (companion:
   "Kyle and company"). Relative times ("today") get the chunk's date; a want gets the seed's
   forward intent ("Worth asking about it later …").
5. Decisions and directives are canonical: they get a signature, the longest 3–8 word phrase
   of the original sentence found verbatim in the framed content, else of the framed clause.
6. Attribution and placement: every draft names its `speaker` (the turn's label, exactly as
   spelled), one room for the session (`choose_room`), pin_status active, no topic, and the
   chunks it came from in derived_from.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial
from typing import Final

import numpy as np
import numpy.typing as npt

from services.authoring.core._text import (
    AGENT_HANDLE,
    IRREGULAR_PAST,
    PAST_SPELLED_AS_BASE,
    choose_signature,
    lower_first,
    normalise_space,
    proper_words,
    split_sentences,
    third_person,
    tidy_chat_spelling,
)
from services.authoring.core.finishing import dated, without_stage_directions
from services.authoring.core.invoker import ComposeChunk, ComposeInput, DraftProposal
from services.authoring.core.rules import (
    CANONICAL_TYPES,
    DEFAULT_DRAFT_RULES,
    DraftRules,
    first_person_count,
    library_of,
    room_problem,
    slugify,
)
from services.authoring.core.sentence_types import NOT_A_MEMORY, load_type_model
from services.vocabulary import COMPANION_MODE, PIN_ACTIVE

EXTRACTIVE_NAME: Final = "extractive"
EXTRACTIVE_MODEL: Final = "extractive-v8"  # bump when the rules below change what is emitted

# Embeds sentences (the embedder tier's client): one unit row per text, in order.
Embed = Callable[[list[str]], Awaitable[npt.NDArray[np.float32]]]

# Shorter sentences are fragments ("Thursday cutoff it is", "9 files, 31 occurrences")...
_MIN_WORDS: Final = 5
# ...unless a lead-in made them so and what is left is the speaker's own clause: "okay, I
# signed the lease" keeps "I signed the lease" ("I hate it", "I think so" stay out). A draft
# still needs `_MIN_WORDS` words in the end: the clause must be joined by the turn's next one.
_MIN_CLAUSE_WORDS: Final = 4
_SPEAKER_CLAUSE: Final = re.compile(r"^(?:I|I['’]\w+|im|ive|we|we['’]\w+)\s+[a-z]", re.IGNORECASE)

# "me": a chat export's label for the person who exported it.
_USER_ROLES: Final = frozenset({"user", "human", "customer", "me"})
# "companion": in a companion store the AI is the companion, whatever else it is called.
_ASSISTANT_ROLES: Final = frozenset(
    {"assistant", "ai", "bot", "model", "agent", "chatbot", "gpt", "companion"}
)
_SKIPPED_ROLES: Final = frozenset({"system", "developer", "tool", "function"})
# Capitalised words that head a line like a speaker but are prose ("Note: …").
_PROSE_LABELS: Final = frozenset(
    {"note", "notes", "update", "edit", "warning", "error", "todo", "summary", "question",
     "answer", "decision", "example", "bug", "fix", "status", "result", "output", "input",
     "context", "caveat", "tip", "important", "re", "subject", "ps"}
)  # fmt: skip
# A speaker label: a role, a handle ("dana.k", "coding-agent") or a name of up to four
# capitalised words in any alphabet ("Kyle Smith:", "Raj Patel.", "Élodie:", "Ōta Ren:");
# `_label_line` checks the capitals, which `re` cannot class beyond ASCII.
_LABEL: Final = re.compile(
    r"^\s*(?P<label>[^\W\d_][\w.\-]{0,40}(?: [^\W\d_][\w.\-]{0,40}){0,3})"
    r"\s*:\s+(?P<text>.*)$"
)
_HANDLE: Final = re.compile(r"^[A-Za-z][A-Za-z0-9]*[._\-][\w.\-]*[A-Za-z0-9]$")


def _label_line(line: str) -> re.Match[str] | None:
    """`line` split as "label: text" when it opens with a speaker label (every word after
    the first capitalised: "Raj Patel: …", never "the thing is: …")."""
    match = _LABEL.match(line)
    if match is None or not all(w[0].isupper() for w in match.group("label").split()[1:]):
        return None
    return match


_I = r"(?:I|i)"
_CUE = re.IGNORECASE
# Lead-ins dropped from a sentence's start: some only with a comma or a dash ("Right, …",
# "Agreed — …" but "Right now", "No one"), and prose labels ("Note: …").
_LEAD_IN: Final = re.compile(
    r"^(?:(?:(?:ok(?:ay)?|well|yes|yeah|yep|right|alright|sure|great|cool|oh|hmm+|um+|uh+|"
    r"look|aw+|wow|oh wow|ah+|haha+|lol|omg|yay|ugh|hey(?:\s+[\w'-]+)?|no|nope|agreed|"
    r"fine|understood|correct|exactly|not yet|not really|maybe later|of course|(?:oh )?wait|"
    r"for the record|by the way|btw|fyi|heads up|just so (?:you|y'all) know|"
    r"between (?:us|you and me|ourselves)|(?:also |and )?remember|speaking of(?: which)?|"
    r"(?:the )?thing is|that(?:'s|’s) (?:smart|fair|true|right|a good (?:idea|point|call)))"
    r"(?:\s*[,!;]|\s+[—–-])|"
    r"(?:note|update|edit|fyi|ps|tip|important|heads up|side note|quick note|for the record|"
    r"by the way|btw|(?:quick |friendly |just a )?reminder)\s*:|"
    r"(?:quick |friendly |just a )?reminder that|so|and|but|also|plus|then|yes|yeah|yep|"
    r"honestly|actually|basically|anyway|ugh|tbh|ngl|frankly|to be honest|"
    # before the speaker's own clause, with or without the comma chat drops: "okay I signed
    # the lease", "nah, I'll stick with it", "sorry, I just reread the email" (a bare "nah,
    # not worth it" keeps its refusal)
    r"(?:ok(?:ay)?|nah|oh|well|sorry|lol|haha+)"
    r"(?=[,!]?\s+(?:I|I['’]\w+|im|ive|we|we['’]\w+)\b))[,!]?\s+)+",
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
# A reply that only acknowledges what the other speaker offered ("that would be great
# actually", "that works", "it's fine"): nothing in it is a memory of its own.
_ACKNOWLEDGEMENT: Final = re.compile(
    r"^(?:that|this|it)(?:'s|’s|'d|’d| is| would| will| sounds| works| helps)?(?: be)?"
    r"(?: (?:really|so|very|actually|totally|just))*"
    r"(?: (?:great|good|perfect|amazing|awesome|lovely|helpful|nice|fine|ideal|brilliant|"
    r"wonderful|ok(?:ay)?))?(?:,? (?:actually|then|thanks|though|for me|to me))*[.!]*$",
    _CUE,
)
# How each cue of `_IMPERATIVE` reads after the team in a directive ("the team never …") and
# after "asked the companion" in a request ("never to …"); "make sure to" adds nothing.
_RULE_CUE: Final = {"always": (" always", "to always"), "never": (" never", "never to"),
                    "do not": (" not", "not to"), "don't": (" not", "not to"),
                    "dont": (" not", "not to")}  # fmt: skip
_IMPERATIVE: Final = re.compile(
    r"^(?:please\s+)?(?P<cue>always|never|do not|don't|dont|make sure to|be sure to)\s+"
    r"(?P<rest>.+)$",
    _CUE,
)

# A bare imperative: an instruction that opens with its verb and goes straight on to what it
# acts on ("Order 5 tonnes from Ohio", "Ship it behind a flag", "disable the printers' local
# cache", "Go with the linear factor"). Said by a person in a work session, it settles what
# will be done: a decision, or a directive when it sets a standing rule. The verbs are common
# English verbs of acting on work; the word after the verb must start an object or a
# particle, so a noun phrase that shares a verb's spelling ("Pick rate on nights looks low",
# "Test results …") is not read as one.
_ACTION_VERBS: Final = frozenset(
    {"accept", "add", "adopt", "allocate", "apply", "approve", "archive", "ask", "assign",
     "attach", "avoid", "backfill", "bill", "block", "book", "bring", "budget", "build",
     "bump", "buy", "call", "cancel", "cap", "change", "charge", "check", "choose", "clean",
     "clear", "close", "commit", "confirm", "contact", "copy", "cover", "create", "cut",
     "defer", "delay", "delete", "deploy", "disable", "do", "document", "drop", "email",
     "enable", "escalate", "exclude", "extend", "file", "fix", "flag", "follow", "forward",
     "freeze", "get", "give", "go", "hand", "handle", "hire", "hold", "include", "increase",
     "invite", "keep", "kill", "label", "launch", "leave", "let", "limit", "lock", "log",
     "loop", "make", "mark", "merge", "message", "migrate", "move", "notify", "offer", "open",
     "order", "pause", "pay", "pick", "pin", "ping", "plan", "post", "postpone", "price",
     "print", "prioritise", "prioritize", "publish", "pull", "push", "put", "queue", "raise",
     "re-run", "reassign", "rebook", "rebuild", "recall", "record", "redeploy", "reduce",
     "refresh", "refund", "reject", "release", "remove", "rename", "reorder", "replace",
     "reply", "request", "require", "reroute", "rerun", "resend", "reset", "respond",
     "restart", "restore", "retire", "retry", "return", "revert", "review", "rewrite", "roll",
     "rotate", "route", "run", "scale", "schedule", "send", "set", "ship", "shut", "sign",
     "skip", "split", "start", "stay", "stick", "stop", "store", "submit", "survey", "swap",
     "switch",
     "sync", "tag", "take", "tell", "text", "throttle", "top", "track", "treat", "turn",
     "update", "upgrade", "use", "verify", "waive", "warn", "write",
     # more of the same kind: acting on things, people and work
     "benchmark", "compare", "configure", "decline", "deny", "disconnect", "double", "draft",
     "embed", "grant", "halve", "help", "hotfix", "inform", "install", "investigate",
     "isolate", "lower", "measure", "mention", "monitor", "patch", "pilot", "prepare",
     "quarantine", "recheck", "recommend", "reinstall", "remind", "report", "reprocess",
     "reproduce", "reschedule", "reserve", "retest", "revoke", "share", "suggest",
     "tighten", "try", "upload", "wait",
     "bag", "feed", "fit", "quote", "resume", "rig", "shift", "stagger", "test", "watch"}
)  # fmt: skip


def _is_action_verb(word: str) -> bool:
    """Whether `word` is one of `_ACTION_VERBS`, or one of them done again ("requote",
    "redo", "re-quote": "re" and a listed verb)."""
    lower = word.lower()
    again = lower.removeprefix("re-") if lower.startswith("re-") else lower.removeprefix("re")
    return lower in _ACTION_VERBS or (again != lower and len(again) > 1 and again in _ACTION_VERBS)


_OBJECT_START: Final = frozenset(
    {"the", "a", "an", "it", "them", "that", "this", "these", "those", "all", "any", "every",
     "each", "our", "my", "your", "their", "his", "her", "its", "both", "some", "no", "only",
     "first", "up", "out", "off", "back", "down", "over", "on", "in", "with", "to", "away",
     "ahead", "everything", "everyone", "anything", "nothing", "someone", "sure"}
)  # fmt: skip
# An instruction whose object is the speaker ("Remind me how …", "help us pick …") asks the
# listener for something; it settles nothing about the work.
_SPEAKER_OBJECT: Final = frozenset({"me", "us"})
# When a rule starts to hold: "from now on", "from today on", "going forward".
_RULE_TIME: Final = r"(?:from\s+(?:now|today|here)\s+on|going\s+forward)"
# Words that make an instruction a standing rule rather than one act.
_STANDING_RULE: Final = re.compile(
    rf"\b(?:{_RULE_TIME}|always|never|every|each\s+time|whenever|any|all\s+(?:new|future)|"
    r"by\s+default|as\s+a\s+rule|no\s+exceptions)\b",
    _CUE,
)
_OPENING_WORDS: Final = re.compile(r"[A-Za-z0-9][\w'’.-]*")


# "Let's stay on Postgres", "let's not add Fargate": the speaker's own call, said as an
# instruction to everyone present; "From now on, tag …": a rule's opening before its verb.
_LETS: Final = re.compile(r"^let(?:'s|’s|\s+us)\s+(?:(?P<negated>not)\s+)?", _CUE)
# "Tomás, please remove it", "Please send the invoice": a request to someone, named or not.
_PLEASE: Final = re.compile(
    r"^(?:(?P<to>[A-Z][\w.’'-]*(?:\s+[A-Z][\w.’'-]*)?|[a-z][\w]*[-_.][\w.-]+)\s*,\s*)?"
    r"please\s*,?\s+",
    _CUE,
)
# "Rosa, pull the infected plants", "coding-agent — never push to main": an instruction said
# to someone named first (a capitalised name of one or two words, or a handle), without a
# "please". Sentence adverbs and lead-ins that take a comma are never the one addressed.
_VOCATIVE: Final = re.compile(
    r"^(?P<to>(?-i:[A-Z][\w’'-]*(?:\s+[A-Z][\w’'-]*)?)|[a-z][\w]*[-_.][\w.-]+|"
    r"(?-i:[a-z][\w’'-]*))"
    r"(?:\s*,|\s+[—–-])\s+(?=\S)",
    _CUE,
)
_NOT_ADDRESSED: Final = frozenset(
    {"also", "then", "next", "finally", "first", "second", "third", "today", "tomorrow",
     "tonight", "now", "so", "and", "but", "ok", "okay", "sure", "yes", "no", "please", "again",
     "otherwise", "instead", "meanwhile", "anyway", "honestly", "fine", "right", "great", "cool",
     "thanks", "afterwards", "later", "still", "ideally", "personally", "basically", "if",
     "when", "once", "after", "before", "overall", "meantime", "agreed", "understood", "done",
     "noted", "oh", "well", "hmm", "plus", "actually", "long", "short"}
)  # fmt: skip


def _addressed(sentence: str, names: Collection[str]) -> re.Match[str] | None:
    """The vocative a sentence opens with: a handle ("coding-agent — …") or a name the
    session uses (`names`: "Rosa, …"; not "Short-term, …"), or None."""
    match = _VOCATIVE.match(sentence)
    if match is None:
        return None
    to = match["to"]
    handle = to[:1].islower() and re.search(r"[-_.]", to) is not None
    if not handle and not all(w.lower() in names for w in to.split()):
        return None
    return None if to.split()[0].lower() in _NOT_ADDRESSED else match


_RULE_OPENING: Final = re.compile(
    rf"^(?P<when>{_RULE_TIME}|"
    r"from\s+(?:the\s+)?next\s+[\w-]+(?:\s+on(?:wards?)?)?)\s*[,:;—–-]?\s+",
    _CUE,
)
# After "Route 42" or "Bank A" a verb of their own says they were nouns, not instructions.
_NOT_AN_OBJECT_VERB: Final = frozenset(
    {"is", "was", "are", "were", "has", "had", "have", "will", "would", "can", "could",
     "should", "may", "might", "must", "does", "did", "isn't", "wasn't", "doesn't", "didn't"}
)  # fmt: skip
# Verbs whose base form after a plural noun shows that the noun was the subject: "Drop rates
# live in remote config" is a report, not an order.
_REPORTING_VERBS: Final = _ACTION_VERBS | frozenset(
    {"average", "belong", "climb", "come", "contain", "cost", "crash", "creep", "depend",
     "differ", "drift", "equal", "exceed", "exist", "fail", "fall", "feel", "fit", "grow",
     "hang", "happen", "jump", "lack", "lag", "land", "lead", "leak", "live", "look", "match",
     "matter", "mean", "miss", "need", "pass", "peak", "point", "reach", "remain", "rise",
     "say", "seem", "show", "shrink", "sit", "sound", "spike", "stall", "stand", "tend",
     "total", "trigger", "vary", "want", "work"}
)  # fmt: skip
# Verbs whose "-s" form is seldom a plural noun ("runs", "costs", "drops" often are): after
# a noun ("Pick rate looks low", "Price comes down") it is that noun's verb.
_SUBJECT_VERBS: Final = frozenset(
    {"apply", "belong", "break", "come", "crash", "depend", "exist", "fail", "feel", "get",
     "go", "happen", "keep", "look", "matter", "mean", "need", "remain", "say", "seem", "show",
     "sound", "stand", "stay", "take", "tend", "vary", "want", "work"}
)  # fmt: skip
# Where a clause ends: what follows may have a subject and verb of its own.
_CLAUSE_END: Final = re.compile(
    r"[,;:()]|\s[—–-]\s|\s(?:and|but|so|or|because|since|until|unless|while|when|if|before|"
    r"after|once|whenever|where|which|who|that)\s",
    _CUE,
)


@dataclass(frozen=True, slots=True)
class _Instruction:
    """A bare imperative, taken apart for framing: "From now on, let's not merge on Fridays"
    is `when` "from now on", `negated`, `action` "merge on Fridays"."""

    action: str
    negated: bool = False
    when: str = ""  # "from now on", or a condition with its comma ("whenever it fails,")
    asked: str | None = None  # a request ("please"): whom it asks, "" when unnamed
    for_speaker: bool = False  # the speaker is its object ("remind me …"): a favour asked


# "Whenever a box smells of vinegar, isolate it": the condition a standing instruction holds
# under, before its verb.
_CONDITION_OPENING: Final = re.compile(
    r"^(?P<when>(?:whenever|if|when|once|each\s+time|every\s+time|any\s+time)\s[^,;.?!]{3,90}),"
    r"\s+",
    _CUE,
)
# "Then report the 1.6 version", "just have the API reject them": the instruction after a
# connective.
_INSTRUCTION_ADVERB: Final = re.compile(r"^(?:then|just|now|first|instead)\s*,?\s+", _CUE)


def _lower_word(text: str) -> str:
    """`text` with its first word lowercased unless it is all capitals ("Whenever" → "whenever",
    "QA" kept)."""
    first = text.split(maxsplit=1)[0] if text.strip() else ""
    return text if first.isupper() else text[:1].lower() + text[1:]


def _finite_verb(word: str) -> bool:
    """Whether `word` reads as a verb with a subject of its own: an auxiliary, a past tense,
    or the third-person form of a common verb ("looks", "fails", "applies")."""
    lower = word.lower().replace("’", "'")
    if lower in _NOT_AN_OBJECT_VERB or lower in IRREGULAR_PAST - PAST_SPELLED_AS_BASE:
        return True
    if len(lower) > 4 and lower.endswith("ed") and not lower.endswith("eed"):
        return True
    return (
        (lower.endswith("ies") and f"{lower[:-3]}y" in _SUBJECT_VERBS)
        or (lower.endswith("es") and lower[:-2] in _SUBJECT_VERBS)
        or (lower.endswith("s") and lower[:-1] in _SUBJECT_VERBS)
    )


def _acts_on_its_clause(rest: str) -> bool:
    """Whether the verb opening `rest` governs the rest of its clause: an object follows it
    and no verb of the object's own does ("Exclude rev C from 2.4.1" acts; in "Pick rate on
    nights looks low", "Offer sent at 18:12", "Drop rates live in config" the words after
    the first are a subject and its verb)."""
    clause = _CLAUSE_END.split(rest, maxsplit=1)[0]
    words = [word.lower() for word in _OPENING_WORDS.findall(clause)]
    if len(words) < 2 or any(_finite_verb(word) for word in words[2:]):
        return False
    head = words[1]
    if _finite_verb(head):
        return False  # "Price comes down", "Offer sent to Marsh at 18:12"
    # a plural subject and its verb: "Drop rates live in remote config"
    return not (head.endswith("s") and len(words) > 2 and words[2] in _REPORTING_VERBS)


# A verbless answer or status line ("About 14 stops per shift.", "212 of 240 stations
# reporting.", "All on the Prusa bank B, all PETG jobs."): it opens with a quantity, a
# quantifier or a preposition, and no verb follows before a subordinate clause of its own.
_FRAGMENT_OPENING: Final = re.compile(
    r"^(?:[€$£]?\d|(?:first|last|next|about|around|roughly|approximately|almost|nearly|over|"
    r"under|at\s+least|at\s+most|only|maybe|probably|perhaps|possibly|mostly|mainly|all|both|"
    r"each|every|no|none|nothing|in|on|at|for|since|from|between|until|within|per)\b)",
    _CUE,
)
# A subordinate clause has a verb of its own ("Every four hours while inflow is above 120",
# "around 6 grand for the one that fits our tanks"). A relative clause inside a subject
# ("78% of players who start it drop at step 4") then hides the main verb: such a sentence
# reads as a fragment, which costs nothing, since "noted" takes a clause without its "that".
_SUBORDINATE: Final = re.compile(
    r"\s(?:while|when|whenever|if|because|unless|that|which|who|where)\s", _CUE
)
_PRONOUN_CONTRACTION: Final = re.compile(
    r"^(?:i|you|we|they|he|she|it|that|there|here|what|who|this)'(?:s|re|ll|ve|d|m)$"
)
# Words that only stand in a clause: be and modals, chat's apostrophe-less negations and
# contractions, and subject pronouns (a subject has a verb, said or dropped).
_CLAUSE_WORDS: Final = frozenset(
    {"am", "be", "been", "being", "shall", "do", "cannot", "cant", "dont", "wont", "didnt",
     "doesnt", "isnt", "wasnt", "arent", "im", "ive", "i", "we", "they", "he", "she", "you"}
)  # fmt: skip


# Before these an "-s" word is a plural noun ("14 stops", "all the runs"), not a verb.
_COUNTING_WORDS: Final = frozenset(
    {"a", "an", "the", "of", "per", "few", "many", "several", "some", "all", "both", "more",
     "most", "any", "no", "their", "our", "its", "his", "her", "my", "your"}
)  # fmt: skip


def _shows_a_verb(word: str, before: str) -> bool:
    lower = word.lower().replace("’", "'").rstrip(".")
    counted = before[:1].isdigit() or before.lower() in _COUNTING_WORDS
    return (
        lower in _CLAUSE_WORDS
        or lower.endswith("n't")
        or _PRONOUN_CONTRACTION.match(lower) is not None
        or (not counted and lower in _REPORTING_VERBS)  # "per shift" is no verb
        or (not counted and lower.removesuffix("s") in _REPORTING_VERBS)  # "the team moves"
        or (not counted and lower.removesuffix("es") in _REPORTING_VERBS)
        or _finite_verb(lower)
    )


# A status line: a bare noun phrase of two words or more and a past participle with no
# auxiliary, before a colon, a comma, the end or a preposition ("212 issues flagged: …",
# "Ticket INC-77310 raised as P2", "Nightly parity check scheduled for 02:00"). Read as a
# clause, "X noted that 212 issues flagged" is no sentence; "X noted 212 issues flagged" is.
_STATUS_LINE: Final = re.compile(
    r"^(?!(?:the|a|an|this|that|these|those|our|my|their|his|her|its|your|i|we|he|she|they|"
    r"it|you|there|here|what|who|when|if|for|in|on|at|with|from|by|after|before|since|during|"
    r"about|to|of)\b)"
    r"(?P<head>[\w'’.%/€$£-]+,?(?:\s+[\w'’.%/€$£-]+,?){1,4}?)\s+"
    r"(?P<verb>\b[a-z]{2,}(?<!e)ed\b)"
    r"(?=\s*(?:[:,.;]|$)|\s+(?:for|as|from|to|on|at|in|by|with|into|since|until|after|before|"
    r"off|out|up)\b)",
    _CUE,
)
_AUXILIARY: Final = re.compile(
    r"\b(?:is|are|was|were|has|have|had|been|be|being|got|get|gets|will|would|can|could|"
    r"should|must|did|do|does|i|we|you|he|she|they|it|hes|shes|its|im|ive)"
    r"(?:n?['’]?t)?\b",  # "wasn't", "can't", "dont"
    _CUE,
)


# Verbs that take a clause of their own, in the forms a status line's head would show them.
_CLAUSE_VERBS: Final = (
    "say", "show", "seem", "think", "mean", "look", "sound", "report", "suggest", "claim",
    "note", "feel", "know", "want", "need", "hope", "expect", "find", "reckon", "guess",
    "confirm", "state",
)  # fmt: skip
_TAKES_A_CLAUSE: Final = frozenset(
    f"{verb}{ending}" for verb in _CLAUSE_VERBS for ending in ("", "s", "ed")
) | {"said", "thought", "meant", "felt", "knew", "found"}


def _has_a_verb(text: str) -> bool:
    words = _OPENING_WORDS.findall(text)
    return any(_shows_a_verb(w, before) for w, before in zip(words, ["", *words], strict=False))


def reads_as_fragment(sentence: str) -> bool:
    """Whether `sentence` is a verbless fragment (an answer or a status line) that "X noted
    that …" would make ungrammatical. Conservative: a word that may be a verb anywhere before
    a subordinate clause makes it a sentence; a status line (`_STATUS_LINE`) is one."""
    status = _STATUS_LINE.match(sentence)
    if (
        status is not None
        and _AUXILIARY.search(status["head"]) is None
        and not re.search(r"['’]s\b", status["head"])  # "Stripe's cutoff moved": a clause
        and not any(  # "weather station says gusts peaked …": a clause inside a clause
            w.lower() in _TAKES_A_CLAUSE for w in _OPENING_WORDS.findall(status["head"])
        )
    ):
        return True
    if _FRAGMENT_OPENING.match(sentence) is None:
        return False
    return not _has_a_verb(_SUBORDINATE.split(sentence, maxsplit=1)[0])


def _bare_imperative(sentence: str, names: Collection[str] = frozenset()) -> _Instruction | None:
    """The instruction when `sentence` opens (after "from now on", a condition, "let's",
    "then") with its verb (`_ACTION_VERBS`, then an object: "Order 5 tonnes", "Tell Maya",
    "Isolate box 11", "Remind me …"); else None."""
    opening = _RULE_OPENING.match(sentence) or _CONDITION_OPENING.match(sentence)
    rest = sentence[opening.end() :] if opening else sentence
    rest = _INSTRUCTION_ADVERB.sub("", rest, count=1)
    please = _PLEASE.match(rest)
    vocative = None if please else _addressed(rest, names)
    rest = rest[please.end() :] if please else rest[vocative.end() :] if vocative else rest
    lets = None if please or vocative else _LETS.match(rest)
    rest = rest[lets.end() :] if lets else rest
    words = _OPENING_WORDS.findall(rest[:80])
    if lets and len(words) > 2 and words[0].lower() in ("also", "just"):
        words = words[1:]  # "let's also add …"
    if len(words) < 2 or not _is_action_verb(words[0]) or words[0].isupper():
        return None  # "DO came out at 38 ppb": an acronym, not a verb
    following = words[1]
    named = (following[0].isdigit() or following[0].isupper()) and not (
        following.endswith(("'s", "’s"))  # "Route 42's on-time performance …"
        or (len(words) > 2 and words[2].lower() in _NOT_AN_OBJECT_VERB)
    )
    for_speaker = following.lower() in _SPEAKER_OBJECT and not lets
    if not (
        lets  # after "let's" the verb is enough: "let's stay on Postgres"
        or following.lower() in _OBJECT_START
        or for_speaker
        or named
        or (following[0].islower() and _acts_on_its_clause(rest))
    ) or following.lower() in _NOT_AN_OBJECT_VERB | {"been"}:
        return None
    when = ""
    if opening is not None:
        condition = opening["when"]
        when = condition.lower() if opening.re is _RULE_OPENING else f"{_lower_word(condition)},"
    asked = (please["to"] or "") if please else ("" if for_speaker else None)
    if vocative is not None:
        to = vocative["to"]
        asked = to.title() if to.isalpha() and to.islower() else to  # "carlos, …" → Carlos
    negated = bool(lets and lets["negated"])
    return _Instruction(rest, negated=negated, when=when, asked=asked, for_speaker=for_speaker)


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
_REPORT_VERB: Final = {
    "decision": "decided that",
    "directive": "directed that",
    "architecture": "explained that",
    "workflow": "explained that",
    "acceptance": "set the acceptance criterion that",
    "bug": "reported that",
    "implementation": "reported that",
    "spike": "reported that",
    "retrospective": "reflected that",
    "observation": "noted that",
}
_COMPANION_REPORT_VERB: Final = "mentioned that"
_REPORTED_DECISION: Final = re.compile(r"\b(?:decid|agree)", _CUE)


@dataclass(frozen=True, slots=True)
class _Speaker:
    """Who a sentence is attributed to, and how the team ("we") is named alongside."""

    label: str  # the session's own spelling: "The_Architect", "user", "coding-agent"
    name: str  # mid-sentence form: "The Architect", "Kyle", "the user"
    group: str  # what "we" becomes: "the team", or "Kyle and company"
    group_singular: bool  # "the team uses" vs "Kyle and company use"
    listener: str  # what "you" becomes: whoever the speaker addresses
    is_assistant: bool = False  # an AI speaking (a role, or a name sent with an AI role)


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
        # The session's own speakers (the chunks' labels): a line headed by one is a turn.
        heads = (
            _label_line(line.lstrip())
            for c in request.chunks
            if not c.speaker.strip()
            for line in c.content.splitlines()
        )
        labels = [c.speaker.strip() for c in request.chunks if c.speaker.strip()] + [
            h.group("label") for h in heads if h is not None
        ]
        self.known = frozenset(label.lower() for label in labels)
        # Two people talking with each other (no assistant among the labels): each one's
        # "you" is the other, not the companion.
        people = {
            label.lower(): _display(label)
            for label in labels
            if label.lower() not in _USER_ROLES | _ASSISTANT_ROLES | _SKIPPED_ROLES | _PROSE_LABELS
        }
        assistants = {label.lower() for label in labels} & _ASSISTANT_ROLES | {
            c.speaker.strip().lower()
            for c in request.chunks
            if c.role.strip().lower() in _ASSISTANT_ROLES
        }
        self._pair = people if len(people) == 2 and not assistants else {}

    def is_label(self, label: str, *, chunk_has_speaker: bool) -> bool:
        """Whether a line's ``label:`` head names a speaker rather than opening prose.

        Roles, the session's own speakers and handles ("priya_s", "ops-bot", "dana.k": an
        agent replying inside a bundled arc) always do. A capitalised word does only in an
        unlabelled chunk (a pasted transcript): inside a chunk that has a speaker,
        "Implemented: …" or "Quick context: …" is that speaker's prose. Prose words ("Note")
        never do.
        """
        role = label.lower()
        if role in _PROSE_LABELS:
            return False
        if role in _USER_ROLES | _ASSISTANT_ROLES | _SKIPPED_ROLES or role in self.known:
            return True
        handle = " " not in label and _HANDLE.match(label) is not None
        return handle or (label[0].isupper() and not chunk_has_speaker)

    def speaker(self, label: str, role: str = "") -> _Speaker | None:
        """The subject for `label` (said with `role`, when the turn had one), or None when the
        turn is not read at all."""
        named_role = label.strip().lower()
        if named_role in _SKIPPED_ROLES or role.strip().lower() in _SKIPPED_ROLES:
            return None
        display = _display(label)
        if named_role in _USER_ROLES or (not named_role and self._companion):
            return self._make(label, self._user or "the user", listener="the assistant")
        if named_role in _ASSISTANT_ROLES:
            return self._make(
                label, "the assistant", listener=self._user or "the user", is_assistant=True
            )
        if not named_role:
            return self._make(label, "the team")
        ai = role.strip().lower() in _ASSISTANT_ROLES or bool(AGENT_HANDLE.fullmatch(label.strip()))
        return self._make(label, display, is_assistant=ai)

    def _make(
        self,
        label: str,
        name: str,
        *,
        listener: str = "the team",
        is_assistant: bool = False,
    ) -> _Speaker:
        label = normalise_space(label)
        if self._companion:
            # A companion's user talks to the companion; "we" is the user and their people.
            other = [shown for key, shown in self._pair.items() if key != label.lower()]
            listener = other[0] if len(other) == 1 else "the companion"
            return _Speaker(label, name, f"{name} and company", False, listener, is_assistant)
        return _Speaker(label, name, "the team", True, listener, is_assistant)


def _display(label: str) -> str:
    """A speaker label as a name: "maya" → "Maya", "raj_patel" → "Raj Patel"; a handle
    ("dana.k", "ops-bot") keeps its spelling, an agent's written with a hyphen ("qa_bot" →
    "qa-bot", never "Qa Bot")."""
    if AGENT_HANDLE.fullmatch(label.strip()):
        return label.strip().replace("_", "-")
    display = normalise_space(label.replace("_", " "))
    if display.replace(" ", "").isalpha() and display.islower():
        return display.title()
    return display


def _turns(chunk: ComposeChunk, cast: _Cast) -> Iterator[_Turn]:
    label = chunk.speaker
    lines: list[str] = []

    def flush() -> Iterator[_Turn]:
        same = normalise_space(label).lower() == normalise_space(chunk.speaker).lower()
        speaker = cast.speaker(label, chunk.role if same else "")
        text = "\n".join(lines).strip()
        if speaker is not None and text:
            yield _Turn(chunk.chunk_id, speaker, text, chunk.occurred_at)

    for line in chunk.content.splitlines():
        if line.lstrip().startswith("[tool"):
            continue
        match = _label_line(line)
        if match is not None and cast.is_label(
            match.group("label"), chunk_has_speaker=bool(chunk.speaker.strip())
        ):
            yield from flush()
            label, lines = match.group("label"), [match.group("text")]
        else:
            lines.append(line)
    yield from flush()


# ---------------------------------------------------------------- sentences, types, framing

# A line of code or a shell/log line, not prose (a mention like `issue()` in prose is fine).
_CODE: Final = re.compile(
    r"```|^\s*(?:\$ |>>>|#!|def |class |import |from \S+ import |return |const |let |var |"
    r"function |SELECT |INSERT |UPDATE |Traceback|at [\w.$]+\()|[{};]\s*$|^\s*[\w.]+\s*=\s*\S",
)
_FIRST_PERSON_LEAD: Final = re.compile(r"^(?:i|i['’](?:m|ve|d|ll)|(?-i:im|Im|ive)|my|me)\b", _CUE)
_WANT_FOLLOW_UP: Final = " Worth asking about it later if they don't bring it up."
# A report that opens with its verb, the speaker its unsaid subject ("Reassigned four
# scanners to Zone C", "rebuilt the index"): a past tense (regular, or a common irregular one),
# not a passive ("Caused by …") and not a feeling or state ("Tired of it" stays reported).
_DONE_OPENER: Final = re.compile(
    r"^(?:(?:just|already|finally|only|actually)\s+)?"
    r"(?:(?!embed\b)[a-z]{3,}(?<!e)ed|"
    + "|".join(sorted(IRREGULAR_PAST - PAST_SPELLED_AS_BASE, key=lambda w: (-len(w), w)))
    + r")\s+(?!by\b)",
    _CUE,
)
# Chat drops the "I" ("can't sleep", "need to call the landlord", "thinking about starting
# seeds indoors"): a sentence opening with an auxiliary, a modal or a verb of wanting, liking
# or hoping says it of its speaker (not "have", "feel" or "think": "Have fun!", "Feel better
# soon", "Think of it as …" are said to the listener); "I" (or "I'm" before an -ing word,
# "I've" before "been") is put back and the sentence told in the third person like any
# "I …" sentence.
_ELIDED_I: Final = re.compile(
    r"^(?:had|can|can't|can’t|cannot|cant|couldnt|shouldnt|wouldnt|didnt|could|couldn't|"
    r"couldn’t|should|shouldn't|shouldn’t|"
    r"would|wouldn't|wouldn’t|will|won't|won’t|might|must|need|needed|want|wanted|wanna|"
    r"gotta|love|loved|hate|hated|hope|hoped|felt|miss|missed|wish|prefer|got)\s",
    _CUE,
)
_ELIDED_IM: Final = re.compile(
    r"^(?:thinking|trying|hoping|planning|going\s+(?:to|with)|gonna|feeling|getting|starting|"
    r"looking\s+(?:for|at|into|forward\s+to)|working|considering|leaning|dreading|loving|"
    r"enjoying)\s",
    _CUE,
)
_ELIDED_IVE: Final = re.compile(r"^been\s", _CUE)
# After these the dropped subject is "it" or "that", not "I" ("must have been rough", "gonna
# be a great night", "been a busy week"): the sentence keeps its report verb.
_IT_FOLLOWS: Final = frozenset({"be", "been", "have"})
_IT_BEEN: Final = frozenset(
    {"a", "an", "the", "so", "such", "quite", "really", "pretty", "too", "very", "kind", "sort",
     "ages", "forever", "awhile", "great", "good", "nice", "fun", "hard", "rough", "tough",
     "crazy", "busy", "wild", "amazing", "awesome", "lovely"}
)  # fmt: skip
_STATE_WORDS: Final = frozenset(
    {"tired", "excited", "worried", "stressed", "scared", "bored", "relieved", "pleased",
     "interested", "surprised", "annoyed", "frustrated", "exhausted", "overwhelmed", "confused",
     "disappointed", "embarrassed", "thrilled", "delighted", "amazed", "shocked", "depressed",
     "motivated", "determined", "married", "engaged", "divorced", "retired", "used", "supposed",
     "based", "related", "concerned", "committed", "convinced", "obsessed", "prepared",
     "qualified", "satisfied", "involved", "scheduled", "expected", "needed", "allowed",
     "required", "blocked", "limited", "detailed", "advanced", "experienced", "closed",
     "finished", "done", "planned", "booked", "assigned", "listed", "called", "named"}
)  # fmt: skip


# A short prose head before a colon ("Quick context:", "Lesson for the postmortem:"): dropped,
# except "Decision:", which the decision frames read, and a head that says when a rule holds
# ("Deploys going forward:"), which is part of the rule.
_PROSE_HEAD: Final = re.compile(
    rf"^(?!decision\s*:)(?![^:]*\b{_RULE_TIME}\b)"
    r"[A-Za-z][\w'’-]*(?:\s+[\w'’-]+){0,3}\s*:\s+",
    _CUE,
)


# A listed alternative ("Option A: …", "(B) …", "2) …"): discussion, not a claim; a settling
# turn cites it ("option B then").
_OPTION_WORD: Final = r"(?:option|plan|approach|variant)"
_OPTION_LINE: Final = re.compile(
    rf"^(?:{_OPTION_WORD}\s+[A-Za-z0-9]\s*[:\-–—]|\(?[A-Za-z0-9]\)\s)", _CUE
)


def _word_count(text: str) -> int:
    """Words as `_MIN_WORDS` counts them: "can't" is two ("Kyle can't eat pork" is five)."""
    return len(re.findall(r"\w+", text))


# A head that only announces a rule before a colon ("New rule from now on:", "Action going
# forward:"): the rule's time opens the sentence instead ("From now on, every release …"). A
# head that says more ("For REC experiments from now on:") stays as said, so a signature
# taken across it is still verbatim.
_RULE_HEAD: Final = re.compile(
    rf"^(?P<head>(?:[\w'’-]+\s+){{0,6}}?)(?P<when>{_RULE_TIME})"
    r"(?P<tail>(?:\s+[\w'’-]+){0,3}?)\s*:\s+(?=\S)",
    _CUE,
)
# Head words that only name the announcement itself.
_ANNOUNCING: Final = frozenset(
    {"also", "and", "so", "ok", "okay", "action", "the", "a", "new", "rule", "policy", "item"}
)
# A rule's time said anywhere in a person's sentence ("Performance sets never leave the
# building from now on"), unless the sentence only suggests ("going forward it'd be worth …").
_RULE_SAID: Final = re.compile(rf"\b{_RULE_TIME}\b", _CUE)
_TENTATIVE: Final = re.compile(
    r"\b(?:would|could|might|maybe|perhaps|worth|suggest|propose|wonder)\b|['’]d\b", _CUE
)


def _rule_first(sentence: str) -> str:
    """`sentence` with a head that only announces a rule turned into its opening ("Also the
    rule going forward: stage 1 …" → "Going forward, stage 1 …"); else unchanged."""
    match = _RULE_HEAD.match(sentence)
    if match is None:
        return sentence
    said = f"{match['head']} {match['tail']}".split()
    if any(word.lower() not in _ANNOUNCING for word in said):
        return sentence
    return f"{_cap(normalise_space(match['when']).lower())}, {sentence[match.end() :]}"


# Chat laughter closing a clause ("… never owned a coat lol", "… goes alone haha.", "… bakes
# bread lol, everyone …"): how it was said, not what.
_LAUGHTER: Final = re.compile(
    r"\s+(?:lol|lmao|rofl|haha+|hehe+|xd)(?=\s*(?:[,.!?;:]|$))", re.IGNORECASE
)


# What follows a vocative when the sentence tells rather than asks ("Maya, we have …").
_SUBJECT_AFTER_VOCATIVE: Final = re.compile(r"(?:we|I|you|they|it|there|this|that)\b", _CUE)


def _clean(raw: str, names: Collection[str] = frozenset()) -> str | None:
    """The sentence without lead-ins and backticks, or None when it is not worth a drawer."""
    sentence = raw.strip()
    if sentence.endswith("?") or _CODE.search(sentence) or _OPTION_LINE.match(sentence):
        return None
    # "[shares a photo of a dog]", "[laughs]": what a transcript shows, not what was said
    sentence = without_stage_directions(sentence)
    said_words = _word_count(sentence)
    sentence = _LAUGHTER.sub("", sentence)
    sentence = _rule_first(_LEAD_IN.sub("", sentence.replace("`", "")).strip())
    sentence = _LEAD_IN.sub("", _PROSE_HEAD.sub("", sentence)).strip()
    vocative = _addressed(sentence, names)
    if vocative is not None and _SUBJECT_AFTER_VOCATIVE.match(sentence[vocative.end() :]):
        sentence = sentence[vocative.end() :]  # "dev-agent, we have 143 flags": the claim
    if not sentence or _FILLER.match(sentence) or _ACKNOWLEDGEMENT.match(sentence):
        return None
    words = _word_count(sentence)
    if words < _MIN_WORDS and not (
        said_words >= _MIN_WORDS and words >= _MIN_CLAUSE_WORDS and _SPEAKER_CLAUSE.match(sentence)
    ):
        return None
    return sentence


_COMPLEMENT: Final = re.compile(r"(?:that|to|on|against|upon|with)\b", _CUE)


def _decision_frame(
    sentence: str, proper: Collection[str] | None = None
) -> tuple[str, str, str] | None:
    """(text before the cue, verb, clause) when the speaker is the decider, else None."""
    for pattern, verb in _DECISION_FRAMES:
        match = pattern.search(sentence)
        if match is None:
            continue
        before = sentence[: match.start()].rstrip()
        if before and not before.endswith(","):
            return None  # "After the outage we decided …": not safely re-attributable
        rest = lower_first(sentence[match.end() :], proper)
        if "{verb}" in verb:
            verb = verb.format(verb=normalise_space(match.group("verb")))
        elif verb in ("decided", "agreed") and not _COMPLEMENT.match(rest):
            verb += " that"  # "decided the API …" reads as "decided that the API …"
        return before, verb, rest
    return None


def _imperative_clause(
    sentence: str, speaker: _Speaker, names: Collection[str] = frozenset()
) -> str | None:
    vocative = _addressed(sentence, names)
    match = _IMPERATIVE.match(sentence[vocative.end() :] if vocative else sentence)
    if match is None:
        return None
    directed, _ = _RULE_CUE.get(match.group("cue").lower(), ("", ""))
    subject = vocative["to"] if vocative else speaker.group
    return f"{subject}{directed} {match.group('rest')}"


def _request_frame(
    sentence: str, instruction: _Instruction | None, speaker: _Speaker
) -> tuple[str, str] | None:
    """(verb, action) for an instruction that settles no decision: an AI agent's is advice
    ("suggested that the team restart the worker"), a person's a request of whoever they
    address ("asked the assistant to remind them …", "asked the companion never to suggest
    meal kits"). None when the sentence is no instruction."""
    if instruction is None:
        spoken = _IMPERATIVE.match(sentence)
        if spoken is None or speaker.is_assistant:
            return None
        verb = _OPENING_WORDS.match(spoken["rest"])
        if verb is None or not _is_action_verb(verb.group(0)):
            return None  # "never been to Lisbon": chat that dropped its "I've"
        _, asked = _RULE_CUE.get(spoken["cue"].lower(), ("", "to"))
        return f"asked {speaker.listener} {asked}", spoken["rest"]
    negated = " not" if instruction.negated else ""
    if speaker.is_assistant:
        when = f"{instruction.when} " if instruction.when else ""
        return f"suggested that {when}{speaker.listener}{negated}", instruction.action
    return f"asked {instruction.asked or speaker.listener}{negated} to", instruction.action


def _in_third_person(text: str, speaker: _Speaker, *, named: bool) -> str:
    """`text` as said about `speaker` (their I, we and you rewritten)."""
    return third_person(
        text,
        name=speaker.name,
        group=speaker.group,
        group_singular=speaker.group_singular,
        listener=speaker.listener,
        named=named,
    )


def _with_elided_i(sentence: str, proper: Collection[str]) -> str | None:
    """`sentence` with the "I" that chat dropped put back, or None when it has its subject."""
    words = sentence.split(maxsplit=3)
    if not words or words[0].lower() in proper or any(w.endswith(",") for w in words[:3]):
        return None  # a name, or a sentence adverbial ("Going forward, …", "Looking back, …")
    following = words[1].lower() if len(words) > 1 else ""
    if following in _IT_FOLLOWS or (words[0].lower() == "been" and following in _IT_BEEN):
        return None  # "gonna be a great night", "been a long week": the dropped word is "it"
    lowered = sentence[:1].lower() + sentence[1:]
    if _ELIDED_I.match(sentence):
        return f"I {lowered}"
    if _ELIDED_IM.match(sentence):
        return f"I'm {lowered}"
    if _ELIDED_IVE.match(sentence):
        return f"I've {lowered}"
    return None


def _done_opener(sentence: str, proper: Collection[str]) -> bool:
    """Whether `sentence` opens with the past-tense verb of a report its speaker made."""
    first = sentence.split(maxsplit=1)[0].lower() if sentence.strip() else ""
    return bool(_DONE_OPENER.match(sentence)) and first not in proper and first not in _STATE_WORDS


def _frame(
    sentence: str,
    memory_type: str,
    speaker: _Speaker,
    *,
    companion: bool,
    when: datetime | None,
    proper: Collection[str] = frozenset(),
) -> tuple[str, str]:
    """(framed content, its clause after the attribution) for one kept sentence; `proper`:
    the session's names (`proper_words`), which keep their capital after "… that"."""

    def rewrite(text: str, *, named: bool = True) -> str:
        return _in_third_person(text, speaker, named=named)

    decision = _decision_frame(sentence, proper) if memory_type == "decision" else None
    imperative = (
        _imperative_clause(sentence, speaker, proper) if memory_type == "directive" else None
    )
    instruction = _bare_imperative(sentence, proper)
    request = None
    if memory_type not in CANONICAL_TYPES:
        request = _request_frame(sentence, instruction, speaker)
        instruction = None
    if instruction is not None:
        # "Order 5 tonnes from Ohio" → "Kyle decided to order 5 tonnes from Ohio"; "let's
        # not add Fargate" → "Kyle decided not to add Fargate"; "Put that in the checklist
        # from now on" → "Kyle directed that the team put that in …".
        negated = " not" if instruction.negated else ""
        if instruction.asked is not None and memory_type == "decision":
            verb = f"asked {instruction.asked or speaker.listener} to"  # "Tomás, please …"
        elif memory_type == "decision" and instruction.when:
            verb = f"decided that {instruction.when} {speaker.group}{negated}"  # "if …, stop …"
        elif memory_type == "decision":
            verb = f"decided{negated} to"
        elif instruction.asked:  # "Rosa, pull the infected plants from now on"
            verb = f"asked {instruction.asked}{negated} to"
        else:
            since = f"{instruction.when} " if instruction.when else ""
            verb = f"directed that {since}{speaker.group}{negated}"
        action = instruction.action
        # the first word is the verb here, whoever shares its name ("Mark", "Re-quote")
        decision = ("", verb, _lower_word(action))
    if request is not None:
        verb, action = request
        lead, clause = f"{speaker.name} {verb}", rewrite(lower_first(action, proper))
    elif decision is not None:
        before, verb, rest = decision
        lead = f"{rewrite(before, named=False)} {speaker.name} {verb}".strip()
        clause = rewrite(rest)
    elif imperative is not None:
        lead, clause = f"{speaker.name} directed that", rewrite(imperative)
    elif _FIRST_PERSON_LEAD.match(sentence):
        lead, clause = "", rewrite(sentence, named=False)
    elif (restored := _with_elided_i(sentence, proper)) is not None:
        lead, clause = "", rewrite(restored, named=False)
    elif _done_opener(sentence, proper):
        lead, clause = speaker.name, rewrite(sentence[:1].lower() + sentence[1:])
    else:
        verb = _COMPANION_REPORT_VERB if companion else _REPORT_VERB[memory_type]
        if memory_type == "decision" and _REPORTED_DECISION.search(sentence):
            verb = "recorded that"  # "… we decided …" inside: reported, not decided twice
        lead, clause = f"{speaker.name} {verb}", rewrite(lower_first(sentence, proper))
    clause = dated(clause.rstrip(" .!;:,"), when)
    content = _cap(f"{lead} {clause}".strip()) + "."
    if memory_type == "want":
        content += _WANT_FOLLOW_UP
    return content, clause


# A verbless fragment's report verb takes its object directly ("noted about 14 stops per
# shift"): "noted that" would need a clause.
_FRAGMENT_VERB: Final = {"bug": "reported", "implementation": "reported", "spike": "reported"}


def _fragment_frame(
    sentence: str,
    memory_type: str,
    speaker: _Speaker,
    *,
    companion: bool,
    when: datetime | None,
    proper: Collection[str],
    question: Question | None,
) -> tuple[str, str]:
    """(framed content, clause) for a verbless fragment (`reads_as_fragment`) that starts a
    drawer: "The user noted about 14 stops per shift."; an answer keeps the question it
    answers, quoted, after the speaker who answered it ("Archive-agent answered Ines's
    question "3x on how many pages": about 41,000 pages from before 1900.")."""
    clause = _in_third_person(lower_first(sentence, proper), speaker, named=True)
    clause = dated(clause.rstrip(" .!;:,"), when)
    if question is not None:
        asked = f'{question.asker}\'s question "{_cap(question.text)}"'
        lead = f"{speaker.name} answered {asked}:"
    else:
        verb = "mentioned" if companion else _FRAGMENT_VERB.get(memory_type, "noted")
        lead = f"{speaker.name} {verb}"
    content = _cap(f"{lead} {clause}") + "."
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


@dataclass(frozen=True, slots=True)
class Said:
    """One sentence of a session that may become a drawer.

    `text` is what the classifier reads and the framing rewrites; `cited` every chunk it
    came from (a settled option also cites the turn that described it); `settled` is set
    when a short settling turn ("option B then") was resolved: it is a decision by rule.
    """

    turn: _Turn
    text: str
    cited: tuple[str, ...]
    settled: bool = False
    answers: Question | None = None  # set on a turn's first sentence when it replies to one


@dataclass(frozen=True, slots=True)
class Question:
    """The question another speaker asked just before a turn: a verbless answer ("About
    41,000 pages from before 1900.") says nothing without it."""

    asker: str  # the asker's mid-sentence name
    text: str  # the question as asked, without its question mark
    chunk_id: str


# "option B", "plan 2", "(b)": a named alternative, in a settling turn or where it is described.
_OPTION_REF: Final = re.compile(rf"\b{_OPTION_WORD}\s+(?P<key>[A-Za-z0-9])\b", _CUE)
_SETTLING_MAX_WORDS: Final = 10


def _option_text(turn_text: str, key: str) -> str | None:
    """What an earlier turn said option `key` is: the clause after "(B)", "B)" or "option B:",
    up to the next alternative or the end of its sentence."""
    marker = re.compile(
        rf"(?:\(\s*{re.escape(key)}\s*\)|(?<![\w(]){re.escape(key)}\)|\boption\s+"
        rf"{re.escape(key)}\s*[:\-–—])\s*(?P<text>[^.;!?]+)",
        re.IGNORECASE,
    )
    match = marker.search(turn_text)
    if match is None:
        return None
    text = re.split(r",?\s+or\s+\(|,?\s+or\s+[A-Za-z0-9]\)|\s+\([A-Za-z0-9]\)", match["text"])[0]
    text = text.strip(" ,:;-")
    return text if len(text.split()) >= 3 else None


def _settled_option(sentence: str, earlier: Sequence[_Turn]) -> tuple[str, _Turn] | None:
    """(the settled option's text, the turn that described it) for a short settling turn."""
    raw = sentence.strip()
    if raw.endswith("?") or len(raw.split()) > _SETTLING_MAX_WORDS:
        return None
    reference = _OPTION_REF.search(raw)
    if reference is None:
        return None
    for turn in reversed(earlier):
        described = _option_text(turn.text, reference["key"])
        if described is not None:
            return f"option {reference['key']}: {described}", turn
    return None


def said_sentences(request: ComposeInput) -> list[Said]:
    """Every sentence of the session worth typing, in the order it was said."""
    companion = request.mode == COMPANION_MODE
    cast = _Cast(request)
    names = _session_names(request)
    said: list[Said] = []
    earlier: list[_Turn] = []
    for chunk in request.chunks:
        for turn in _turns(chunk, cast):
            if companion and turn.speaker.is_assistant:
                earlier.append(turn)  # the companion's own words are never its memories
                continue
            asked = _question_before(turn, earlier)
            for index, raw in enumerate(split_sentences(turn.text)):
                settled = None if companion else _settled_option(_LEAD_IN.sub("", raw), earlier)
                if settled is not None:
                    text, source = settled
                    cited = tuple(dict.fromkeys((source.chunk_id, turn.chunk_id)))
                    said.append(Said(turn, text, cited, settled=True))
                    continue
                sentence = _clean(raw, names)
                if sentence is not None:
                    answers = asked if index == 0 else None
                    said.append(Said(turn, sentence, (turn.chunk_id,), answers=answers))
            earlier.append(turn)
    return said


# A question worth quoting beside its answer: short, and in no one's first person.
_QUOTABLE_QUESTION_CHARS: Final = 120
_MIN_QUESTION_WORDS: Final = 3  # "Why?" says nothing beside its answer


def _question_before(turn: _Turn, earlier: Sequence[_Turn]) -> Question | None:
    """The question that ends the turn just before `turn`, when another speaker asked it."""
    if not earlier or earlier[-1].speaker.label == turn.speaker.label:
        return None
    sentences = split_sentences(earlier[-1].text)
    last = sentences[-1].strip() if sentences else ""
    if not last.endswith("?"):
        return None
    # "Fleet-agent, what's the pattern?": the answerer's name is who was asked, not the question
    text = re.sub(
        rf"^{re.escape(turn.speaker.name)}\s*,\s*", "", last.rstrip("?").strip(), flags=_CUE
    )
    if (
        len(text.split()) < _MIN_QUESTION_WORDS
        or len(text) > _QUOTABLE_QUESTION_CHARS
        or first_person_count(text)
        or '"' in text
    ):
        return None
    return Question(earlier[-1].speaker.name, text, earlier[-1].chunk_id)


def _session_names(request: ComposeInput) -> frozenset[str]:
    """The words the session uses as names: capitalised mid-sentence in any of its turns, and
    the words of its speakers' names."""
    cast = _Cast(request)
    turns = [turn for chunk in request.chunks for turn in _turns(chunk, cast)]
    names = {w.lower() for t in turns for w in re.findall(r"[A-Za-z][\w'’-]*", t.speaker.name)}
    return proper_words(t.text for t in turns) | names


def _canonical_by_rule(sentence: Said, names: Collection[str] = frozenset()) -> str | None:
    """The canonical type the sentence's own words settle, over the classifier's guess: a
    settled option or a decider's cue ("we decided", "let's go with") is a decision, an
    imperative ("Never …", "Always …") a directive. A person's sentence that opens a rule
    ("From now on …", "Going forward …") is a directive; a person's bare imperative ("Order
    5 tonnes from Ohio") settles what will be done: a directive when it sets a standing rule
    ("… every …"), else a decision. An AI agent's ("Try restarting it") is advice, left to
    the classifier. None when no rule applies."""
    if sentence.settled or _decision_frame(sentence.text) is not None:
        return "decision"
    if _IMPERATIVE.match(sentence.text):
        return "directive"
    if sentence.turn.speaker.is_assistant:
        return None
    ruled = _RULE_OPENING.match(sentence.text) or _RULE_SAID.search(sentence.text)
    if ruled and not _TENTATIVE.search(sentence.text):
        # "From now on firmware updates go on one printer first", "Performance sets never
        # leave the building from now on"; not "going forward it'd be worth adding …"
        return "directive"
    instruction = _bare_imperative(sentence.text, names)
    if instruction is not None and not instruction.for_speaker:
        return "directive" if _STANDING_RULE.search(sentence.text) else "decision"
    return None


def extract_drafts(
    request: ComposeInput,
    types: Sequence[str],
    *,
    said: Sequence[Said] | None = None,
    rules: DraftRules = DEFAULT_DRAFT_RULES,
) -> list[DraftProposal]:
    """The drafts of one session, given each said sentence's type (`NOT_A_MEMORY` or a type
    outside the library: no drawer), in the order they were said."""
    library = library_of(request.mode)
    said = said_sentences(request) if said is None else said
    if len(types) != len(said):
        raise ValueError(f"{len(types)} types for {len(said)} said sentences")
    companion = request.mode == COMPANION_MODE
    room = choose_room(request)
    proper = _session_names(request)
    drafts: list[DraftProposal] = []
    index_of: dict[str, int] = {}
    growing: _Growing | None = None  # the last draft, while the same turn may add to it
    for sentence, given in zip(said, types, strict=True):
        kind = given if companion else _canonical_by_rule(sentence, proper) or given
        if kind == NOT_A_MEMORY or not library.has_type(kind):
            continue
        turn = sentence.turn
        # "9 of the 40 prints failed. All on bank B, all PETG jobs.": the fragment finishes
        # the sentence before it, whatever type the classifier gave it alone.
        fragment = kind not in CANONICAL_TYPES and reads_as_fragment(sentence.text)
        joins = fragment and growing is not None and growing.turn is turn
        if growing is not None and (joins or growing.takes(sentence, kind, rules)):
            merged = _continued(
                drafts[growing.index],
                sentence,
                growing.kind,
                rules,
                fragment=fragment,
                proper=proper,
            )
            if merged is not None:
                drafts[growing.index] = merged
                growing = replace(growing, sentences=growing.sentences + 1)
                continue
        question = sentence.answers if fragment else None
        framing = partial(_fragment_frame, question=question) if fragment else _frame
        content, clause = framing(
            sentence.text,
            kind,
            turn.speaker,
            companion=companion,
            when=turn.occurred_at,
            proper=proper,
        )
        content, clause = tidy_chat_spelling(content), tidy_chat_spelling(clause)
        cited = sentence.cited
        if question is not None:  # the drawer quotes the question: it came from both
            cited = tuple(dict.fromkeys((question.chunk_id, *cited)))
        if len(content) > rules.max_content_chars:
            continue  # cutting a claim short would change what it says
        key = normalise_space(content)
        if key in index_of:  # said twice: one drawer citing both chunks
            earlier = drafts[index_of[key]]
            both = tuple(dict.fromkeys((*earlier.derived_from, *cited)))
            drafts[index_of[key]] = replace(earlier, derived_from=both)
            continue
        signature = None
        if kind in CANONICAL_TYPES:
            signature = choose_signature(
                sentence.text, content, clause, min_chars=rules.min_signature_chars
            )
        index_of[key] = len(drafts)
        growing = _Growing(len(drafts), turn, kind) if kind not in CANONICAL_TYPES else None
        drafts.append(
            DraftProposal(
                content=content,
                memory_type=kind,
                wing=room.partition("/")[0],
                room=room,
                derived_from=cited,
                pin_status=PIN_ACTIVE,  # pinning is an operator's decision, never inferred
                signature=signature,
                speaker=turn.speaker.label,
            )
        )
    return [draft for draft in drafts if _word_count(draft.content) >= _MIN_WORDS]


# A sentence opening with a word that points back at the sentence before it.
_POINTS_BACK: Final = re.compile(
    r"^(?:it|it['’]s|that|that['’]s|this|they|they['’]re|those|these|which)\b", _CUE
)


@dataclass(frozen=True)
class _Growing:
    """A draft that later sentences of the same turn and type may join (up to the rules'
    sentence limit): "I went to the support group yesterday. It was powerful." is one memory,
    and one drawer keeps its context for whoever reads or searches it. Decisions and
    directives never grow: each stands alone with its own signature."""

    index: int
    turn: _Turn
    kind: str
    sentences: int = 1

    def takes(self, sentence: Said, kind: str, rules: DraftRules) -> bool:
        """Whether `sentence` joins this draft: said in the same turn, with the same type, or
        opening with a word that points back at what was just said ("That's way above our
        threshold.", "It was powerful."), which a drawer of its own would leave pointing at
        nothing; a decision or directive stays a drawer of its own."""
        points_back = kind not in CANONICAL_TYPES and bool(_POINTS_BACK.match(sentence.text))
        return (
            sentence.turn is self.turn
            and (kind == self.kind or points_back)
            and not sentence.settled
            and self.sentences < rules.max_sentences
        )


def _continued(
    draft: DraftProposal,
    sentence: Said,
    kind: str,
    rules: DraftRules,
    *,
    fragment: bool = False,
    proper: Collection[str] = frozenset(),
) -> DraftProposal | None:
    """`draft` with `sentence` added, said in the third person (a verbless `fragment` after a
    comma, as the end of the sentence before it); None when it would be too long (the
    sentence then becomes a drawer of its own)."""
    said = sentence.text if not fragment else lower_first(sentence.text, proper)
    if not fragment:
        # "Added a dashboard alert.", "need to rewrite the discussion": the subject chat
        # dropped is the speaker, said again ("Claude added …", "Ji-woo needs to …").
        if (restored := _with_elided_i(said, proper)) is not None:
            said = restored
        elif _done_opener(said, proper):
            said = f"I {said[:1].lower()}{said[1:]}"
    said = _in_third_person(said, sentence.turn.speaker, named=True)
    text = dated(said.rstrip(" .!;:,"), sentence.turn.occurred_at)
    head = draft.content
    follow_up = _WANT_FOLLOW_UP if kind == "want" and head.endswith(_WANT_FOLLOW_UP) else ""
    head = head.removesuffix(follow_up)
    text = tidy_chat_spelling(text)
    if fragment:
        content = f"{head.rstrip('.')}, {text}.{follow_up}"
    else:
        content = f"{head} {_cap(text)}.{follow_up}"
    if len(content) > rules.max_content_chars:
        return None
    cited = tuple(dict.fromkeys((*draft.derived_from, *sentence.cited)))
    return replace(draft, content=content, derived_from=cited)


async def type_sentences(request: ComposeInput, said: Sequence[Said], embed: Embed) -> list[str]:
    """Each said sentence's type by the library's shipped classifier (one embedder call). With
    vectors of a dimension it was not trained on (another embedding model), the sentence's
    words alone decide rather than the compose failing."""
    if not said:
        return []
    model = load_type_model(request.mode)
    vectors = await embed([s.text for s in said])
    fit = not model.unfit_for(int(vectors.shape[1]) if len(vectors) else 0, "")
    return [
        model.classify(s.text, v if fit else None, need_majority=_needs_certainty(s))
        for s, v in zip(said, vectors, strict=True)
    ]


def _needs_certainty(sentence: Said) -> frozenset[str]:
    """The types a sentence takes only when the classifier is sure (P > 1/2).

    - An AI agent mostly reports, proposes and implements, while the people it works for
      decide and direct, so an agent's sentence that merely leans towards a decision or a
      directive (a status report, "the changes go live tomorrow") is typed as what else it is.
    - A sentence whose verb states how things are or were ("the deadline is Friday", "that's
      what the protocol says", "the team has four crowns back", "bank A printed the file")
      reports; it leans towards a ruling only because it sounds settled.

    - A directive is a standing rule, and a rule says so: an obligation ("must", "has to",
      "needs to"), a scope ("every", "any", "nobody", "only"), a time it holds ("from now on",
      "until", "whenever") or a prohibition. A sentence without any such word ("inspectors
      keep losing forms in basements", "the photo desk says the CMS strips credits") is a
      directive only when the classifier is sure.

    A decision relayed in a decider's words ("we decided …") or an imperative is still typed
    by rule (`_canonical_by_rule`)."""
    undone = frozenset() if _TELLS_A_DEED.search(sentence.text) else frozenset({"implementation"})
    if sentence.turn.speaker.is_assistant or reads_as_report(sentence.text):
        return CANONICAL_TYPES | undone
    if not (_STANDING_RULE.search(sentence.text) or _OBLIGATION.search(sentence.text)):
        return frozenset({"directive"}) | undone
    return undone


# An implementation tells of work done: a verb in the past ("added", "rebuilt"), a perfect
# ("has been", "have moved") or a change in force ("now", "is live"). An offer ("can trigger
# the ticket"), a plan ("will go with"), how something works ("requests hit Envoy") or a
# finding ("the package has a postinstall script") is an implementation only when the
# classifier is sure (`_needs_certainty`).
_TELLS_A_DEED: Final = re.compile(
    r"\b(?:[a-z]{3,}(?<!e)ed|"
    + "|".join(sorted(IRREGULAR_PAST, key=lambda w: (-len(w), w)))
    + r"|now|live|done|has\s+been|have\s+been|['’]ve\s+\w+)\b",
    _CUE,
)


# Beside `_STANDING_RULE`'s words, what else makes a sentence a rule (`_needs_certainty`): an
# obligation, a scope, a limit in time, a prohibition.
_OBLIGATION: Final = re.compile(
    r"\b(?:must|mustn't|should|shouldn't|shall|needs?\s+to|has\s+to|have\s+to|got\s+to|"
    r"everyone|everything|each|anyone|anybody|anything|no\s+one|nobody|nothing|none|only|"
    r"from\s+(?:today|tomorrow|next)|until|unless|rule|policy|mandatory|required|requires?|"
    r"allowed|forbidden|don't|do\s+not|doesn't|does\s+not|make\s+sure|ensure|^\W*no)\b",
    _CUE,
)


_VERB_TOKEN: Final = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")
_I_FORM: Final = re.compile(r"I(?:['’][a-z]+)?$")
# Words that make a sentence an act to be done: modals, "let's", the future.
_ACT_MARKERS: Final = frozenset(
    {"will", "shall", "should", "must", "can", "could", "would", "may", "might", "won't",
     "can't", "cannot", "shouldn't", "mustn't", "don't", "doesn't", "never", "always",
     "please", "let's", "lets", "gonna", "need", "needs"}
)  # fmt: skip
_COPULAS: Final = frozenset(
    {"is", "are", "was", "were", "am", "isn't", "aren't", "wasn't", "weren't"}
)  # fmt: skip
_HAVE: Final = frozenset({"has", "have", "had", "hasn't", "haven't", "hadn't"})
# "'s" is "is" after these (it's, that's), a possessive after a name ("Noor's knee").
_IS_AFTER: Final = frozenset(
    {"it", "that", "this", "there", "here", "what", "who", "he", "she", "everything",
     "nothing", "something"}
)  # fmt: skip


def reads_as_report(text: str) -> bool:
    """Whether the sentence's first verb states how things are or were: a copula (not "is
    moving", "is to"), "has"/"had" (not "has to"), or a past tense. A modal, "let's",
    "never" or "always" anywhere, or a present-tense verb first ("4.12 ships Thursday"),
    reads as an act; so does a sentence whose verb is not found (an imperative, a fragment):
    no claim is made about it."""
    said = _VERB_TOKEN.findall(text)
    # a capitalised word inside the sentence is a name or a month ("the May deadline")
    words = [
        "" if index and w[:1].isupper() and not _I_FORM.match(w) else w.lower().replace("’", "'")
        for index, w in enumerate(said)
    ]
    if any(word in _ACT_MARKERS or word.endswith(("'ll", "'d")) for word in words):
        return False  # "those icons are decorative; I'll add aria-hidden"
    for index, word in enumerate(words):
        following = words[index + 1] if index + 1 < len(words) else ""
        head, _, tail = word.partition("'")
        copula = word in _COPULAS or tail in ("re", "m") or (tail == "s" and head in _IS_AFTER)
        if copula:
            return not (following.endswith("ing") or following in ("to", "going"))
        if word in _HAVE:
            return following != "to"
        if (len(word) > 4 and word.endswith("ed") and not word.endswith("eed")) or (
            word in IRREGULAR_PAST - PAST_SPELLED_AS_BASE
        ):
            return True
        if _finite_verb(word):
            return False
    return False


async def compose_json(
    request: ComposeInput, embed: Embed, *, rules: DraftRules = DEFAULT_DRAFT_RULES
) -> str:
    """The extractive drafts of `request` as output-schema JSON text."""
    library_of(request.mode)  # an unknown mode is refused before the embedder is called
    said = said_sentences(request)
    types = await type_sentences(request, said, embed)
    drafts = extract_drafts(request, types, said=said, rules=rules)
    return json.dumps({"drawers": [d.to_json() for d in drafts]}, ensure_ascii=False, indent=2)


class ExtractiveInvoker:
    """The offline, deterministic invoker: same session in, same JSON out.

    It ignores `prompt_text`: its rules are code and its classifier a shipped model, both
    versioned by `model`. `embed` is the embedder tier's client (sentences are typed by
    their embedding).
    """

    def __init__(self, embed: Embed, *, rules: DraftRules = DEFAULT_DRAFT_RULES) -> None:
        self.name = EXTRACTIVE_NAME
        self.model = EXTRACTIVE_MODEL
        self._embed = embed
        self._rules = rules

    async def compose(self, request: ComposeInput) -> str:
        """The drafts of `request` as JSON text in the schema `parse_output` reads."""
        return await compose_json(request, self._embed, rules=self._rules)
