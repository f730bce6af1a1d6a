"""Stores partitioned across replicas, served by two stateless gateways (issue 18).

One stack of real processes (tests/scaling/stack.py): two replicas of each stateful tier,
two gateways sharing tokens, the store registry and audit through Redis. Stores land on
different replicas by rendezvous hashing; each gateway serves every store; a killed replica
takes down only its own stores (503 naming it) and loses nothing; a store moves between
replicas with its data.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from services.runtime.routing import Replica, rendezvous
from tests.faults.stack import wait_for
from tests.scaling.stack import REPLICAS, PartitionedStack, replica

pytestmark = pytest.mark.slow

TERMINAL = ("JOB_STATE_DONE", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED")
WRITES = 6


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PartitionedStack]:
    running = PartitionedStack(tmp_path_factory.mktemp("partitioned"))
    try:
        running.start_all()
        yield running
    finally:
        running.stop_all()


def _store_on(tier: str, n: int, prefix: str) -> str:
    """A store name rendezvous hashing puts on replica n of `tier`."""
    replicas = [Replica(replica(tier, i), "-") for i in range(REPLICAS)]
    for k in range(1000):
        name = f"{prefix}-{k}"
        if rendezvous(name, replicas).name == replica(tier, n):
            return name
    raise AssertionError(f"no name among 1,000 lands on {replica(tier, n)}")


def _create(client: httpx.Client, name: str) -> dict[str, Any]:
    answer = client.post("/v1/stores", json={"spec": {"name": name}})
    assert answer.status_code == 201, answer.text
    info: dict[str, Any] = answer.json()
    return info


def _fact(store: str, n: int) -> str:
    return (
        f"Store {store} keeps note {n}: the ledger export for region {n} runs at "
        f"{n + 1}:15 and writes {n * 7 + 3} files to the archive bucket."
    )


def _write(client: httpx.Client, store: str, n: int) -> str:
    body = {
        "drawer": {
            "content": _fact(store, n),
            "memory_type": "observation",
            "wing": "ops",
            "room": "ops/exports",
            "added_by": "scaling-test",
        },
        "allow_new_wing": True,
        "reason": "partitioning test",
    }
    answer = client.post(f"/v1/stores/{store}/drawers", json=body)
    assert answer.status_code == 200, answer.text
    drawer_id: str = answer.json()["drawer"]["id"]
    return drawer_id


def _ids(client: httpx.Client, store: str) -> set[str]:
    answer = client.get(f"/v1/stores/{store}/drawers:export")
    assert answer.status_code == 200, f"export of {store}: {answer.status_code} {answer.text}"
    return {json.loads(line)["id"] for line in answer.text.splitlines() if line.strip()}


def _search(client: httpx.Client, store: str, query: str) -> httpx.Response:
    return client.post(
        f"/v1/stores/{store}/search", json={"query": query, "n_results": 3, "min_score": -1}
    )


def test_stores_land_on_different_replicas_and_every_gateway_serves_them(
    stack: PartitionedStack,
) -> None:
    first, second = _store_on("retrieval", 0, "left"), _store_on("retrieval", 1, "right")
    with stack.client(0) as via_0, stack.client(1) as via_1:
        placed = {first: _create(via_0, first)["placement"], second: _create(via_1, second)}
        placed[second] = placed[second]["placement"]
        assert placed[first]["retrieval"] == "retrieval-0", placed
        assert placed[second]["retrieval"] == "retrieval-1", placed
        assert set(placed[first]) == {"retrieval", "corpus", "authoring"}, placed

        # The store made through gateway 0 is known to gateway 1 at once, and the other way.
        assert via_1.get(f"/v1/stores/{first}").json()["placement"] == placed[first]
        written = {first: {_write(via_1, first, n) for n in range(WRITES)}}
        written[second] = {_write(via_0, second, n) for n in range(WRITES)}
        for store in (first, second):
            for client in (via_0, via_1):
                assert _ids(client, store) == written[store], f"{store} through {client.base_url}"
                hits = _search(client, store, "ledger export archive bucket").json()["results"]
                assert hits and all(store in h["drawer"]["content"] for h in hits), hits

        # Each replica's data folder holds only its own stores.
        assert (stack.root / "retrieval-0" / first).exists()
        assert not (stack.root / "retrieval-0" / second).exists()
        assert (stack.root / "retrieval-1" / second).exists()
        assert not (stack.root / "retrieval-1" / first).exists()


def test_tokens_and_closing_a_store_reach_every_gateway(stack: PartitionedStack) -> None:
    store = _store_on("retrieval", 0, "shared-state")
    with stack.client(0) as via_0, stack.client(1) as via_1:
        _create(via_0, store)
        made = via_0.post(
            "/v1/tokens", json={"tier": "CALLER_TIER_READ", "stores": [store], "label": "scale"}
        )
        assert made.status_code in (200, 201), made.text
        secret, token_id = made.json()["token"], made.json()["info"]["id"]
        reader = {"Authorization": f"Bearer {secret}"}
        seen = httpx.get(f"{stack.url(1)}/v1/stores/{store}", headers=reader, timeout=30)
        assert seen.status_code == 200, f"a token made through gateway 0 on gateway 1: {seen.text}"

        closed = via_1.patch(f"/v1/stores/{store}", json={"open": False})
        assert closed.status_code == 200, closed.text
        refused = _search(via_0, store, "anything")
        assert refused.status_code == 412, f"closed through gateway 1, gateway 0: {refused.text}"
        assert via_0.patch(f"/v1/stores/{store}", json={"open": True}).status_code == 200

        assert via_1.delete(f"/v1/tokens/{token_id}").status_code == 200
        gone = httpx.get(f"{stack.url(0)}/v1/stores/{store}", headers=reader, timeout=30)
        assert gone.status_code == 401, f"revoked through gateway 1, gateway 0: {gone.text}"

        events = via_1.get("/v1/audit", params={"store": store}).json()["events"]
        operations = {e["operation"] for e in events}
        assert {"create_store", "update_store"} <= operations, operations


def test_jobs_run_on_their_stores_replica_and_show_on_every_gateway(
    stack: PartitionedStack,
) -> None:
    store = _store_on("corpus", 1, "ingest")
    with stack.client(0) as via_0, stack.client(1) as via_1:
        assert _create(via_0, store)["placement"]["corpus"] == "corpus-1"
        text = "\n\n".join(
            f"Runbook step {i}: rotate the relay keys of zone {i}." for i in range(30)
        )
        upload = via_0.post(
            f"/v1/stores/{store}/files", files={"file": ("relay.txt", text.encode(), "text/plain")}
        )
        assert upload.status_code == 200, upload.text
        job = via_0.post(f"/v1/stores/{store}/ingest", json={"file_ids": [upload.json()["id"]]})
        assert job.status_code == 202, job.text

        def ended() -> dict[str, Any] | None:
            seen: dict[str, Any] = via_1.get(f"/v1/jobs/{job.json()['id']}").json()
            return seen if seen.get("state") in TERMINAL else None

        finished = wait_for(ended, 180, "the ingest job ending, seen through gateway 1")
        assert finished["state"] == "JOB_STATE_DONE", finished
        # Its event stream too is served by a gateway other than the one that started it.
        events = via_1.get(f"/v1/jobs/{job.json()['id']}/events")
        assert events.status_code == 200, events.text
        assert "JOB_STATE_DONE" in events.text, f"the SSE stream ends with the job: {events.text}"
        assert (stack.root / "corpus-1" / store).exists()
        assert not (stack.root / "corpus-0" / store).exists()


def test_a_killed_replica_fails_only_its_stores_and_loses_nothing(
    stack: PartitionedStack,
) -> None:
    alive, victim = _store_on("retrieval", 0, "survivor"), _store_on("retrieval", 1, "victim")
    with stack.client(0) as via_0, stack.client(1) as via_1:
        written = {}
        for store in (alive, victim):
            _create(via_0, store)
            written[store] = {_write(via_1, store, n) for n in range(WRITES)}

        stack.kill("retrieval-1")
        down = _search(via_0, victim, "ledger export")
        assert down.status_code == 503, down.text
        assert "retrieval-1" in down.text, f"the 503 names the replica: {down.text}"
        assert _search(via_1, alive, "ledger export").status_code == 200
        assert httpx.get(f"{stack.url(0)}/readyz", timeout=5).status_code == 200, (
            "one replica down keeps the gateway in rotation for the other stores"
        )

        stack.start("retrieval-1")
        deadline = time.monotonic() + 60
        # Each gateway reconnects on its own schedule (gRPC's reconnect backoff): both must
        # reach the restarted replica again before the stores are compared.
        for via in (via_1, via_0):
            while _search(via, victim, "ledger export").status_code != 200:
                assert time.monotonic() < deadline, "the restarted replica serves again"
                time.sleep(0.5)
        for store in (alive, victim):
            assert _ids(via_0, store) == written[store], f"{store} after the restart"


def test_a_store_moves_between_replicas_with_its_data(stack: PartitionedStack) -> None:
    store = _store_on("retrieval", 0, "mover")
    with stack.client(0) as via_0, stack.client(1) as via_1:
        info = _create(via_0, store)
        written = {_write(via_0, store, n) for n in range(WRITES)}
        placement = info["placement"]
        to = {
            tier: replica(tier, 1 - int(placement[tier].rsplit("-", 1)[1]))
            for tier in ("retrieval", "corpus", "authoring")
        }
        moved = via_1.post(f"/v1/stores/{store}:move", json={"to": to})
        assert moved.status_code == 200, moved.text
        answer = moved.json()
        assert {m["tier"] for m in answer["moved"]} == set(to), answer
        assert answer["store"]["placement"] == to
        assert answer["store"]["open"] is True, "the store is reopened after the move"
        for client in (via_0, via_1):
            assert _ids(client, store) == written, (
                f"every drawer after the move ({client.base_url})"
            )
        assert not (stack.root / placement["retrieval"] / store).exists(), "the old copy is gone"
        assert (stack.root / to["retrieval"] / store).exists()

        again = via_0.post(f"/v1/stores/{store}:move", json={"to": to}).json()
        assert again.get("moved", []) == [], f"a store in place moves nothing: {again}"
