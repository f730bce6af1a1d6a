"""`engram doctor` through the gateway: CheckStore over REST (admin only, scoped), answered by
every tier that keeps the store's state, and the CLI reading it from a served gateway."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
from pathlib import Path

import pytest

from services.cli.doctor import run_doctor
from tests.gateway.conftest import ADMIN_TOKEN, Api, Tiers, gateway_settings, served_gateway
from tests.gateway.test_drawers_search import FACTS, _seed


async def test_check_store_is_answered_by_each_tier(api: Api, store_name: str) -> None:
    await _seed(api, store_name)
    answer = await api.client.post(
        f"/v1/stores/{store_name}:check", json={"repair": False}, headers=api.admin
    )
    assert answer.status_code == 200, answer.text
    report = answer.json()
    assert report["store"] == store_name
    assert [c["tier"] for c in report["checks"]] == ["retrieval", "corpus"]
    retrieval = report["checks"][0]
    assert int(retrieval["items_checked"]) == len(FACTS), "every drawer compared"
    assert all(not c["drift"] for c in report["checks"]) and int(report["drift"]) == 0


@pytest.mark.parametrize("tier", ["read", "write"])
async def test_check_store_needs_an_admin_token(api: Api, store_name: str, tier: str) -> None:
    await api.create_store(store_name)
    answer = await api.client.post(
        f"/v1/stores/{store_name}:check",
        json={"repair": True},
        headers=await api.as_tier(tier, store_name),
    )
    assert answer.status_code == 403, answer.text


async def test_check_store_keeps_to_the_tokens_stores(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    other = f"{store_name}-other"
    await api.create_store(other)
    answer = await api.client.post(
        f"/v1/stores/{other}:check", json={}, headers=await api.as_tier("admin", store_name)
    )
    assert answer.status_code == 403, answer.text


def _doctor(
    url: str, stores: list[str], *, repair: bool, token: str = ADMIN_TOKEN
) -> tuple[int, str]:
    args = argparse.Namespace(store=stores, repair=repair, url=url)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        status = run_doctor(args, token)
    return status, out.getvalue()


async def test_the_cli_reports_a_clean_store_and_a_refusal(
    tiers: Tiers, tmp_path: Path, store_name: str
) -> None:
    async with served_gateway(gateway_settings(tiers, tmp_path / "gateway")) as served:
        await _seed(served.api, store_name)
        status, said = await asyncio.to_thread(_doctor, served.url, [store_name], repair=True)
        assert status == 0, said
        assert f"{store_name} · retrieval: {len(FACTS)} items compared" in said
        assert said.count("✓ every part agrees") == 2 and f"{store_name}: no drift" in said

        status, said = await asyncio.to_thread(_doctor, served.url, [], repair=False)
        assert status == 0 and f"{store_name}: no drift" in said, "no store named: every one"

        status, said = await asyncio.to_thread(_doctor, served.url, ["no-such-store"], repair=False)
        assert status == 2 and "no-such-store: the stack refused the check: not_found" in said

        status, said = await asyncio.to_thread(
            _doctor, served.url, [store_name], repair=False, token="not-a-token"
        )
        assert status == 2 and "refused the check: unauthenticated" in said
