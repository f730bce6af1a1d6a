"""A token over its rate limit gets 429 with Retry-After and a message that says when; other
tokens are not slowed by it."""

from __future__ import annotations

from pathlib import Path

from tests.gateway.conftest import Tiers, gateway_settings, running_gateway


async def test_a_token_over_its_limit_is_told_when_to_retry(tiers: Tiers, tmp_path: Path) -> None:
    settings = gateway_settings(tiers, tmp_path, rate_limit_per_s=1.0, rate_limit_burst=3)
    async with running_gateway(settings) as api:
        reader = await api.token("read")  # made with the admin token: its own bucket
        answers = [await api.client.get("/v1/whoami", headers=api.auth(reader)) for _ in range(4)]
        assert [a.status_code for a in answers] == [200, 200, 200, 429]
        refused = answers[-1]
        assert int(refused.headers["retry-after"]) >= 1
        assert "rate limit" in refused.json()["error"]["message"]
        assert refused.json()["error"]["code"] == "overloaded"
        other = await api.client.get("/v1/whoami", headers=api.admin)
        assert other.status_code == 200, "another token keeps its own allowance"
