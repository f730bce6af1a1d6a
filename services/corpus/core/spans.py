"""query_document's pure part: pattern spans in one document, and fitting spans to a budget.

Decisions:

- Budgets count characters (Unicode code points), as ``QueryDocumentRequest.char_budget``
  says. A Python string cannot be cut inside a UTF-8 sequence, so a cut at any index is a
  valid character boundary; `fit_to_budget` also steps back over combining marks, variation
  selectors and zero-width joiners so that "é" written as e + U+0301, or an emoji sequence,
  is not split from its base character (grapheme clusters are approximated, not fully
  segmented).
- The span that would overflow the budget is cut to what is left and flagged `truncated`:
  never dropped silently, never empty. Once the budget is spent the walk stops; how many
  matches were left out shows in `SpanSearch.matches_total` against the matches returned.
- Patterns are at most 500 characters. Substring search is plain `str.find` (linear). Regular
  expressions run on the `regex` engine with a timeout: Python's `re` cannot be interrupted,
  and a pattern such as ``(a+)+$`` backtracks exponentially; here it fails after the timeout
  with InvalidInput instead of pinning a worker. The input is bounded by the 50 MB hard limit
  on a file. Empty matches (``^``, ``a*``) are skipped: a span covers at least one character.
- Match windows (a match plus `context_chars` either side) that overlap are merged into one
  span, so text is never returned twice; a span says how many matches it holds.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Final

import regex as regex_engine  # type: ignore[import-untyped]  # no stubs; used for `timeout`

from services.runtime.errors import InvalidInput

MAX_PATTERN_CHARS: Final = 500
DEFAULT_REGEX_TIMEOUT_S: Final = 2.0
# Matches counted past the ones returned, for `matches_total`; a count beyond this is "at least".
MAX_COUNTED_MATCHES: Final = 100_000
_JOINERS: Final = frozenset("\u200d\u200c")


@dataclass(frozen=True, slots=True)
class Span:
    """A piece of a document: [char_start, char_end) of its text."""

    char_start: int
    char_end: int
    text: str
    kind: str = "match"  # or "semantic"
    truncated: bool = False
    similarity: float = 0.0
    match_starts: tuple[int, ...] = ()  # where the pattern matches inside the span begin

    @property
    def matches(self) -> int:
        return len(self.match_starts)


@dataclass(frozen=True, slots=True)
class SpanSearch:
    spans: list[Span]
    matches_total: int  # every match in the document, up to MAX_COUNTED_MATCHES
    matches_capped: bool  # the count stopped at MAX_COUNTED_MATCHES

    @property
    def matches_returned(self) -> int:
        return sum(span.matches for span in self.spans)


def _check_pattern(pattern: str) -> None:
    if not pattern:
        raise InvalidInput("the pattern is empty", field="pattern")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise InvalidInput(
            f"the pattern is {len(pattern)} characters; the limit is {MAX_PATTERN_CHARS}",
            field="pattern",
        )


def _substring_matches(text: str, pattern: str) -> Iterator[tuple[int, int]]:
    start = text.find(pattern)
    while start >= 0:
        yield start, start + len(pattern)
        start = text.find(pattern, start + len(pattern))


def _regex_matches(text: str, pattern: str, timeout_s: float) -> Iterator[tuple[int, int]]:
    try:
        compiled = regex_engine.compile(pattern)
    except regex_engine.error as error:
        raise InvalidInput(
            f"the pattern is not a valid regular expression: {error}", field="pattern"
        ) from error
    try:
        for match in compiled.finditer(text, timeout=timeout_s):
            start, end = match.span()
            if end > start:
                yield start, end
    except TimeoutError as error:
        raise InvalidInput(
            f"the pattern ran longer than {timeout_s:g} s over this document; simplify it "
            "(nested repetition such as (a+)+ backtracks without end)",
            field="pattern",
        ) from error


def search_spans(
    text: str,
    *,
    pattern: str,
    regex: bool = False,
    context_chars: int = 200,
    max_matches: int = 20,
    timeout_s: float = DEFAULT_REGEX_TIMEOUT_S,
) -> SpanSearch:
    """The first `max_matches` matches of `pattern` in context, and how many there are."""
    _check_pattern(pattern)
    if context_chars < 0:
        raise InvalidInput("context_chars cannot be negative", field="context_chars")
    if max_matches < 1:
        raise ValueError(f"max_matches must be at least 1, got {max_matches}")
    matches = (
        _regex_matches(text, pattern, timeout_s) if regex else _substring_matches(text, pattern)
    )
    windows: list[tuple[int, int, list[int]]] = []  # merged as they come
    total = 0
    for start, end in matches:
        total += 1
        if total <= max_matches:
            low, high = max(0, start - context_chars), min(len(text), end + context_chars)
            if windows and low <= windows[-1][1]:
                previous_low, previous_high, starts = windows[-1]
                windows[-1] = (previous_low, max(previous_high, high), [*starts, start])
            else:
                windows.append((low, high, [start]))
        if total >= MAX_COUNTED_MATCHES:
            break
    spans = [
        Span(low, high, text[low:high], match_starts=tuple(starts)) for low, high, starts in windows
    ]
    return SpanSearch(spans, total, total >= MAX_COUNTED_MATCHES)


def find_spans(
    text: str,
    *,
    pattern: str,
    regex: bool = False,
    context_chars: int = 200,
    max_matches: int = 20,
    timeout_s: float = DEFAULT_REGEX_TIMEOUT_S,
) -> list[Span]:
    """The spans of `search_spans`, without the count."""
    return search_spans(
        text,
        pattern=pattern,
        regex=regex,
        context_chars=context_chars,
        max_matches=max_matches,
        timeout_s=timeout_s,
    ).spans


def _clings(char: str) -> bool:
    """Whether `char` belongs to the character before it (combining mark, selector, joiner)."""
    return (
        unicodedata.combining(char) != 0
        or unicodedata.category(char) in ("Mn", "Me")
        or "\ufe00" <= char <= "\ufe0f"
        or char in _JOINERS
    )


def cut_at_character(text: str, limit: int) -> int:
    """An index <= limit where `text` can be cut without orphaning a combining sequence.

    Never 0 when `limit` > 0: a cluster longer than the limit is cut hard rather than lost.
    """
    if limit >= len(text):
        return len(text)
    cut = limit
    # Step back while the first character left out clings to the one kept (or the one kept
    # is a joiner waiting for its partner).
    while cut > 0 and (_clings(text[cut]) or text[cut - 1] in _JOINERS):
        cut -= 1
    return cut if cut > 0 else limit


def fit_to_budget(spans: Sequence[Span], char_budget: int) -> list[Span]:
    """The spans, in order, within `char_budget` characters; the last one cut and flagged."""
    fitted: list[Span] = []
    remaining = char_budget
    for span in spans:
        if remaining <= 0:
            break
        if len(span.text) <= remaining:
            fitted.append(span)
            remaining -= len(span.text)
            continue
        cut = cut_at_character(span.text, remaining)
        if cut > 0:
            fitted.append(
                replace(
                    span,
                    text=span.text[:cut],
                    char_end=span.char_start + cut,
                    truncated=True,
                    match_starts=tuple(s for s in span.match_starts if s < span.char_start + cut),
                )
            )
        break
    return fitted
