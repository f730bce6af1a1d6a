"""The proto enums of the vocabulary and their names: one table each, both directions."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from engram.v1 import common_pb2

from services.vocabulary import MODES, PIN_STATUSES, TIERS
from services.vocabulary.enums import (
    AUTHORITY_TIER_NAMES,
    AUTHORITY_TIER_VALUES,
    CALLER_TIER_NAMES,
    CALLER_TIER_VALUES,
    MODE_NAMES,
    MODE_VALUES,
    PIN_NAMES,
    PIN_VALUES,
)
from services.vocabulary.names import AUTHORITY_TIERS

TABLES = [
    (PIN_NAMES, PIN_VALUES, PIN_STATUSES, common_pb2.PinStatus),
    (MODE_NAMES, MODE_VALUES, MODES, common_pb2.DeploymentMode),
    (CALLER_TIER_NAMES, CALLER_TIER_VALUES, TIERS, common_pb2.CallerTier),
    (AUTHORITY_TIER_NAMES, AUTHORITY_TIER_VALUES, AUTHORITY_TIERS, common_pb2.AuthorityTier),
]


@pytest.mark.parametrize(("names", "values", "vocabulary", "enum"), TABLES)
def test_every_name_maps_to_its_named_enum_value_and_back(
    names: Mapping[int, str], values: Mapping[str, int], vocabulary: tuple[str, ...], enum: object
) -> None:
    assert set(values) == set(vocabulary), "a name of the vocabulary has no enum value"
    for name, value in values.items():
        assert value != 0, f"{name!r} maps to the unspecified value"
        assert names[value] == name
    described = enum.DESCRIPTOR.values_by_number  # type: ignore[attr-defined]
    named = {number for number in described if number != 0}
    assert named <= set(names), "an enum value has no name"


def test_unspecified_reads_as_the_default() -> None:
    assert PIN_NAMES[common_pb2.PIN_STATUS_UNSPECIFIED] == "active"
    assert MODE_NAMES[common_pb2.DEPLOYMENT_MODE_UNSPECIFIED] == "default"
    assert AUTHORITY_TIER_NAMES[common_pb2.AUTHORITY_TIER_UNSPECIFIED] == "worker"
    assert common_pb2.CALLER_TIER_UNSPECIFIED not in CALLER_TIER_NAMES, "no tier is not read"
