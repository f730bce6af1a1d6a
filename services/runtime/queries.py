"""Checks every search-like request shares: query text and how many results to return."""

from __future__ import annotations

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
