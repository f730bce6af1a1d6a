"""The store registry on both backends (a JSON file, real Redis): its rules and errors, its
replay, and on Redis what one gateway replica changes being what every other one reads at its
next call."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from engram.v1 import common_pb2, gateway_pb2

from gateway.core.redis_state import Keyspace, RedisStores
from gateway.core.registry import StoreRegistry, StoresFile
from services.runtime.errors import Conflict, FailedPrecondition, InvalidInput, NotFound


def _spec(name: str, **fields: object) -> gateway_pb2.StoreSpec:
    return gateway_pb2.StoreSpec(name=name, **fields)  # type: ignore[arg-type]


def _update(name: str, **fields: object) -> gateway_pb2.UpdateStoreRequest:
    return gateway_pb2.UpdateStoreRequest(name=name, **fields)  # type: ignore[arg-type]


def test_a_store_is_created_once_and_read_back(open_registry: Callable[[], StoreRegistry]) -> None:
    registry = open_registry()
    info = registry.create(_spec("alpha", description="notes"), placement={"retrieval": "r-1"})
    assert info.open and info.spec.deployment_mode == common_pb2.DEPLOYMENT_MODE_DEFAULT
    assert registry.get("alpha") == info
    assert [i.spec.name for i in registry.list()] == ["alpha"]
    context = registry.context("alpha")
    assert (context.name, dict(context.placement)) == ("alpha", {"retrieval": "r-1"})
    assert registry.placement("alpha") == {"retrieval": "r-1"}
    assert registry.placement("unknown") == {}
    with pytest.raises(Conflict, match="already exists"):
        registry.create(_spec("alpha"))
    with pytest.raises(NotFound, match="list_stores"):
        registry.get("beta")
    with pytest.raises(InvalidInput, match="n_results"):
        registry.create(_spec("beta", defaults=common_pb2.StoreDefaults(n_results=0)))
    assert [i.spec.name for i in registry.list()] == ["alpha"], "a refused create adds nothing"


def test_an_update_merges_what_it_sets_and_a_refused_one_changes_nothing(
    open_registry: Callable[[], StoreRegistry],
) -> None:
    registry = open_registry()
    registry.create(_spec("alpha", description="notes", legacy_authority=True))
    info = registry.update(_update("alpha", description="new", open=False))
    assert (info.spec.description, info.spec.legacy_authority, info.open) == ("new", True, False)
    with pytest.raises(FailedPrecondition, match="closed"):
        registry.context("alpha")
    with pytest.raises(InvalidInput, match="replace_authority_profile"):
        registry.update(_update("alpha", authority_profile=common_pb2.AuthorityProfile()))
    with pytest.raises(InvalidInput, match="description"):
        registry.update(_update("alpha", description="x" * 2001))
    assert registry.get("alpha").spec.description == "new", "a refused update changes nothing"
    with pytest.raises(NotFound):
        registry.update(_update("beta", open=True))
    registry.update(_update("alpha", open=True))
    assert registry.context("alpha").name == "alpha"
    assert dict(registry.place("alpha", {"corpus": "c-2"}).placement) == {"corpus": "c-2"}
    registry.remove("alpha")
    with pytest.raises(NotFound):
        registry.remove("alpha")
    assert registry.list() == []


def test_the_registry_is_replayed_by_the_next_instance(
    open_registry: Callable[[], StoreRegistry],
) -> None:
    first = open_registry()
    first.create(_spec("alpha", defaults=common_pb2.StoreDefaults(n_results=2)))
    first.create(_spec("beta"))
    first.update(_update("beta", open=False))
    replayed = open_registry()
    assert [(i.spec.name, i.open) for i in replayed.list()] == [("alpha", True), ("beta", False)]
    assert replayed.get("alpha").spec.defaults.n_results == 2


def test_concurrent_creates_of_one_name_give_exactly_one_store(
    backend: str, open_registry: Callable[[], StoreRegistry]
) -> None:
    # Redis: one instance per thread, as replicas would be; local: one gateway's threads.
    shared = open_registry()
    registries = [open_registry() if backend == "redis" else shared for _ in range(8)]
    outcomes: list[str] = [""] * len(registries)
    start = threading.Barrier(len(registries))

    def create(i: int) -> None:
        start.wait(timeout=10)
        try:
            registries[i].create(_spec("contested", description=f"by {i}"))
            outcomes[i] = "created"
        except Conflict:
            outcomes[i] = "conflict"

    threads = [threading.Thread(target=create, args=(i,)) for i in range(len(registries))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert sorted(outcomes) == ["conflict"] * 7 + ["created"], f"outcomes: {outcomes}"
    winner = outcomes.index("created")
    assert shared.get("contested").spec.description == f"by {winner}", "the winner's spec is kept"


def test_a_change_through_one_replica_is_read_by_another_at_its_next_call(
    keyspace: Keyspace,
) -> None:
    one, other = StoreRegistry(RedisStores(keyspace)), StoreRegistry(RedisStores(keyspace))
    one.create(_spec("alpha"))
    assert other.context("alpha").name == "alpha", "created on one, open on the other"
    other.update(_update("alpha", open=False))
    with pytest.raises(FailedPrecondition, match="closed"):
        one.context("alpha")
    one.remove("alpha")
    with pytest.raises(NotFound):
        other.get("alpha")


class _CountingStores(RedisStores):
    loads = 0

    def load(self) -> tuple[object, dict[str, gateway_pb2.StoreInfo]]:
        self.loads += 1
        return super().load()


def test_reads_reload_the_entries_only_when_their_version_moved(keyspace: Keyspace) -> None:
    counted = _CountingStores(keyspace)
    registry, writer = StoreRegistry(counted), StoreRegistry(RedisStores(keyspace))
    for _ in range(5):
        registry.list()
    assert counted.loads == 1, f"unchanged entries were loaded {counted.loads} times, not once"
    writer.create(_spec("alpha"))
    registry.get("alpha")
    registry.get("alpha")
    assert counted.loads == 2, "one reload after another replica's change, and no more"


def test_a_registry_file_of_the_previous_release_loads_and_keeps_its_format(
    tmp_path: Path,
) -> None:
    path = tmp_path / "stores.json"
    envelope: dict[str, Any] = {
        "version": 1,
        "stores": [
            {
                "created_at": "2025-01-02T03:04:05Z",
                "open": True,
                "spec": {"deployment_mode": "DEPLOYMENT_MODE_DEFAULT", "name": "kept"},
                "updated_at": "2025-01-02T03:04:05Z",
            }
        ],
    }
    path.write_text(json.dumps(envelope, indent=2, sort_keys=True))
    registry = StoreRegistry(StoresFile(path))
    assert registry.get("kept").created_at.ToJsonString() == "2025-01-02T03:04:05Z"
    registry.create(_spec("added"))
    written = json.loads(path.read_text())
    assert written["version"] == 1
    assert [s["spec"]["name"] for s in written["stores"]] == ["added", "kept"]
    assert written["stores"][1] == envelope["stores"][0], "an untouched entry is kept as it was"


@pytest.mark.parametrize(
    ("text", "says"),
    [("{not json", "cannot be read"), ('{"version": 2, "stores": []}', "has version 2")],
)
def test_an_unreadable_registry_file_stops_the_start(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "stores.json"
    path.write_text(text)
    with pytest.raises(FailedPrecondition, match=says):
        StoreRegistry(StoresFile(path))


def test_an_unreadable_redis_entry_is_named(keyspace: Keyspace) -> None:
    keyspace.client.hset(keyspace.key("stores"), "broken", "{not json")
    with pytest.raises(FailedPrecondition, match="'broken'"):
        StoreRegistry(RedisStores(keyspace))
