"""Protobuf ↔ authoring domain translations (enum names, drafts, log entries, prompts, policy)."""

from __future__ import annotations

from datetime import datetime

from engram.v1 import authoring_pb2, common_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from services.authoring.core import DraftInput, WritePolicy
from services.authoring.state import Prompt, Provenance
from services.runtime.errors import InvalidInput
from services.runtime.stores import validate_store_name
from services.vocabulary import DEFAULT_MODE
from services.vocabulary.enums import CALLER_TIER_NAMES, CALLER_TIER_VALUES, MODE_NAMES, PIN_NAMES


def mode_of(store: common_pb2.StoreContext) -> str:
    validate_store_name(store.name)
    return MODE_NAMES.get(store.deployment_mode, DEFAULT_MODE)


def tier_of(store: common_pb2.StoreContext) -> str:
    """The caller's token tier, set by the gateway; an unset tier is no tier at all."""
    tier = CALLER_TIER_NAMES.get(store.caller_tier)
    if tier is None:
        raise InvalidInput(
            "store.caller_tier is unset: the gateway sets it from the caller's token",
            field="store.caller_tier",
        )
    return tier


def pin_name(value: common_pb2.PinStatus.ValueType) -> str:
    name = PIN_NAMES.get(value)
    if name is None:
        raise InvalidInput(f"pin_status {value} is not a known value", field="pin_status")
    return name


def draft_input(draft: authoring_pb2.DrawerDraft, *, added_by: str) -> DraftInput:
    return DraftInput(
        content=draft.content,
        memory_type=draft.memory_type,
        wing=draft.wing,
        room=draft.room,
        pin_status=pin_name(draft.pin_status),
        topic=draft.topic,
        added_by=draft.added_by or added_by,
    )


def timestamp(at: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(at)
    return stamp


def provenance_proto(entry: Provenance) -> common_pb2.ProvenanceEntry:
    return common_pb2.ProvenanceEntry(
        at=timestamp(entry.at),
        actor=entry.actor,
        action=entry.action,
        reason=entry.reason,
        changes=entry.changes,
    )


def prompt_proto(prompt: Prompt) -> authoring_pb2.PromptVersion:
    return authoring_pb2.PromptVersion(
        version=prompt.version,
        text=prompt.text,
        active=prompt.active,
        created_at=timestamp(prompt.created_at),
        created_by=prompt.created_by,
        note=prompt.note,
    )


def _tiers(values: list[common_pb2.CallerTier.ValueType], field: str) -> list[str]:
    unknown = [v for v in values if v not in CALLER_TIER_NAMES]
    if unknown:
        raise InvalidInput(f"{field} names unknown caller tiers {unknown}", field=field)
    return [CALLER_TIER_NAMES[v] for v in values]


def policy_from_proto(policy: authoring_pb2.WritePolicy) -> WritePolicy:
    return WritePolicy.from_config(
        {
            "writers": _tiers(list(policy.writers), "writers"),
            "pinners": _tiers(list(policy.pinners), "pinners"),
            "wing_creators": _tiers(list(policy.wing_creators), "wing_creators"),
            "forbidden_types": {
                tier: list(types.memory_types) for tier, types in policy.forbidden_types.items()
            },
        }
    )


def policy_proto(policy: WritePolicy) -> authoring_pb2.WritePolicy:
    return authoring_pb2.WritePolicy(
        writers=sorted(CALLER_TIER_VALUES[t] for t in policy.writers),
        pinners=sorted(CALLER_TIER_VALUES[t] for t in policy.pinners),
        wing_creators=sorted(CALLER_TIER_VALUES[t] for t in policy.wing_creators),
        forbidden_types={
            tier: authoring_pb2.MemoryTypeList(memory_types=sorted(types))
            for tier, types in policy.forbidden_types.items()
        },
    )
