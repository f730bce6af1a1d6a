"""Who is calling: the principal a bearer token resolves to, and what its tier allows."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import IntEnum

from engram.v1 import common_pb2

from services.runtime.errors import InvalidInput, PermissionDenied


class Tier(IntEnum):
    """Token tiers, ordered: each one can do everything the ones below it can."""

    READ = common_pb2.CALLER_TIER_READ
    WRITE = common_pb2.CALLER_TIER_WRITE
    ADMIN = common_pb2.CALLER_TIER_ADMIN

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, value: str | int) -> Tier:
        """A tier from its name (read, write, admin, CALLER_TIER_WRITE) or proto number."""
        if isinstance(value, int):
            try:
                return cls(value)
            except ValueError:
                pass
        else:
            key = value.strip().upper().removeprefix("CALLER_TIER_")
            if key in cls.__members__:
                return cls[key]
        raise InvalidInput(f"tier {value!r} is not one of read, write, admin", field="tier")


@dataclass(frozen=True)
class Principal:
    """The caller of one request. `stores` None means every store."""

    token_id: str
    tier: Tier
    stores: frozenset[str] | None = None

    def may_use(self, store: str) -> bool:
        return self.stores is None or store in self.stores

    def covers(self, stores: Iterable[str] | None) -> bool:
        """True when this principal's scope includes all of `stores` (None: every store)."""
        if self.stores is None:
            return True
        return stores is not None and set(stores) <= self.stores

    def require(self, tier: Tier, what: str) -> None:
        """PermissionDenied unless this principal's tier is at least `tier`."""
        if self.tier < tier:
            raise PermissionDenied(
                f"{what} needs a {tier.label} token; this one is {self.tier.label}",
                field="tier",
            )

    def require_store(self, store: str) -> None:
        """PermissionDenied unless the store is in this principal's scope."""
        if not self.may_use(store):
            raise PermissionDenied(
                f"this token is not scoped to store {store!r}; ask an admin for a token "
                "that includes it",
                field="store",
            )
