"""Which replica holds a store: replica lists, rendezvous placement, per-replica queues."""

from __future__ import annotations

from collections import Counter

import pytest

from services.runtime.errors import InvalidInput
from services.runtime.routing import (
    Replica,
    parse_replicas,
    place,
    queue_name,
    rendezvous,
    replica_queues,
)

STORES = [f"store-{n}" for n in range(3000)]


def _replicas(count: int) -> tuple[Replica, ...]:
    return tuple(Replica(f"retrieval-{n}", f"10.0.0.{n}:50052") for n in range(count))


def test_a_bare_address_is_one_unnamed_replica() -> None:
    (only,) = parse_replicas("127.0.0.1:50052", tier="retrieval")
    assert only == Replica("127.0.0.1:50052", "127.0.0.1:50052", named=False)
    assert replica_queues("engram:corpus", (only,)) == ["engram:corpus"]


def test_named_replicas_keep_their_order_and_queues() -> None:
    replicas = parse_replicas("r-0=h0:1, r-1=h1:2", tier="corpus")
    assert [(r.name, r.address) for r in replicas] == [("r-0", "h0:1"), ("r-1", "h1:2")]
    assert replica_queues("engram:corpus", replicas) == ["engram:corpus@r-0", "engram:corpus@r-1"]
    assert queue_name("engram:corpus", "") == "engram:corpus"


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("", "empty address list"),
        ("h0:1,h1:2", "has no name"),
        ("R0=h0:1", "lower-case"),
        ("r0=h0", "host:port"),
        ("r0=h0:1,r0=h1:2", "repeat"),
    ],
)
def test_a_malformed_replica_list_is_refused_saying_why(spec: str, says: str) -> None:
    with pytest.raises(InvalidInput, match=says):
        parse_replicas(spec, tier="retrieval")


def test_every_replica_draining_is_refused() -> None:
    with pytest.raises(InvalidInput, match="every retrieval replica is draining"):
        parse_replicas("r0=h:1,r1=h:2", tier="retrieval", draining=["r0", "r1"])


def test_rendezvous_spreads_stores_evenly() -> None:
    counts = Counter(rendezvous(store, _replicas(3)).name for store in STORES)
    assert set(counts) == {"retrieval-0", "retrieval-1", "retrieval-2"}
    assert all(abs(count - 1000) < 120 for count in counts.values()), counts


def test_rendezvous_does_not_depend_on_list_order() -> None:
    forwards, backwards = _replicas(4), tuple(reversed(_replicas(4)))
    assert all(rendezvous(s, forwards) == rendezvous(s, backwards) for s in STORES[:500])


def test_adding_a_replica_moves_only_the_stores_it_wins() -> None:
    before = {store: rendezvous(store, _replicas(3)).name for store in STORES}
    after = {store: rendezvous(store, _replicas(4)).name for store in STORES}
    moved = [store for store in STORES if before[store] != after[store]]
    assert all(after[store] == "retrieval-3" for store in moved), "moves only to the new one"
    assert 0.18 < len(moved) / len(STORES) < 0.32, f"about a quarter moves, {len(moved)} did"


def test_a_draining_replica_gets_no_new_store_and_only_its_stores_move() -> None:
    replicas = _replicas(3)
    draining = tuple(Replica(r.name, r.address, draining=r.name == "retrieval-1") for r in replicas)
    for store in STORES[:600]:
        before, after = rendezvous(store, replicas), rendezvous(store, draining)
        assert after.name != "retrieval-1"
        if before.name != "retrieval-1":
            assert after == before, f"{store} left a replica that is not draining"


def test_placement_names_only_partitioned_tiers() -> None:
    tiers = {"retrieval": _replicas(2), "corpus": _replicas(1)}
    assert set(place("alpha", tiers)) == {"retrieval"}
