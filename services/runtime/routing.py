"""Which replica of a partitioned tier holds a store: pure, no I/O.

Retrieval, corpus and authoring each run as one or more replicas; a store lives on exactly one
replica of each. A replica list is written `name=host:port,name=host:port` (or a single bare
`host:port`: one replica, named by its address). A new store goes where rendezvous
(highest-random-weight) hashing of its name over the replicas puts it: each replica scores
`hash(replica, store)` and the highest wins. Adding a replica moves only the stores the new one
now wins; removing one moves only the stores it held. The choice is recorded as the store's
placement when the store is made (`StoreInfo.placement`), so routing never depends on the list
staying the same; `MoveStore` changes it (docs/scaling.md).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from services.runtime.errors import InvalidInput

_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")


@dataclass(frozen=True, slots=True)
class Replica:
    """One replica of a tier: its stable name (routing and job queues key on it) and address."""

    name: str
    address: str
    draining: bool = False  # reachable, holds stores, but is given no new ones
    named: bool = True  # False: a bare `host:port`, one replica running without a name


def parse_replicas(spec: str, *, tier: str, draining: Iterable[str] = ()) -> tuple[Replica, ...]:
    """The replicas of `tier` from `spec`; InvalidInput naming the mistake.

    `draining` names replicas that keep serving the stores they hold but are skipped when a
    store is placed, so `MoveStore` can empty them before they are removed (names of other
    tiers' replicas among them are ignored).
    """
    entries = [part.strip() for part in spec.split(",") if part.strip()]
    if not entries:
        raise InvalidInput(f"no {tier} replica is configured (an empty address list)")
    drain = set(draining)
    replicas: list[Replica] = []
    for entry in entries:
        name, sep, address = entry.partition("=")
        if not sep:
            if len(entries) > 1:
                raise InvalidInput(
                    f"{tier} replica {entry!r} has no name: with several replicas each is "
                    "written name=host:port (the name is what stores are placed by)"
                )
            replicas.append(Replica(entry, entry, entry in drain, named=False))
            continue
        if not _NAME.match(name):
            raise InvalidInput(
                f"{tier} replica name {name!r} must be lower-case letters, digits, '.', '_' "
                "or '-' (at most 63)"
            )
        if not address or ":" not in address:
            raise InvalidInput(f"{tier} replica {name!r} needs an address host:port")
        replicas.append(Replica(name, address, name in drain))
    names = [r.name for r in replicas]
    if len(set(names)) != len(names):
        raise InvalidInput(f"{tier} replica names repeat: {', '.join(names)}")
    if all(r.draining for r in replicas):
        raise InvalidInput(f"every {tier} replica is draining: no replica can take a store")
    return tuple(replicas)


def weight(replica: str, store: str) -> int:
    """The rendezvous score of `replica` for `store`: stable across processes and versions."""
    digest = hashlib.blake2b(f"{replica}\x00{store}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def rendezvous(store: str, replicas: Iterable[Replica]) -> Replica:
    """The replica a new `store` goes to: the highest score among those not draining."""
    candidates = [r for r in replicas if not r.draining]
    if not candidates:
        raise InvalidInput("no replica can take a store (none configured, or all draining)")
    return max(candidates, key=lambda r: (weight(r.name, store), r.name))


def place(store: str, tiers: Mapping[str, tuple[Replica, ...]]) -> dict[str, str]:
    """A new store's placement: tier -> replica name, for each tier that has several replicas
    (a tier with one needs no placement: every call goes to it)."""
    return {
        tier: rendezvous(store, replicas).name
        for tier, replicas in tiers.items()
        if len(replicas) > 1
    }


def queue_name(base: str, replica: str) -> str:
    """The job queue of one replica: `base` for an unnamed single replica, else `base@name`,
    so a worker takes only the jobs of the stores its replica holds."""
    return f"{base}@{replica}" if replica else base


def replica_queues(base: str, replicas: tuple[Replica, ...]) -> list[str]:
    """The job queues of a tier's replicas: `base@name` for a named one, `base` for a bare
    `host:port` (a replica running without ENGRAM_<TIER>_REPLICA_NAME)."""
    return [queue_name(base, r.name if r.named else "") for r in replicas]
