"""The store registry over REST: CRUD, live updates, replay after a restart, one gateway per
data directory, and delete dropping every tier's data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gateway.core.wiring import GatewayDeps
from services.runtime.errors import Conflict
from tests.gateway.conftest import Api, Tiers, gateway_settings, running_gateway


async def test_store_crud_round_trip(api: Api, store_name: str) -> None:
    created = await api.create_store(
        store_name,
        deployment_mode="DEPLOYMENT_MODE_COMPANION",
        defaults={"n_results": 3},
        description="a test store",
    )
    assert created["spec"]["name"] == store_name
    assert created["spec"]["deployment_mode"] == "DEPLOYMENT_MODE_COMPANION"
    assert created["open"] is True
    assert created["created_at"]

    listed = await api.client.get("/v1/stores", headers=api.admin)
    assert listed.status_code == 200
    assert store_name in [s["spec"]["name"] for s in listed.json()["stores"]]

    shown = await api.client.get(f"/v1/stores/{store_name}", headers=api.admin)
    assert shown.status_code == 200, shown.text
    assert shown.json()["spec"]["defaults"] == {"n_results": 3}
    assert int(shown.json()["drawer_count"]) == 0
    in_force = shown.json()["search_defaults"]
    assert in_force["n_results"] == 3, "the store's own default"
    assert "min_score" not in in_force, "no floor on the score was set"
    assert in_force["library"] == "companion" and 0 < in_force["min_relevance"] < 1
    assert "want" in in_force["memory_types"] and "state_check" in in_force["intents"]
    patched = await api.client.patch(
        f"/v1/stores/{store_name}",
        json={"defaults": {"min_score": 0.25}, "deployment_mode": "DEPLOYMENT_MODE_DEFAULT"},
        headers=api.admin,
    )
    assert patched.status_code == 200, patched.text
    shown = await api.client.get(f"/v1/stores/{store_name}", headers=api.admin)
    in_force = shown.json()["search_defaults"]
    assert in_force["library"] == "default" and in_force["min_score"] == 0.25
    assert in_force["n_results"] == 3, "a patch keeps the defaults it does not name"

    again = await api.client.post(
        "/v1/stores", json={"spec": {"name": store_name}}, headers=api.admin
    )
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "conflict"


async def test_the_listing_counts_each_stores_drawers(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    headers = await api.as_tier("write")
    added = await api.client.post(
        f"/v1/stores/{store_name}/drawers",
        json={
            "drawer": {
                "content": "The billing service keeps invoices for seven years.",
                "memory_type": "workflow",
                "wing": "projects",
                "room": "projects/billing",
            },
            "allow_new_wing": True,
        },
        headers=headers,
    )
    assert added.status_code == 200, added.text
    listed = await api.client.get("/v1/stores", headers=api.admin)
    counts = {s["spec"]["name"]: int(s.get("drawer_count", 0)) for s in listed.json()["stores"]}
    assert counts[store_name] == 1, "the listing reports a store's drawers like get_store"


async def test_update_takes_effect_without_restart(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    headers = await api.as_tier("write")
    for text in (
        "The deploy pipeline runs the integration suite before every release.",
        "The team chose Postgres for the billing service after a long review.",
        "Release notes are written by the engineer who merges the last change.",
    ):
        added = await api.client.post(
            f"/v1/stores/{store_name}/drawers",
            json={
                "drawer": {
                    "content": text,
                    "memory_type": "workflow",
                    "wing": "projects",
                    "room": "projects/engram",
                },
                "allow_new_wing": True,
            },
            headers=headers,
        )
        assert added.status_code == 200, added.text
    query = {"query": "how are releases made", "min_score": 0}
    before = await api.client.post(f"/v1/stores/{store_name}/search", json=query, headers=headers)
    assert before.status_code == 200, before.text
    assert len(before.json()["results"]) == 3

    patched = await api.client.patch(
        f"/v1/stores/{store_name}", json={"defaults": {"n_results": 1}}, headers=api.admin
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["spec"]["defaults"]["n_results"] == 1

    after = await api.client.post(f"/v1/stores/{store_name}/search", json=query, headers=headers)
    assert after.status_code == 200, after.text
    assert len(after.json()["results"]) == 1

    closed = await api.client.patch(
        f"/v1/stores/{store_name}", json={"open": False}, headers=api.admin
    )
    assert closed.json()["open"] is False
    refused = await api.client.post(f"/v1/stores/{store_name}/search", json=query, headers=headers)
    assert refused.status_code == 412, refused.text
    assert "closed" in refused.json()["error"]["message"]
    reopened = await api.client.patch(
        f"/v1/stores/{store_name}", json={"open": True}, headers=api.admin
    )
    assert reopened.json()["open"] is True
    served = await api.client.post(f"/v1/stores/{store_name}/search", json=query, headers=headers)
    assert served.status_code == 200


async def test_delete_needs_confirm_and_drops_the_store(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    raw = await api.client.post(
        f"/v1/stores/{store_name}/raw/memories",
        json={"content": "The gateway drops every tier's data when a store is deleted."},
        headers=api.admin,
    )
    assert raw.status_code == 200, raw.text

    unconfirmed = await api.client.delete(f"/v1/stores/{store_name}", headers=api.admin)
    assert unconfirmed.status_code == 422
    assert "confirm" in unconfirmed.json()["error"]["message"]

    deleted = await api.client.delete(
        f"/v1/stores/{store_name}", params={"confirm": "true"}, headers=api.admin
    )
    assert deleted.status_code == 200, deleted.text
    assert deleted.json() == {"deleted": True}
    gone = await api.client.get(f"/v1/stores/{store_name}", headers=api.admin)
    assert gone.status_code == 404

    # Created again, the store starts empty: the corpus tier's raw memories went with it.
    await api.create_store(store_name)
    found = await api.client.post(
        f"/v1/stores/{store_name}/raw/search",
        json={"query": "tier data deleted", "n_results": 5},
        headers=api.admin,
    )
    assert found.status_code == 200, found.text
    assert found.json()["results"] == []


async def test_stores_are_replayed_after_a_restart(tiers: Tiers, tmp_path: Path) -> None:
    settings = gateway_settings(tiers, tmp_path / "data")
    async with running_gateway(settings) as first:
        await first.create_store("replayed-open", defaults={"n_results": 2})
        await first.create_store("replayed-closed")
        await first.client.patch(
            "/v1/stores/replayed-closed", json={"open": False}, headers=first.admin
        )
    async with running_gateway(settings) as second:
        answer = await second.client.get("/v1/stores", headers=second.admin)
        stores = {s["spec"]["name"]: s for s in answer.json()["stores"]}
        assert stores["replayed-open"]["open"] is True
        assert stores["replayed-open"]["spec"]["defaults"] == {"n_results": 2}
        assert stores["replayed-closed"]["open"] is False
        search = await second.client.post(
            "/v1/stores/replayed-open/search", json={"query": "anything"}, headers=second.admin
        )
        assert search.status_code == 200, search.text
    envelope = (settings.state_dir / "stores.json").read_text()
    assert '"version": 1' in envelope


async def test_second_gateway_on_the_same_data_dir_is_refused(tiers: Tiers, tmp_path: Path) -> None:
    settings = gateway_settings(tiers, tmp_path / "data")
    async with running_gateway(settings):
        second = GatewayDeps(settings)
        with pytest.raises(Conflict) as refused:
            second.start_sync()
        assert f"pid {os.getpid()}" in refused.value.message
        assert f"port {settings.port}" in refused.value.message
    # Once the first one stopped, the directory is free again.
    async with running_gateway(settings) as third:
        assert (await third.client.get("/healthz")).status_code == 200
