"""query_document's spans: matches in context, merged; budgets that cut, never drop or empty."""

from __future__ import annotations

import pytest

from services.corpus.core import Span, find_spans, fit_to_budget, search_spans
from services.runtime.errors import InvalidInput

DOC = "alpha beta gamma. " * 3 + "The needle is here. " + "filler text. " * 20 + "Another needle."


def test_substring_matches_come_with_context() -> None:
    spans = find_spans(DOC, pattern="needle", context_chars=10)
    assert len(spans) == 2
    first = spans[0]
    assert first.text == DOC[first.char_start : first.char_end]
    assert "needle" in first.text
    assert first.char_end - first.char_start == len("needle") + 20
    assert first.kind == "match" and first.matches == 1


def test_overlapping_windows_merge_and_count_their_matches() -> None:
    search = search_spans("ab ab ab", pattern="ab", context_chars=3)
    assert [(s.char_start, s.char_end, s.matches) for s in search.spans] == [(0, 8, 3)]
    assert search.matches_total == 3 and search.matches_returned == 3


def test_matches_total_counts_past_max_matches() -> None:
    search = search_spans("x " * 100, pattern="x", context_chars=0, max_matches=5)
    assert search.matches_returned == 5
    assert search.matches_total == 100
    assert not search.matches_capped


def test_regex_spans_and_empty_matches_skipped() -> None:
    spans = find_spans(DOC, pattern=r"(?i)another \w+", regex=True, context_chars=0)
    assert [s.text for s in spans] == ["Another needle"]
    assert find_spans("abc", pattern="x*", regex=True) == []


@pytest.mark.parametrize(
    ("pattern", "regex", "message"),
    [
        ("", False, "empty"),
        ("a" * 501, False, "the limit is 500"),
        ("(unclosed", True, "not a valid regular expression"),
    ],
)
def test_bad_patterns_are_invalid_input(pattern: str, regex: bool, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        find_spans(DOC, pattern=pattern, regex=regex)


def test_catastrophic_backtracking_times_out_as_invalid_input() -> None:
    with pytest.raises(InvalidInput, match="simplify it"):
        find_spans("a" * 5000 + "b", pattern=r"(a|aa)+$", regex=True, timeout_s=0.05)


def _span(start: int, text: str, kind: str = "match") -> Span:
    return Span(start, start + len(text), text, kind=kind)


def test_the_overflowing_span_is_cut_and_flagged_not_dropped() -> None:
    spans = [_span(0, "a" * 40), _span(100, "b" * 40), _span(200, "c" * 40)]
    fitted = fit_to_budget(spans, 100)
    assert [len(s.text) for s in fitted] == [40, 40, 20]
    assert [s.truncated for s in fitted] == [False, False, True]
    assert fitted[2].char_end == 220
    assert sum(len(s.text) for s in fitted) == 100


def test_an_exhausted_budget_adds_no_empty_span() -> None:
    fitted = fit_to_budget([_span(0, "a" * 50), _span(100, "b" * 10)], 50)
    assert [s.text for s in fitted] == ["a" * 50]
    assert fit_to_budget([_span(0, "abc")], 0) == []


def test_cuts_land_on_character_boundaries_and_keep_combining_marks_whole() -> None:
    emoji = _span(0, "ok 👩‍💻 done")
    fitted = fit_to_budget([emoji], 5)  # would split the emoji's ZWJ sequence
    assert fitted[0].text == "ok "
    accent = _span(0, "cafe\u0301 au lait")  # "é" as e + combining acute
    assert fit_to_budget([accent], 4)[0].text == "caf"
    assert fit_to_budget([accent], 5)[0].text == "cafe\u0301"
    assert all(len(s.text) > 0 for s in fit_to_budget([_span(0, "\u0301" * 10)], 3))


def test_match_counts_follow_the_cut() -> None:
    search = search_spans("ab ab ab", pattern="ab", context_chars=3)
    fitted = fit_to_budget(search.spans, 4)
    assert fitted[0].text == "ab a"
    assert fitted[0].matches == 2
