"""The thesis sets ("decisions over discussion"): load the JSON schema of shared/eval into
Drawer protos and typed queries, with the "nothing stored" questions written for a set's
store (`eval/sets/nothing_stored/<set>_<writer>.json`) when asked for."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from engram.v1 import common_pb2

from services.retrieval.pool.records import to_timestamp
from services.vocabulary.enums import PIN_VALUES

# The sets are written as of this day ("Take now to be 2026-07-01").
THESIS_NOW = datetime(2026, 7, 1, tzinfo=UTC)

# Unanswerable kinds. "silence": the set writer's own, mostly near-misses (a detail of
# something stored). "nothing_stored": a question about something the store never touches,
# written by another writer against the set's drawers.
SILENCE = "silence"
NOTHING_STORED = "nothing_stored"
UNANSWERABLE_KINDS = frozenset({SILENCE, NOTHING_STORED})
NOTHING_STORED_DIR = Path(__file__).resolve().parents[2] / "eval" / "sets" / "nothing_stored"


@dataclass(frozen=True)
class ThesisQuery:
    id: str
    text: str
    intent: str
    relevant: tuple[str, ...]
    kind: str
    notes: str = ""


@dataclass(frozen=True)
class ThesisSet:
    name: str
    deployment: str  # default | companion
    drawers: tuple[common_pb2.Drawer, ...]
    queries: tuple[ThesisQuery, ...]

    @property
    def deployment_mode(self) -> int:
        if self.deployment == "companion":
            return common_pb2.DEPLOYMENT_MODE_COMPANION
        return common_pb2.DEPLOYMENT_MODE_DEFAULT


def _drawer(raw: dict[str, Any]) -> common_pb2.Drawer:
    created = datetime.combine(date.fromisoformat(raw["created_at"]), datetime.min.time(), UTC)
    drawer = common_pb2.Drawer(
        id=raw["id"],
        content=raw["content"],
        memory_type=raw["memory_type"],
        pin_status=PIN_VALUES[raw.get("pin_status", "active")],
        wing=raw.get("wing", ""),
        room=raw.get("room", ""),
        topic=raw.get("topic", ""),
        added_by=raw.get("added_by", ""),
        salience=float(raw.get("salience") or 0.5),
    )
    if raw.get("signature"):
        drawer.signature = raw["signature"]
    drawer.created_at.CopyFrom(to_timestamp(created))
    drawer.last_activity_at.CopyFrom(to_timestamp(created))
    return drawer


def nothing_stored_files(thesis_path: Path) -> list[Path]:
    """The "nothing stored" question files written for the thesis set at `thesis_path`."""
    return sorted(NOTHING_STORED_DIR.glob(f"{thesis_path.stem}_*.json"))


def load_thesis_set(path: Path, *, extra_queries: Sequence[Path] = ()) -> ThesisSet:
    """Read a thesis-set file (schema in shared/eval/README.md), plus the queries of each
    `extra_queries` file (`{"queries": [...]}` over the same drawers)."""
    data = json.loads(path.read_text())
    for extra in extra_queries:
        data["queries"] = [*data["queries"], *json.loads(extra.read_text())["queries"]]
    return thesis_set_from(data)


def _query(raw: dict[str, Any]) -> ThesisQuery:
    return ThesisQuery(
        id=raw["id"],
        text=raw["text"],
        intent=raw.get("intent", ""),
        relevant=tuple(raw.get("relevant", ())),
        kind=raw.get("kind", ""),
        notes=raw.get("notes", ""),
    )


def thesis_set_from(data: dict[str, Any]) -> ThesisSet:
    """A thesis set from its decoded JSON."""
    queries = tuple(_query(q) for q in data["queries"])
    ids = [q.id for q in queries]
    if len(set(ids)) != len(ids):
        raise ValueError(f"thesis set {data['name']!r}: query ids repeat")
    return ThesisSet(
        name=data["name"],
        deployment=data.get("deployment", "default"),
        drawers=tuple(_drawer(d) for d in data["drawers"]),
        queries=queries,
    )
