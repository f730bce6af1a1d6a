"""The text of a drawer: sentences, signature phrases, and third-person rewriting.

Simple, tested rules rather than a parser:

- `split_sentences`: blank lines and list items are hard breaks, wrapped lines join, and a
  "." after a common abbreviation or an initial does not end a sentence.
- `signature_in`: a signature occurs in content case-sensitively once whitespace runs are
  collapsed, and on word boundaries at its ends (half a word never hits the keyword index).
- `third_person` rewrites first-person words and makes the verb after a rewritten subject
  agree ("I prefer" → "Kyle prefers", "we use" → "the team uses"); once the speaker has been
  named, their possessives and objects read "their"/"them" ("in my salad" → "in their
  salad").
- `choose_signature` picks the longest 3–8 word phrase that starts and ends on a content
  word, ends its clause when one can, and survives framing verbatim, so the keyword index
  can hit it exactly.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from typing import Final

EDGE_PUNCTUATION: Final = " .,;:!?\"'“”‘’()[]"

# An AI agent's handle: "coding-agent", "ops_bot", "reviewer-bot", "support.ai".
AGENT_HANDLE: Final = re.compile(r"\b[\w.]+[-_.](?:agent|bot|ai|assistant)\b", re.IGNORECASE)


def normalise_space(text: str) -> str:
    """Whitespace runs collapsed to one space, ends stripped (how signatures are compared)."""
    return " ".join(text.split())


def signature_in(phrase: str, content: str) -> bool:
    """Whether `phrase` occurs in `content` case-sensitively, on word boundaries at its ends.

    Both are whitespace-normalised first, so line breaks and double spaces never matter.
    """
    phrase, content = normalise_space(phrase), normalise_space(content)
    if not phrase:
        return False
    start = content.find(phrase)
    while start != -1:
        end = start + len(phrase)
        before_ok = start == 0 or not (phrase[0].isalnum() and content[start - 1].isalnum())
        after_ok = end == len(content) or not (phrase[-1].isalnum() and content[end].isalnum())
        if before_ok and after_ok:
            return True
        start = content.find(phrase, start + 1)
    return False


# Abbreviations whose trailing "." does not end a sentence.
_ABBREVIATIONS: Final = frozenset(
    {"e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "st", "no", "cf", "approx", "fig"}
)
_BOUNDARY: Final = re.compile(r"[.!?]+[\"'”’)\]]*(?=\s+[\"'“‘(\[]?[A-Za-z0-9])")
# Chat that never capitalises ("can't sleep. third night shift in a row") still ends its
# sentences; before a lower-case word the stop must follow a plain word (not "U.S", "p.m",
# an abbreviation or an initial) and not be an ellipsis.
_PLAIN_WORD: Final = re.compile(r"[A-Za-z0-9'’]{2,}[\"'”’)\]]*")
# Units and short forms that end with "." mid-sentence before a lower-case word ("5 min. after").
_SHORT_FORMS: Final = frozenset(
    {"incl", "min", "max", "sec", "hr", "hrs", "mins", "jr", "sr", "ft", "oz", "lb", "lbs", "kg",
     "km", "mo", "yr", "yrs", "wk", "wks", "pt", "pts", "dept", "est", "ref", "mt", "mtg"}
)  # fmt: skip
_LIST_ITEM: Final = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")


def split_sentences(text: str) -> list[str]:
    """Sentences of `text`; blank lines and list items are hard breaks, wrapped lines join."""
    paragraphs: list[list[str]] = []
    for line in text.splitlines():
        if not line.strip():
            paragraphs.append([])
            continue
        item = _LIST_ITEM.match(line)
        if item or not paragraphs or not paragraphs[-1]:
            paragraphs.append([line[item.end() :] if item else line])
        else:
            paragraphs[-1].append(line)
    sentences: list[str] = []
    for paragraph in paragraphs:
        joined = normalise_space(" ".join(paragraph))
        start = 0
        for boundary in _BOUNDARY.finditer(joined):
            words = joined[start : boundary.start()].split()
            last = words[-1] if words else ""
            initial = len(last) == 1 and last.isupper()  # "J. Smith"
            if joined[boundary.start()] == "." and (last.lower() in _ABBREVIATIONS or initial):
                continue
            following = joined[boundary.end() :].lstrip()
            after = following[:1]
            stop = boundary.group()
            if stop.startswith("..") and joined[boundary.start() - 1 : boundary.start()] == " ":
                continue  # "SELECT ... FOR UPDATE": a spaced ellipsis leaves words out mid-sentence
            if not after.isalnum() and following.lstrip("\"'“‘([")[:1].islower():
                continue  # "… [shares a photo]" or "… (see below)": not a new sentence
            if after.islower() and (
                not _PLAIN_WORD.fullmatch(last)
                or last.lower() in _SHORT_FORMS
                or stop.startswith("..")
            ):
                continue
            sentences.append(joined[start : boundary.end()].strip())
            start = boundary.end()
        if joined[start:].strip():
            sentences.append(joined[start:].strip())
    return sentences


# ---------------------------------------------------------------- third person

_SIGNATURE_WORDS: Final = (3, 8)

_TOKEN: Final = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")
_MODALS: Final = frozenset(
    {"can", "could", "will", "would", "shall", "should", "may", "might", "must", "can't",
     "couldn't", "won't", "wouldn't", "shouldn't", "didn't", "did", "had", "hadn't", "cannot"}
)  # fmt: skip
_ADVERBS: Final = frozenset(
    {"also", "really", "just", "never", "always", "still", "only", "usually", "often",
     "actually", "definitely", "totally", "honestly", "already", "sometimes", "rarely", "mostly",
     "generally", "truly", "absolutely", "even", "probably"}
)  # fmt: skip
# Common irregular past tenses: kept as they are after a third-person subject, and (less the
# forms spelled like their base, `PAST_SPELLED_AS_BASE`) the verbs a bare report may open with.
IRREGULAR_PAST: Final = frozenset(
    {"went", "said", "thought", "felt", "made", "took", "got", "saw", "knew", "found", "told",
     "left", "kept", "ran", "wrote", "chose", "spent", "built", "bought", "brought", "came",
     "began", "became", "gave", "heard", "meant", "met", "paid", "put", "read", "sent", "set",
     "sat", "slept", "stood", "understood", "won", "lost", "forgot", "ate", "drank", "sold",
     "drove", "flew", "wore", "broke", "fell", "caught", "taught", "held", "led", "fed", "lent",
     "hid", "rode", "rose", "shook", "threw", "drew", "grew", "swam", "sang", "rang", "dug",
     "hung", "fought", "sought", "spoke", "woke", "froze", "stole", "forgave", "bit", "lit",
     "shot", "tore", "swore", "fled", "bled", "bent", "dealt", "learnt", "burnt", "knelt",
     "leapt", "crept", "swept", "wept", "slid", "stuck", "struck", "sank", "shrank", "withdrew",
     "overslept", "mistook", "overtook", "rebuilt", "rewrote", "reran", "redid", "did", "was"}
)  # fmt: skip
# Pasts an imperative shares ("Put it on the list", "Read the spec", "Set a reminder").
PAST_SPELLED_AS_BASE: Final = frozenset({"put", "read", "set"})
# Chat's apostrophe-less negations, spelled out whatever the subject ("I cant" → "can't").
_UNMARKED_NOT: Final = {"cant": "can't", "wont": "won't", "didnt": "didn't",
                        "couldnt": "couldn't", "wouldnt": "wouldn't", "shouldnt": "shouldn't",
                        "wasnt": "wasn't", "werent": "weren't"}  # fmt: skip
_SINGULAR: Final = {"am": "is", "are": "is", "were": "was", "have": "has", "do": "does",
                    "go": "goes", "don't": "doesn't", "haven't": "hasn't", "aren't": "isn't",
                    "weren't": "wasn't", "wanna": "wants to", "gotta": "has to",
                    "dont": "doesn't", "havent": "hasn't", **_UNMARKED_NOT}  # fmt: skip
_PLURAL: Final = {"am": "are", "was": "were", "wanna": "want to", "gotta": "have to",
                  "dont": "don't", "havent": "haven't", **_UNMARKED_NOT}  # fmt: skip
# Chat's apostrophe-less "I'm" and "I've" (the contraction each stands for).
_UNMARKED_I: Final = {"im": "m", "Im": "m", "ive": "ve"}


# Prefixes that keep a verb's past irregular: misspoke, overheard, undertook, outgrew,
# upheld. Not "re": "resent" and "relent" are verbs of their own (the re- pasts that occur,
# "rebuilt", "rewrote", are listed).
_VERB_PREFIXES: Final = ("mis", "over", "under", "out", "with", "fore", "up")


def _irregular_past(lower: str) -> bool:
    """Whether `lower` is a known irregular past, bare or after a verb prefix (never one
    spelled like its base: "upset", "misread" may be present tense)."""
    if lower in IRREGULAR_PAST:
        return True
    return any(
        lower.startswith(prefix) and lower[len(prefix) :] in IRREGULAR_PAST - PAST_SPELLED_AS_BASE
        for prefix in _VERB_PREFIXES
    )


def _regular_past(lower: str) -> bool:
    return lower.endswith("ed") and not lower.endswith("eed")


def _conjugate(verb: str, *, singular: bool) -> str:
    """`verb` agreeing with a third-person subject (the word after "I" or "we")."""
    lower = verb.lower().replace("’", "'")
    if not singular:
        return _PLURAL.get(lower, verb)
    if lower in _SINGULAR:
        return _SINGULAR[lower]
    past = _regular_past(lower) or _irregular_past(lower)
    if lower in _MODALS or past or "'" in lower or lower.endswith("s"):
        return verb
    if lower.endswith(("sh", "ch", "x", "z", "o")):
        return verb + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


# Contractions after a rewritten subject: (singular form, plural form).
_AUX: Final = {"m": ("is", "are"), "re": ("is", "are"), "ve": ("has", "have"),
               "d": ("would", "would"), "ll": ("will", "will")}  # fmt: skip
# Past participles that make "'d" read "had" ("I'd been", "we'd gone"), beside "better"
# ("I'd better") and regular participles ("I'd finished").
_HAD_AFTER: Final = frozenset(
    {"better", "been", "had", "gone", "done", "seen", "known", "taken", "given", "forgotten",
     "heard", "told", "made", "got", "gotten", "left", "met", "said", "thought", "felt",
     "found", "kept", "lost", "spent", "bought", "brought", "run", "written", "eaten",
     "driven", "flown", "worn", "broken", "fallen", "begun", "become", "come", "grown"}
)  # fmt: skip


def _aux(tail: str, following: str | None, *, singular: bool, past_told: bool = False) -> str:
    """The auxiliary a contraction stands for after a rewritten subject: "'d" is "had"
    before a past participle or "better" (or, in a sentence that tells of the past, a
    participle spelled like its base: "we'd set them to 0.55 A"), else "would"."""
    if tail == "d" and following is not None:
        lower = following.lower()
        if (
            lower in _HAD_AFTER
            or _regular_past(lower)
            or (past_told and lower in _PAST_SPELLED_AS_BASE_TOO)
        ):
            return "had"
    return _AUX[tail][0 if singular else 1]


def third_person(
    text: str,
    *,
    name: str,
    group: str,
    group_singular: bool = True,
    listener: str = "",
    named: bool = False,
) -> str:
    """`text` with first-person words rewritten: I/me/my → `name`, we/us/our → `group`.

    With `listener`, second-person words (you/your) become it too. The verb right after a
    rewritten subject (past any adverbs) is made to agree with it. Once `name` has been said
    (in `text`, or before it when `named`), my/me/myself read their/them/themself: "Kyle
    can't stand tomatoes in their salad". Nothing is capitalised: the caller knows where
    the sentence starts.
    """
    text = _WOULD_ADVISE.sub(r"\g<who> \g<verb>", text)
    pieces = _TOKEN.split(text)
    words = _TOKEN.findall(text)
    # A sentence that tells of the past elsewhere keeps "hit", "set", "cut" past too ("we
    # load-tested at 50k but we hit 180k").
    past_told = _PAST_TOLD.search(text) is not None or any(
        (_regular_past(w.lower()) or _irregular_past(w.lower()))
        and w.lower() not in _PAST_SPELLED_AS_BASE_TOO
        for w in words
    )
    out: list[str] = [pieces[0]]
    pending: bool | None = None  # agreement owed by the next verb: singular or plural
    for index, word in enumerate(words):
        lower = word.replace("’", "'").lower()
        head, _, tail = lower.partition("'")
        following = words[index + 1] if index + 1 < len(words) else None
        subject: tuple[str, bool] | None = None
        replacement = word
        if len(word) > 1 and word.isupper():
            pass  # an acronym ("US", "IT"), not a pronoun
        elif lower == "i":
            subject = (name, True)
        elif head == "i" and tail in _AUX:
            replacement = f"{name} {_aux(tail, following, singular=True, past_told=past_told)}"
        elif word in _UNMARKED_I:  # chat's "im", "Im", "ive" ("Ive" may be a name)
            replacement = f"{name} {_AUX[_UNMARKED_I[word]][0]}"
        elif lower == "mine" and index and words[index - 1].lower() in _DETERMINERS:
            pass  # "the mine planner", "a gold mine": the noun, not the pronoun
        elif lower in ("me", "myself", "my", "mine"):
            if named:
                replacement = {"me": "them", "myself": "themself", "my": "their"}.get(
                    lower, "theirs"
                )
            else:
                replacement = name + ("'s" if lower in ("my", "mine") else "")
        elif lower == "we":
            subject = (group if group_singular or not named else "they", group_singular)
        elif head == "we" and tail in _AUX:
            people = group if group_singular or not named else "they"
            replacement = (
                f"{people} {_aux(tail, following, singular=group_singular, past_told=past_told)}"
            )
        elif lower in ("us", "ourselves"):
            # once the speaker is named, the people they speak for are "them": "the temple
            # where they got engaged", not "… where Hiroko and company got engaged"
            replacement = group if group_singular or not named else THEM[lower]
        elif lower in ("our", "ours"):
            replacement = (group if group_singular else name) + "'s"
        elif listener and lower == "you":
            if _opens_clause(words, pieces, index):
                subject = (listener, True)
            else:
                replacement = listener  # an object ("tell you about"): no verb agrees with it
        elif listener and head == "you" and tail in _AUX:
            replacement = f"{listener} {_aux(tail, following, singular=True, past_told=past_told)}"
        elif listener and lower in ("your", "yours"):
            replacement = listener + "'s"
        elif pending is not None and pieces[index + 1] == "-" and index + 1 < len(words):
            pass  # "load-tested", "re-ran", "pre-write": the compound's last part agrees
        elif (
            pending is not None
            and lower not in _ADVERBS
            and not (lower in _PAST_SPELLED_AS_BASE_TOO and past_told)
        ):
            replacement = _conjugate(word, singular=pending)
        if subject is not None:
            replacement, pending = subject
            if index and words[index - 1].lower() in _MANDATIVE:
                pending = None  # "suggested we pre-write": the verb stays as it was said
        elif pending is not None and lower not in _ADVERBS and pieces[index + 1] != "-":
            pending = None
        named = named or (replacement is not word and replacement.startswith(name))
        out.append(replacement)
        out.append(pieces[index + 1])
        if pending is not None and pieces[index + 1].strip() and pieces[index + 1] != "-":
            pending = None  # punctuation between subject and verb: leave the verb alone
    return "".join(out)


# Verbs whose past is spelled like their base, read as past in a sentence that tells of the
# past; and the words after which a subject's verb is a mandative ("suggested we pre-write").
_PAST_SPELLED_AS_BASE_TOO: Final = frozenset(
    {"hit", "put", "set", "cut", "let", "split", "read", "quit", "shut", "cost", "hurt",
     "spread", "bet", "cast", "burst", "fit", "upset", "broadcast", "forecast"}
)  # fmt: skip
_PAST_TOLD: Final = re.compile(r"\b(?:yesterday|ago|last)\b", re.IGNORECASE)
_MANDATIVE: Final = frozenset(
    {"suggested", "suggest", "suggests", "proposed", "propose", "proposes", "recommended",
     "recommend", "recommends", "insisted", "insists", "demanded", "requested"}
)  # fmt: skip


# Words before which "mine" is the noun ("the mine", "a gold mine" reads "gold" too rarely to
# list): a possessive pronoun follows no determiner.
_DETERMINERS: Final = frozenset(
    {"the", "a", "an", "this", "that", "these", "those", "each", "every", "any", "no", "our",
     "their", "his", "her", "its", "your", "my", "one"}
)  # fmt: skip


THEM: Final = {"us": "them", "ourselves": "themselves"}
# "I'd suggest", "we'd recommend": advice given now, told as such ("the agent suggests …",
# not "the agent would suggest …").
_WOULD_ADVISE: Final = re.compile(
    r"\b(?P<who>I|i|we|We)['’]d\s+(?P<verb>suggest|recommend|propose|advise)\b"
)


# Words after which "you" is a clause's subject ("… and you said", "… that you liked").
_SUBJECT_OPENERS: Final = frozenset(
    {"and", "but", "so", "that", "if", "when", "because", "or", "as", "since", "while",
     "though", "although", "unless", "until", "before", "after", "where", "then", "once"}
)  # fmt: skip


def _opens_clause(words: list[str], pieces: list[str], index: int) -> bool:
    """Whether words[index] starts a clause: the text's first word, a word after clause
    punctuation, or one after a conjunction. Elsewhere a "you" is an object."""
    if index == 0 or pieces[index].strip(" \t\n\"'“”‘’"):
        return True
    return words[index - 1].lower() in _SUBJECT_OPENERS


# First words that start a clause without naming anything (lower-cased after "… that").
_CLAUSE_STARTERS: Final = frozenset(
    {"the", "a", "an", "this", "that", "these", "those", "it", "its", "there", "every", "each",
     "all", "some", "no", "any", "in", "on", "at", "for", "after", "before", "when", "if", "once",
     "from", "now", "then", "today", "yesterday", "tomorrow", "tonight", "our", "we", "my",
     "both", "most", "none", "nothing", "everything", "something", "it's", "it’s", "that's",
     "that’s", "there's", "there’s", "here's", "here’s"}
)  # fmt: skip


# A lone capital "A" before a verb names something ("A is simpler": option A), not "a".
_NAMING_A: Final = re.compile(r"^A\s+(?:is|was|has|had|would|will|can|could|seems|looks|works)\b")


# Names English always capitalises, wherever they stand.
_CALENDAR_NAMES: Final = frozenset(
    {"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january",
     "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"}
)  # fmt: skip
# A word capitalised only because it opens its sentence: one capital, then lower-case letters.
_TITLE_WORD: Final = re.compile(r"[A-Z][a-z]+(?:['’][a-z]+)?")
_WORD_IN_TEXT: Final = re.compile(r"[A-Za-z][\w'’-]*")
# Marks after which a capital opens a clause of its own ("Done — Rerun …", "(See …").
_OPENING_MARKS: Final = frozenset(":;—–-(\"“‘'>*")


def proper_words(texts: Iterable[str]) -> frozenset[str]:
    """The lower-cased words that `texts` capitalise somewhere other than at a sentence's
    start ("the Stripe payouts", "ask Maya"): names, which keep their capital wherever they
    open a clause."""
    proper: set[str] = set()
    for text in texts:
        for sentence in split_sentences(text):
            for match in list(_WORD_IN_TEXT.finditer(sentence))[1:]:
                word = match.group()
                before = sentence[: match.start()].rstrip()
                if word[:1].isupper() and before[-1:] not in _OPENING_MARKS:
                    proper.add(word.lower())
    return frozenset(proper)


def lower_first(clause: str, proper: Collection[str] | None = None) -> str:
    """`clause` with its first letter lowered when it opens with a function word ("The"),
    never when its "A" names an option ("A is simpler"). Given the session's `proper` words
    (`proper_words`), any other title-case opener is lowered too ("Rerun for Feb 4 …"),
    unless the session capitalises it mid-sentence as a name ("Stripe", "Maya")."""
    first = clause.split(maxsplit=1)[0] if clause.strip() else ""
    bare = first.rstrip(",:;")
    if _NAMING_A.match(clause):
        return clause
    opener = bare.lower() in _CLAUSE_STARTERS
    word = re.sub(r"['’]s$", "", bare).lower()
    plain = (
        proper is not None
        and _TITLE_WORD.fullmatch(bare)
        and word not in proper
        and word not in _CALENDAR_NAMES
    )
    if opener or plain:
        return clause[:1].lower() + clause[1:]
    return clause


# ---------------------------------------------------------------- signature

# Words a distinctive phrase neither starts nor ends with.
_EDGE_STOPWORDS: Final = frozenset(
    {"the", "a", "an", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by",
     "from", "that", "this", "is", "are", "was", "were", "be", "been", "it", "its", "as", "so",
     "we", "i", "our", "us", "my", "me", "you", "your", "they", "their", "he", "she", "his",
     "her", "not", "no", "do", "does", "did", "will", "would", "should", "can", "could", "must",
     "have", "has", "had", "if", "then", "than", "also", "just", "very", "really", "let's",
     "go", "going", "decided", "agreed", "always", "never", "don't", "use", "when", "which",
     "now", "here", "there"}
)  # fmt: skip
_SIGNATURE_WORD: Final = re.compile(r"[A-Za-z0-9](?:[\w'’./-]*\w)?")


def _longest_phrase(source: str, content: str, min_chars: int) -> str | None:
    words = list(_SIGNATURE_WORD.finditer(source))
    whole = normalise_space(content).strip(EDGE_PUNCTUATION)
    shortest, longest = _SIGNATURE_WORDS
    best: tuple[bool, int, int] | None = None
    chosen: str | None = None
    for size in range(longest, shortest - 1, -1):
        for start in range(len(words) - size + 1):
            first, last = words[start], words[start + size - 1]
            if {first.group().lower(), last.group().lower()} & _EDGE_STOPWORDS:
                continue
            phrase = normalise_space(source[first.start() : last.end()])
            if len(phrase) < min_chars or phrase == whole or not signature_in(phrase, content):
                continue
            # A phrase that runs to the end of its clause is what people quote; one cut off
            # by the word limit mid-clause ("… outside the retrieval") is not.
            ends_clause = not re.match(r"\s+\w", source[last.end() :])
            rank = (ends_clause, size, len(phrase))
            if best is None or rank > best:
                best, chosen = rank, phrase
    return chosen


def choose_signature(original: str, content: str, clause: str, *, min_chars: int) -> str | None:
    """The longest distinctive 3–8 word phrase of `original` kept verbatim in `content`.

    Phrases that end a clause (at the sentence's end or before punctuation) come first.

    When framing rewrote every such phrase, the phrase is taken from the framed `clause`
    (the content after its attribution), never from the attribution itself.
    """
    return _longest_phrase(original, content, min_chars) or _longest_phrase(
        clause, content, min_chars
    )


# ---------------------------------------------------------------- chat spelling

# Chat's spelling, as a record spells it: weekdays and months capitalised ("may" and "march"
# are words too, and stay as written), apostrophes put back where the word cannot be another
# one ("theres", "doesnt"), and chat shorthand written out ("gonna", "tho", "tmrw").
_CALENDAR_WORD: Final = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|"
    r"\b(?:january|february|april|june|july|august|september|october|november|december)\b"
)
_UNMARKED: Final = {
    "hes": "he's", "shes": "she's", "theres": "there's", "thats": "that's", "whats": "what's",
    "isnt": "isn't", "doesnt": "doesn't", "arent": "aren't", "hasnt": "hasn't",
    "havent": "haven't", "dont": "don't", "didnt": "didn't", "cant": "can't", "wont": "won't",
    "wouldnt": "wouldn't", "couldnt": "couldn't", "shouldnt": "shouldn't", "wasnt": "wasn't",
    "werent": "weren't", "youre": "you're", "theyre": "they're", "gonna": "going to",
    "tho": "though", "tmrw": "tomorrow", "tmr": "tomorrow", "pls": "please", "plz": "please",
    "cuz": "because", "coz": "because", "ppl": "people",
}  # fmt: skip
_UNMARKED_WORD: Final = re.compile(r"\b(?:" + "|".join(_UNMARKED) + r")\b")
# "its" is "it's" before what only a clause can go on with ("its wrecking", "its just them",
# "its fine"); before a noun it is the possessive ("its own", "its lid").
_ITS_CLAUSE: Final = re.compile(
    r"\bits(?=\s+(?:\w+ing|a|an|the|not|all|just|so|too|fine|ok|okay|been|going|why|what|"
    r"like|really|pretty|very|still|always|never|only|getting|time|over|true|about|because)\b)"
)
_CHAT_ASIDE: Final = re.compile(r",?\s+(?:tbh|ngl|imo|imho|lol|lmao)\b(?=\s*(?:[,.!?;:]|$))")


def tidy_chat_spelling(text: str) -> str:
    """`text` with chat's lower-case weekdays and months capitalised, unmarked contractions
    and shorthand written out, and trailing asides ("tbh", "lol") dropped."""
    text = _CALENDAR_WORD.sub(lambda m: m.group(0).capitalize(), text)
    text = _UNMARKED_WORD.sub(lambda m: _UNMARKED[m.group(0)], text)
    text = _ITS_CLAUSE.sub("it's", text)
    return _CHAT_ASIDE.sub("", text)
