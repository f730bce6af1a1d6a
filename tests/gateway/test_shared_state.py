"""Two gateways on one Redis (state_backend=redis), each with a data directory of its own, as
two replicas behind a Service: a store made or closed through one is so at the next request
on the other, a token minted on one works on the other until revoked there, both write one
audit log, and a token's rate limit is one bucket across both."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.gateway.conftest import Api, Tiers, gateway_settings, running_gateway


@pytest.fixture
def key_prefix(redis_url: str) -> Iterator[str]:
    prefix = f"engram-test:{uuid.uuid4().hex[:12]}"
    yield prefix
    client = redis.Redis.from_url(redis_url)
    leftover = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    if leftover:
        client.delete(*leftover)
    client.close()


@contextlib.asynccontextmanager
async def two_gateways(
    tiers: Tiers, tmp_path: Path, key_prefix: str, **extra: Any
) -> AsyncIterator[tuple[Api, Api]]:
    """Two gateways on one Redis state, each with a data directory of its own."""
    one, two = (
        gateway_settings(
            tiers, tmp_path / name, state_backend="redis", state_key_prefix=key_prefix, **extra
        )
        for name in ("one", "two")
    )
    async with running_gateway(one) as first, running_gateway(two) as second:
        yield first, second


async def test_two_gateways_share_stores_tokens_and_the_audit_log(
    tiers: Tiers, tmp_path: Path, key_prefix: str, store_name: str
) -> None:
    async with two_gateways(tiers, tmp_path, key_prefix) as (one, two):
        await one.create_store(store_name)
        shown = await two.client.get(f"/v1/stores/{store_name}", headers=two.admin)
        assert shown.status_code == 200, (
            f"a store made on one gateway is unknown on the other: {shown.text}"
        )
        closed = await two.client.patch(
            f"/v1/stores/{store_name}", json={"open": False}, headers=two.admin
        )
        assert closed.status_code == 200, closed.text
        search = await one.client.post(
            f"/v1/stores/{store_name}/search", json={"query": "anything"}, headers=one.admin
        )
        assert search.status_code == 412, f"closed on two, still open on one: {search.status_code}"

        minted = await one.client.post(
            "/v1/tokens", json={"tier": "CALLER_TIER_READ"}, headers=one.admin
        )
        assert minted.status_code == 201, minted.text
        reader = Api.auth(minted.json()["token"])
        assert (await two.client.get("/v1/stores", headers=reader)).status_code == 200
        revoked = await two.client.delete(
            f"/v1/tokens/{minted.json()['info']['id']}", headers=two.admin
        )
        assert revoked.status_code == 200, revoked.text
        after = await one.client.get("/v1/stores", headers=reader)
        assert after.status_code == 401, f"revoked on two, still let in by one: {after.status_code}"

        events = (await two.client.get("/v1/audit", headers=two.admin)).json().get("events", [])
        operations = [e["operation"] for e in events]
        assert operations[:4] == ["revoke_token", "create_token", "update_store", "create_store"], (
            f"both gateways' events, newest first: {operations}"
        )


async def test_a_tokens_rate_limit_is_one_bucket_across_gateways(
    tiers: Tiers, tmp_path: Path, key_prefix: str
) -> None:
    limit = {"rate_limit_per_s": 0.01, "rate_limit_burst": 6}
    async with two_gateways(tiers, tmp_path, key_prefix, **limit) as (one, two):
        headers = await one.as_tier("read")  # spends the admin's calls, none of this token's
        codes = [
            (await api.client.get("/v1/stores", headers=headers)).status_code
            for api in (one, two, one, two, one, two, one)
        ]
    assert codes == [200] * 6 + [429], f"a burst of 6 spread over two gateways: {codes}"
