"""One retrieval-log event and its JSON line: what was asked, what came back, how fast.

Pure: `services.retrieval.retrieval_log` does the file I/O, `core.usage` the analysis; both
import this module and nothing in it touches the disk.

Privacy is structural. The query is logged (without it the log cannot be interpreted), the
drawer text is not: `LogEntry` has no field that could hold it, and a line carries drawer ids
and scores only. The JSON keys of a line are exactly `LOG_KEYS`.

Line shape (one JSON object per line, keys in this order):

    {"at": "2026-04-14T09:30:00.123456Z", "op": "search", "query": "...", "intent": "design",
     "intent_inferred": true, "results": [{"drawer_id": "d-1", "score": 0.81}],
     "latency_ms": 12.5, "n_results": 10, "filters": {"room": "projects/engram"}}

`record_retrieval` entries list the drawers reported as used, with `score` null.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Final, Literal, cast, get_args

Op = Literal["search", "search_batch", "build_context_pack", "record_retrieval"]
OPS: Final[tuple[str, ...]] = get_args(Op)

# Ops whose entries are searches in the usage sense (they hand drawers to an agent).
SEARCH_OPS: Final = frozenset({"search", "search_batch", "build_context_pack"})
RECORD_OP: Final = "record_retrieval"

LOG_KEYS: Final = (
    "at",
    "op",
    "query",
    "intent",
    "intent_inferred",
    "results",
    "latency_ms",
    "n_results",
    "filters",
)

FilterValue = str | int | float | bool | None


@dataclass(frozen=True)
class LogEntry:
    """One retrieval event. `at` is timezone-aware and stored in UTC.

    `results` holds (drawer_id, score) pairs in the order returned; the score is None for
    `record_retrieval`, which reports use rather than a ranking.
    """

    at: datetime
    op: Op
    query: str
    intent: str
    intent_inferred: bool
    results: tuple[tuple[str, float | None], ...]
    latency_ms: float
    n_results: int | None = None
    filters: Mapping[str, FilterValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.at.tzinfo is None:
            raise ValueError(
                f"LogEntry.at must be timezone-aware; got naive {self.at.isoformat()}: "
                "use datetime.now(UTC)"
            )
        if self.op not in OPS:
            raise ValueError(f"LogEntry.op must be one of {', '.join(OPS)}; got {self.op!r}")
        # Frozen dataclass: normalise through object.__setattr__ so an entry built from a list
        # or a local-time datetime is still hashable-safe and written as UTC.
        object.__setattr__(self, "at", self.at.astimezone(UTC))
        object.__setattr__(self, "results", tuple((str(i), s) for i, s in self.results))
        object.__setattr__(self, "filters", MappingProxyType(dict(self.filters)))

    @property
    def drawer_ids(self) -> tuple[str, ...]:
        """The drawer ids of `results`, in order."""
        return tuple(drawer_id for drawer_id, _ in self.results)


def _finite(value: float | None) -> float | None:
    # JSON has no NaN or infinity; a non-finite score or latency is written as null so the
    # line stays parseable by any JSON reader.
    if value is None or not math.isfinite(value):
        return None
    return value


def entry_to_line(entry: LogEntry) -> str:
    """`entry` as one JSON line (no trailing newline, no raw newlines inside)."""
    payload = {
        "at": entry.at.isoformat().replace("+00:00", "Z"),
        "op": entry.op,
        "query": entry.query,
        "intent": entry.intent,
        "intent_inferred": entry.intent_inferred,
        "results": [
            {"drawer_id": drawer_id, "score": _finite(score)} for drawer_id, score in entry.results
        ],
        "latency_ms": _finite(entry.latency_ms),
        "n_results": entry.n_results,
        "filters": {
            key: _finite(value) if isinstance(value, float) else value
            for key, value in entry.filters.items()
        },
    }
    return json.dumps(payload, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def _require(payload: Mapping[str, object], key: str, kind: type | tuple[type, ...]) -> object:
    value = payload.get(key)
    # bool is an int subclass; a `true` where a number belongs is a corrupt line, not a 1.
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _kinds(kind)):
        raise ValueError(f"field {key!r} must be {_kind_name(kind)}; got {value!r}")
    return value


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _kind_name(kind: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in _kinds(kind))


def _parse_results(raw: object) -> tuple[tuple[str, float | None], ...]:
    if not isinstance(raw, list):
        raise ValueError(f"field 'results' must be a list; got {raw!r}")
    results: list[tuple[str, float | None]] = []
    for item in raw:
        if not isinstance(item, dict):
            raise ValueError(f"each result must be an object; got {item!r}")
        drawer_id = _require(item, "drawer_id", str)
        score = item.get("score")
        if score is not None and (isinstance(score, bool) or not isinstance(score, int | float)):
            raise ValueError(f"result score must be a number or null; got {score!r}")
        results.append((cast(str, drawer_id), None if score is None else float(score)))
    return tuple(results)


def entry_from_line(line: str) -> LogEntry:
    """Parse one JSON line written by `entry_to_line`; ValueError says what is wrong."""
    try:
        payload = json.loads(line)
        return _entry_from_payload(payload)
    except (RecursionError, OverflowError) as error:
        # Deeply nested or absurd numbers are corruption too; callers handle one error type.
        raise ValueError(f"unreadable log line: {type(error).__name__}") from error


def _entry_from_payload(payload: object) -> LogEntry:
    if not isinstance(payload, dict):
        raise ValueError(f"a log line must be a JSON object; got {type(payload).__name__}")
    at_text = cast(str, _require(payload, "at", str))
    at = datetime.fromisoformat(at_text)
    op = cast(str, _require(payload, "op", str))
    if op not in OPS:
        raise ValueError(f"unknown op {op!r}")
    latency = payload.get("latency_ms")
    if latency is not None:
        latency = _require(payload, "latency_ms", (int, float))
    n_results = payload.get("n_results")
    if n_results is not None:
        n_results = _require(payload, "n_results", int)
    filters = payload.get("filters") or {}
    if not isinstance(filters, dict):
        raise ValueError(f"field 'filters' must be an object; got {filters!r}")
    return LogEntry(
        at=at,
        op=cast(Op, op),
        query=cast(str, _require(payload, "query", str)),
        intent=cast(str, _require(payload, "intent", str)),
        intent_inferred=cast(bool, _require(payload, "intent_inferred", bool)),
        results=_parse_results(payload.get("results")),
        latency_ms=math.nan if latency is None else float(cast(float, latency)),
        n_results=cast(int | None, n_results),
        filters=cast(dict[str, FilterValue], filters),
    )
