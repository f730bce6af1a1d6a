"""Checks every search-like request shares: query text and how many results to return."""

from __future__ import annotations

from datetime import date

from services.runtime.errors import InvalidInput

MAX_QUERY_CHARS = 8192


def check_query_text(query: str, max_chars: int = MAX_QUERY_CHARS) -> None:
    """Refuse an empty or oversized query with a message that says what to change."""
    if not query.strip():
        raise InvalidInput("query is empty: send the text to search for", field="query")
    if len(query) > max_chars:
        raise InvalidInput(
            f"query is {len(query)} characters; the limit is {max_chars}: "
            "search with the distinctive part of it",
            field="query",
        )


def result_limit(asked: int, *, default: int, maximum: int, field: str = "n_results") -> int:
    """`asked` results (0 = `default`), refused above `maximum`."""
    limit = asked or default
    if limit > maximum:
        raise InvalidInput(f"{field} must be at most {maximum}, got {asked}", field=field)
    return limit


def parse_day(value: str, field: str) -> date | None:
    """A request's day parameter (YYYY-MM-DD); None when it is empty."""
    if not value:
        return None
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise InvalidInput(
            f"{field} must be a date, YYYY-MM-DD (like 2026-07-01); got {value!r}", field=field
        ) from None
