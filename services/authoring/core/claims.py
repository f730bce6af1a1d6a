"""Whether two near-identical drawer texts make the same claim (the duplicate gate's second half).

The write path asks the retrieval tier for drawers in the same room and type whose cosine to
the new content is at least `duplicate_similarity`. Cosine alone cannot tell a duplicate from
a different fact: "batch 100 was exported at 02:00" and "batch 102 was exported at 02:00"
embed almost identically, and so do "retried 103 times" and "retried 105 times", or a claim
and its negation. A duplicate is the *same claim*, so this module compares what the two texts
assert, word by word:

- Words are compared after case folding and a light suffix strip ("uses", "using", "used"
  and "use" meet), with function words ("the", "was", "to" …) ignored, so an inflection, a
  word order or an article never makes a second drawer.
- Everything else counts: numbers, times, dates, versions and identifiers are kept whole
  ("02:00", "v2.1", "INC-4412"); names and content words count by their stem; a negation
  ("not", "never", "no", "n't", "without" …) is a word of its own, so a claim and its
  negation differ.
- Two texts make the same claim when those words are the same multiset. Anything added,
  dropped or substituted is a different claim, and the write stores it: a second near-copy
  costs a little ranking noise, while a fact handed back as another fact is lost silently.

A similar drawer whose claim differs is what a lifecycle link may later bind as superseded;
`ClaimDifference.describe` says what differs ("103 → 105") for the write's hint.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Final

# A token: a number-like run kept whole (02:00, 2026-05-01, 1,200, v2.1, INC-4412, a.b_c),
# or a word (with an inner apostrophe: "don't", "team's").
_TOKEN: Final = re.compile(
    r"[A-Za-z]*\d[\w]*(?:[.:,/\-]\d[\w]*)*"  # starts as or contains a number early
    r"|[A-Za-z_][\w]*(?:[.\-/][A-Za-z_\d][\w]*)+"  # dotted, hyphenated or path identifiers
    r"|[^\W\d_]+(?:['’][^\W\d_]+)?"  # a word
)
# Words that carry grammar, not the claim. Negations are deliberately absent.
_FUNCTION_WORDS: Final = frozenset(
    {"a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "am", "to", "of",
     "in", "on", "at", "for", "with", "by", "and", "or", "that", "this", "these", "those", "it",
     "its", "as", "from", "has", "have", "had", "will", "would", "shall", "do", "does", "did",
     "there", "then", "so", "also", "which", "who", "whom", "whose", "into", "onto", "about",
     "s", "get", "gets", "got", "now", "currently"}
)  # fmt: skip
_NEGATIONS: Final = frozenset(
    {"not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "cannot"}
)
_NEGATED_CONTRACTION: Final = re.compile(r"^(?P<stem>\w+)n['’]t$")
# Stems of "can't", "won't", "don't" … that carry no claim of their own beside the "not".
_EMPTY_NEGATED: Final = _FUNCTION_WORDS | {"ca", "wo"}
_SUFFIXES: Final = ("ing", "ed", "es", "s", "e")


@dataclass(frozen=True, slots=True)
class ClaimDifference:
    """What one text asserts that the other does not (surface forms, in order of appearance)."""

    only_new: tuple[str, ...]
    only_existing: tuple[str, ...]

    @property
    def same(self) -> bool:
        """Whether the two texts make the same claim."""
        return not self.only_new and not self.only_existing

    def describe(self) -> str:
        """A short human reading: "103 → 105", "+ not", "− ledger"."""
        old, new = ", ".join(self.only_existing), ", ".join(self.only_new)
        if old and new:
            return f"{old} → {new}"
        return f"+ {new}" if new else f"− {old}"


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 2:
            return word[: -len(suffix)]
    return word


def claim_terms(text: str) -> list[tuple[str, str]]:
    """(comparison key, surface form) for every token of `text` that carries its claim."""
    terms: list[tuple[str, str]] = []
    for match in _TOKEN.finditer(text):
        surface = match.group(0)
        word = surface.lower().replace("’", "'")
        if word.endswith("'s"):
            word = word[:-2]
        negated = _NEGATED_CONTRACTION.match(word)
        if negated is not None or word in _NEGATIONS:
            if negated is not None and negated.group("stem") not in _EMPTY_NEGATED:
                terms.append((_stem(negated.group("stem")), surface))
            terms.append(("not", surface))
            continue
        if word in _FUNCTION_WORDS:
            continue
        key = word if any(ch.isdigit() for ch in word) or not word.isalpha() else _stem(word)
        terms.append((key, surface))
    return terms


def claim_difference(new: str, existing: str) -> ClaimDifference:
    """What `new` and `existing` assert differently; `.same` when they make the same claim."""
    new_terms, old_terms = claim_terms(new), claim_terms(existing)
    extra_new = Counter(k for k, _ in new_terms) - Counter(k for k, _ in old_terms)
    extra_old = Counter(k for k, _ in old_terms) - Counter(k for k, _ in new_terms)

    def surfaces(terms: list[tuple[str, str]], extra: Counter[str]) -> tuple[str, ...]:
        left = Counter(extra)
        picked: list[str] = []
        for key, surface in terms:
            if left[key] > 0:
                left[key] -= 1
                picked.append(surface)
        return tuple(picked)

    return ClaimDifference(surfaces(new_terms, extra_new), surfaces(old_terms, extra_old))


# Number words read as the numbers they name, so "five retries" and "5 retries" agree.
_NUMBER_WORDS: Final = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12",
    "fifteen": "15", "twenty": "20", "thirty": "30", "forty": "40", "fifty": "50",
    "sixty": "60", "ninety": "90", "hundred": "100", "thousand": "1000",
}  # fmt: skip
_SENTENCE_START: Final = re.compile(r"(?:^|[.!?]\s+)")


def claim_values(text: str) -> frozenset[str]:
    """The values a text asserts, whatever its wording: numbers (digits or number words, with
    thousands separators dropped), negation, and names (capitalised words that do not start
    a sentence). Two texts whose values differ say something different even when the rest is
    a paraphrase; two whose values agree may still be worded apart."""
    starts = {m.end() for m in _SENTENCE_START.finditer(text)}
    values: set[str] = set()
    for match in _TOKEN.finditer(text):
        surface = match.group(0)
        word = surface.lower().replace("’", "'")
        if word in _NEGATIONS or _NEGATED_CONTRACTION.match(word):
            values.add("not")
        elif any(ch.isdigit() for ch in word):
            values.add(word.replace(",", ""))
        elif word in _NUMBER_WORDS:
            values.add(_NUMBER_WORDS[word])
        elif surface[:1].isupper() and match.start() not in starts:
            values.add(word)
    return frozenset(values)
