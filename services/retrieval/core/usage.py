"""Usage rate: when a search returned drawers, how often was one of them used afterwards?

Pure: the entries come from `RetrievalLog.read`; this module only counts.

Definitions:

- A *search* is a `search`, `search_batch` or `build_context_pack` entry that returned at
  least one drawer. An entry with no results cannot be used and is not counted: the rate
  measures the value of what was handed over, not how often the store was empty.
- Batches are logged one entry per query, with op `search_batch` (the servicer's side of the
  contract), so a batch of five queries is five searches, the same as five single searches.
  A batch logged as one entry would count once and hide which query's results were used.
- A context pack is logged as one `build_context_pack` entry and its inner search is not
  logged separately, or the same handover would count twice.
- A search is *used* when a `record_retrieval` entry names one of its returned drawer ids at a
  time t with search.at <= t <= search.at + window (24 hours by default). One record may mark
  several searches used: each of them handed over that drawer.
- Each search is attributed to the UTC day of the search, not of the record.
- `retrievals_recorded` counts the `record_retrieval` entries (calls) of the day.
- `usage_rate = searches_with_use / searches`, and 0.0 for a day without searches.

Reading range: a search late on `until` can be used on the next day, so the caller should
read the log through `until + window` and pass `since`/`until` here; entries outside the range
still mark searches used but get no day row of their own.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from services.retrieval.core.log_entry import RECORD_OP, SEARCH_OPS, LogEntry

DEFAULT_USE_WINDOW = timedelta(hours=24)


@dataclass(frozen=True)
class DayUsage:
    """Usage counters of one UTC day."""

    day: date
    searches: int
    searches_with_use: int
    usage_rate: float
    retrievals_recorded: int


@dataclass(frozen=True)
class UsageReport:
    """Per-day usage, oldest day first, and the rate over all reported days together."""

    days: list[DayUsage]
    overall_usage_rate: float


def _rate(used: int, total: int) -> float:
    return used / total if total else 0.0


def _used_in_window(
    drawer_ids: Iterable[str],
    start: datetime,
    end: datetime,
    record_times: dict[str, list[datetime]],
) -> bool:
    for drawer_id in drawer_ids:
        times = record_times.get(drawer_id)
        if not times:
            continue
        # First record at or after the search; used if it falls inside the window.
        index = bisect_left(times, start)
        if index < len(times) and times[index] <= end:
            return True
    return False


def _day_range(since: date, until: date) -> list[date]:
    return [since + timedelta(days=offset) for offset in range((until - since).days + 1)]


def usage_by_day(
    entries: Iterable[LogEntry],
    *,
    window: timedelta = DEFAULT_USE_WINDOW,
    since: date | None = None,
    until: date | None = None,
) -> UsageReport:
    """Searches, searches followed by a use within `window`, and recorded retrievals, per day.

    With `since` and `until` the report has one row for every day of that inclusive range
    (zeros included) and nothing outside it; without them, one row per day that has any entry.
    Raises ValueError for a negative window or `since` after `until`.
    """
    if window < timedelta(0):
        raise ValueError(f"window must not be negative; got {window}")
    if since is not None and until is not None and since > until:
        raise ValueError(f"since ({since}) is after until ({until})")
    searches: list[LogEntry] = []
    record_times: dict[str, list[datetime]] = defaultdict(list)
    recorded_per_day: dict[date, int] = defaultdict(int)
    seen_days: set[date] = set()
    for entry in entries:
        day = entry.at.date()
        seen_days.add(day)
        if entry.op == RECORD_OP:
            recorded_per_day[day] += 1
            for drawer_id in set(entry.drawer_ids):
                record_times[drawer_id].append(entry.at)
        elif entry.op in SEARCH_OPS and entry.results:
            searches.append(entry)
    for times in record_times.values():
        times.sort()

    searches_per_day: dict[date, int] = defaultdict(int)
    used_per_day: dict[date, int] = defaultdict(int)
    for search in searches:
        day = search.at.date()
        searches_per_day[day] += 1
        if _used_in_window(search.drawer_ids, search.at, search.at + window, record_times):
            used_per_day[day] += 1

    if since is not None and until is not None:
        days = _day_range(since, until)
    else:
        days = sorted(
            day
            for day in seen_days
            if (since is None or day >= since) and (until is None or day <= until)
        )
    rows = [
        DayUsage(
            day=day,
            searches=searches_per_day[day],
            searches_with_use=used_per_day[day],
            usage_rate=_rate(used_per_day[day], searches_per_day[day]),
            retrievals_recorded=recorded_per_day[day],
        )
        for day in days
    ]
    total_searches = sum(row.searches for row in rows)
    total_used = sum(row.searches_with_use for row in rows)
    return UsageReport(days=rows, overall_usage_rate=_rate(total_used, total_searches))
