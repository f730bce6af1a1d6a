"""Usage rate: searches that returned drawers, and how many were followed by a recorded use."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from services.retrieval.core.log_entry import LogEntry, Op
from services.retrieval.core.usage import usage_by_day

T0 = datetime(2026, 4, 14, 10, 0, tzinfo=UTC)


def entry(op: Op, at: datetime, *ids: str) -> LogEntry:
    score = None if op == "record_retrieval" else 0.5
    return LogEntry(
        at=at,
        op=op,
        query="q",
        intent="general",
        intent_inferred=True,
        results=tuple((drawer_id, score) for drawer_id in ids),
        latency_ms=1.0,
    )


def test_a_search_followed_by_a_record_of_one_of_its_drawers_is_used() -> None:
    report = usage_by_day(
        [entry("search", T0, "a", "b"), entry("record_retrieval", T0 + timedelta(hours=1), "b")]
    )
    (day,) = report.days
    assert (day.searches, day.searches_with_use, day.retrievals_recorded) == (1, 1, 1)
    assert day.usage_rate == 1.0
    assert report.overall_usage_rate == 1.0


def test_a_record_of_another_drawer_does_not_count() -> None:
    report = usage_by_day([entry("search", T0, "a"), entry("record_retrieval", T0, "z")])
    assert report.days[0].searches_with_use == 0
    assert report.overall_usage_rate == 0.0


def test_a_record_before_the_search_does_not_count() -> None:
    report = usage_by_day(
        [entry("record_retrieval", T0 - timedelta(seconds=1), "a"), entry("search", T0, "a")]
    )
    assert report.days[0].searches_with_use == 0, "a use before the search cannot be its use"


def test_a_record_at_the_same_instant_counts() -> None:
    report = usage_by_day([entry("search", T0, "a"), entry("record_retrieval", T0, "a")])
    assert report.days[0].searches_with_use == 1


def test_the_window_bounds_how_late_a_use_may_come() -> None:
    entries = [entry("search", T0, "a"), entry("record_retrieval", T0 + timedelta(hours=25), "a")]
    assert usage_by_day(entries).overall_usage_rate == 0.0, "25 h is outside the 24 h default"
    wide = usage_by_day(entries, window=timedelta(hours=48))
    assert wide.overall_usage_rate == 1.0, "expected a use inside a 48 h window"


def test_searches_without_results_are_not_searches() -> None:
    report = usage_by_day([entry("search", T0), entry("build_context_pack", T0)])
    assert report.days[0].searches == 0
    assert report.days[0].usage_rate == 0.0


def test_every_search_op_counts_and_batches_count_per_query() -> None:
    entries = [
        entry("search", T0, "a"),
        entry("search_batch", T0, "b"),
        entry("search_batch", T0, "c"),
        entry("build_context_pack", T0, "d"),
        entry("record_retrieval", T0 + timedelta(minutes=5), "c", "d"),
    ]
    (day,) = usage_by_day(entries).days
    assert (day.searches, day.searches_with_use) == (4, 2), f"got {day}"
    assert day.usage_rate == 0.5


def test_one_record_can_mark_several_searches_used() -> None:
    entries = [
        entry("search", T0, "a"),
        entry("search", T0 + timedelta(minutes=1), "a"),
        entry("record_retrieval", T0 + timedelta(minutes=2), "a"),
    ]
    assert usage_by_day(entries).days[0].searches_with_use == 2


def test_a_search_is_attributed_to_its_own_day_even_when_used_the_next() -> None:
    late = datetime(2026, 4, 14, 23, 30, tzinfo=UTC)
    entries = [
        entry("search", late, "a"),
        entry("record_retrieval", late + timedelta(hours=1), "a"),
    ]
    report = usage_by_day(entries, since=date(2026, 4, 14), until=date(2026, 4, 14))
    assert [d.day for d in report.days] == [date(2026, 4, 14)]
    day = report.days[0]
    assert (day.searches, day.searches_with_use, day.retrievals_recorded) == (1, 1, 0)


def test_a_range_lists_every_day_including_empty_ones() -> None:
    report = usage_by_day(
        [entry("search", T0, "a")], since=date(2026, 4, 13), until=date(2026, 4, 15)
    )
    assert [d.day for d in report.days] == [date(2026, 4, 13), date(2026, 4, 14), date(2026, 4, 15)]
    assert [d.searches for d in report.days] == [0, 1, 0]


def test_overall_rate_weights_days_by_their_searches() -> None:
    day2 = T0 + timedelta(days=1)
    entries = [
        entry("search", T0, "a"),
        entry("record_retrieval", T0, "a"),
        entry("search", day2, "x"),
        entry("search", day2, "y"),
        entry("search", day2, "z"),
    ]
    report = usage_by_day(entries)
    assert [d.usage_rate for d in report.days] == [1.0, 0.0]
    assert report.overall_usage_rate == pytest.approx(0.25), "1 used of 4 searches"


def test_no_entries_give_an_empty_report() -> None:
    report = usage_by_day([])
    assert report.days == []
    assert report.overall_usage_rate == 0.0


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(ValueError, match="window"):
        usage_by_day([], window=timedelta(hours=-1))
    with pytest.raises(ValueError, match="after until"):
        usage_by_day([], since=date(2026, 4, 15), until=date(2026, 4, 14))
