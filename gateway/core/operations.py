"""The operation table as the gateway uses it: `engram.operations` (read from the protos'
`(engram.v1.operation)` options, shared with the client library) and the token tier each
operation needs, for the permission check of every face (decision 0016)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from engram.operations import (
    OPERATIONS,
    HttpRoute,
    Operation,
    declaration,
    message_class,
    operation_name,
)

from gateway.core.principal import Tier

__all__ = [
    "OPERATIONS",
    "REQUIRED_TIER",
    "HttpRoute",
    "Operation",
    "declaration",
    "message_class",
    "operation_name",
]

# The tier each operation needs, for the permission check of every face.
REQUIRED_TIER: Final[Mapping[str, Tier]] = MappingProxyType(
    {name: Tier(op.tier) for name, op in OPERATIONS.items()}
)
