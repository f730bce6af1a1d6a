"""Token expiry and rotation through REST: a token made with an expiry shows it; rotating
answers a new secret once, keeps the grant, and the old secret works only within the grace."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.gateway.conftest import Api


async def test_rotate_a_token_over_rest(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    expires = (datetime.now(UTC) + timedelta(days=30)).isoformat().replace("+00:00", "Z")
    made = await api.client.post(
        "/v1/tokens",
        json={"tier": "CALLER_TIER_WRITE", "stores": [store_name], "label": "rotating",
              "expires_at": expires},
        headers=api.admin,
    )  # fmt: skip
    assert made.status_code == 201, made.text
    info, old = made.json()["info"], made.json()["token"]
    assert info["expires_at"].startswith(expires[:16]), info

    rotated = await api.client.post(
        f"/v1/tokens/{info['id']}:rotate", json={"grace_s": 0}, headers=api.admin
    )
    assert rotated.status_code == 200, rotated.text
    new = rotated.json()["token"]
    assert new != old and rotated.json()["info"]["stores"] == [store_name]
    assert rotated.json()["info"]["expires_at"] == info["expires_at"], "the grant is kept"
    refused = await api.client.get("/v1/whoami", headers=api.auth(old))
    assert refused.status_code == 401, refused.text
    who = await api.client.get("/v1/whoami", headers=api.auth(new))
    assert who.status_code == 200 and who.json()["id"] == info["id"], who.text

    graced = await api.client.post(f"/v1/tokens/{info['id']}:rotate", json={}, headers=api.admin)
    assert graced.status_code == 200 and graced.json()["info"]["previous_valid_until"]
    still = await api.client.get("/v1/whoami", headers=api.auth(new))
    assert still.status_code == 200, "the default grace keeps the previous secret working"
    writer = await api.client.post(
        f"/v1/tokens/{info['id']}:rotate", json={}, headers=api.auth(graced.json()["token"])
    )
    assert writer.status_code == 403, "only an admin rotates"
