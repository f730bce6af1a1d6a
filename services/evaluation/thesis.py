"""The thesis sets ("decisions over discussion"): load the JSON schema of shared/eval into
Drawer protos and typed queries."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from engram.v1 import common_pb2

from services.retrieval.pool.records import to_timestamp
from services.vocabulary.enums import PIN_VALUES

# The sets are written as of this day ("Take now to be 2026-07-01").
THESIS_NOW = datetime(2026, 7, 1, tzinfo=UTC)


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


def load_thesis_set(path: Path) -> ThesisSet:
    """Read a thesis-set file (schema in shared/eval/README.md)."""
    return thesis_set_from(json.loads(path.read_text()))


def thesis_set_from(data: dict[str, Any]) -> ThesisSet:
    """A thesis set from its decoded JSON."""
    return ThesisSet(
        name=data["name"],
        deployment=data.get("deployment", "default"),
        drawers=tuple(_drawer(d) for d in data["drawers"]),
        queries=tuple(
            ThesisQuery(
                id=q["id"],
                text=q["text"],
                intent=q.get("intent", ""),
                relevant=tuple(q.get("relevant", ())),
                kind=q.get("kind", ""),
                notes=q.get("notes", ""),
            )
            for q in data["queries"]
        ),
    )
