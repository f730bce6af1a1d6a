"""How a drawer is stored: the proto itself (as a dict) in the Qdrant payload, plus flat keys
derived from it for payload filters. The shape is never re-declared here."""

from __future__ import annotations

import hashlib
import unicodedata
from datetime import UTC, datetime
from typing import Any

from engram.v1 import common_pb2
from google.protobuf import json_format
from google.protobuf.timestamp_pb2 import Timestamp

from services.vocabulary.enums import PIN_NAMES


def content_hash(content: str) -> str:
    """sha256 of the content, NFC-normalised, whitespace-collapsed and case-folded: the same
    sentence typed twice hashes the same."""
    normal = " ".join(unicodedata.normalize("NFC", content).split()).casefold()
    return hashlib.sha256(normal.encode("utf-8")).hexdigest()


def to_datetime(ts: Timestamp) -> datetime:
    """A proto Timestamp as an aware UTC datetime (the epoch when unset)."""
    return datetime.fromtimestamp(ts.seconds + ts.nanos / 1e9, UTC)


def to_timestamp(moment: datetime) -> Timestamp:
    ts = Timestamp()
    ts.FromDatetime(moment.astimezone(UTC))
    return ts


def epoch(ts: Timestamp) -> float:
    return ts.seconds + ts.nanos / 1e9


def drawer_payload(drawer: common_pb2.Drawer) -> dict[str, Any]:
    """The Qdrant payload of a drawer: the stored proto plus flat filter keys."""
    stored = common_pb2.Drawer()
    stored.CopyFrom(drawer)
    stored.ClearField("effective_salience")  # computed at read time, never stored
    return {
        "drawer": json_format.MessageToDict(stored, preserving_proto_field_name=True),
        "wing": drawer.wing,
        "room": drawer.room,
        "memory_type": drawer.memory_type,
        "pin_status": PIN_NAMES[drawer.pin_status],
        "sessions": sorted({arc.session_id for arc in drawer.derived_from if arc.session_id}),
    }


def drawer_from_payload(payload: dict[str, Any]) -> common_pb2.Drawer:
    """The drawer stored in a payload."""
    drawer = common_pb2.Drawer()
    json_format.ParseDict(payload["drawer"], drawer, ignore_unknown_fields=True)
    return drawer
