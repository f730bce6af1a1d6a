"""The proto enums of the vocabulary, to and from the names the cores use: one table each,
read by every tier's edge (servicers, converters) and the gateway."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, TypeVar

from engram.v1 import common_pb2

from services.vocabulary.libraries import COMPANION_MODE, DEFAULT_MODE
from services.vocabulary.names import (
    AUTHORITY_ADVISORY,
    AUTHORITY_DIRECTIVE,
    AUTHORITY_EXECUTION,
    AUTHORITY_WORKER,
    PIN_ACTIVE,
    PIN_DEPRECATED,
    PIN_PINNED,
    TIER_ADMIN,
    TIER_READ,
    TIER_WRITE,
)

E = TypeVar("E", bound=int)


def _inverse(names: Mapping[E, str]) -> Mapping[str, E]:
    """Name → enum value. Where an unspecified value (0) shares a name with a named value,
    the named one wins: values are taken in ascending order, the last one standing."""
    return MappingProxyType({name: value for value, name in sorted(names.items())})


# Unspecified reads as the default of each: an active drawer, a default-mode store.
PIN_NAMES: Final[Mapping[common_pb2.PinStatus.ValueType, str]] = MappingProxyType(
    {
        common_pb2.PIN_STATUS_UNSPECIFIED: PIN_ACTIVE,
        common_pb2.PIN_STATUS_ACTIVE: PIN_ACTIVE,
        common_pb2.PIN_STATUS_PINNED: PIN_PINNED,
        common_pb2.PIN_STATUS_DEPRECATED: PIN_DEPRECATED,
    }
)
PIN_VALUES: Final[Mapping[str, common_pb2.PinStatus.ValueType]] = _inverse(PIN_NAMES)

MODE_NAMES: Final[Mapping[common_pb2.DeploymentMode.ValueType, str]] = MappingProxyType(
    {
        common_pb2.DEPLOYMENT_MODE_UNSPECIFIED: DEFAULT_MODE,
        common_pb2.DEPLOYMENT_MODE_DEFAULT: DEFAULT_MODE,
        common_pb2.DEPLOYMENT_MODE_COMPANION: COMPANION_MODE,
    }
)
MODE_VALUES: Final[Mapping[str, common_pb2.DeploymentMode.ValueType]] = _inverse(MODE_NAMES)

# A caller without a tier is refused by the tiers that check it: no entry for unspecified.
CALLER_TIER_NAMES: Final[Mapping[common_pb2.CallerTier.ValueType, str]] = MappingProxyType(
    {
        common_pb2.CALLER_TIER_READ: TIER_READ,
        common_pb2.CALLER_TIER_WRITE: TIER_WRITE,
        common_pb2.CALLER_TIER_ADMIN: TIER_ADMIN,
    }
)
CALLER_TIER_VALUES: Final[Mapping[str, common_pb2.CallerTier.ValueType]] = _inverse(
    CALLER_TIER_NAMES
)

# An author the profile does not place is a worker.
AUTHORITY_TIER_NAMES: Final[Mapping[common_pb2.AuthorityTier.ValueType, str]] = MappingProxyType(
    {
        common_pb2.AUTHORITY_TIER_UNSPECIFIED: AUTHORITY_WORKER,
        common_pb2.AUTHORITY_TIER_DIRECTIVE: AUTHORITY_DIRECTIVE,
        common_pb2.AUTHORITY_TIER_ADVISORY: AUTHORITY_ADVISORY,
        common_pb2.AUTHORITY_TIER_EXECUTION: AUTHORITY_EXECUTION,
        common_pb2.AUTHORITY_TIER_WORKER: AUTHORITY_WORKER,
    }
)
AUTHORITY_TIER_VALUES: Final[Mapping[str, common_pb2.AuthorityTier.ValueType]] = _inverse(
    AUTHORITY_TIER_NAMES
)
