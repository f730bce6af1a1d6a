"""Typed links through the gateway: routes declared on their RPCs, tiers from the table."""

from __future__ import annotations

from tests.gateway.conftest import Api
from tests.gateway.test_drawers_search import _seed


async def test_links_over_rest_with_the_tiers_the_protos_declare(api: Api, store_name: str) -> None:
    first, second, *_ = await _seed(api, store_name)
    write = await api.as_tier("write", store_name)
    read = await api.as_tier("read", store_name)
    body = {"from_id": second["id"], "to_id": first["id"], "type": "LINK_TYPE_SUPERSEDES"}

    refused = await api.client.post(f"/v1/stores/{store_name}/links", json=body, headers=read)
    assert refused.status_code == 403, "linking needs write scope"
    created = await api.client.post(f"/v1/stores/{store_name}/links", json=body, headers=write)
    assert created.status_code == 201, created.text
    link = created.json()
    assert link["asserted_by"], "the caller's token is recorded as who asserted it"

    listed = await api.client.get(
        f"/v1/stores/{store_name}/drawers/{first['id']}/links",
        params={"types": "LINK_TYPE_SUPERSEDES"},
        headers=read,
    )
    assert listed.status_code == 200, listed.text
    assert [x["id"] for x in listed.json()["links"]] == [link["id"]]
    walked = await api.client.post(
        f"/v1/stores/{store_name}/links:traverse",
        json={"drawer_id": first["id"], "direction": "LINK_DIRECTION_INCOMING"},
        headers=read,
    )
    assert walked.json()["drawer_ids"] == [first["id"], second["id"]]

    missing = await api.client.post(
        f"/v1/stores/{store_name}/links",
        json={**body, "to_id": "d_not_there"},
        headers=write,
    )
    assert missing.status_code == 404 and "no drawer" in missing.json()["error"]["message"]

    ended = await api.client.post(
        f"/v1/stores/{store_name}/links/{link['id']}:end", json={}, headers=write
    )
    assert ended.status_code == 200 and ended.json()["valid_to"]
    not_admin = await api.client.delete(
        f"/v1/stores/{store_name}/links/{link['id']}", headers=write
    )
    assert not_admin.status_code == 403, "deleting a link outright is an admin's act"
    deleted = await api.client.delete(
        f"/v1/stores/{store_name}/links/{link['id']}", headers=api.admin
    )
    assert deleted.status_code == 200 and deleted.json()["deleted"] is True
