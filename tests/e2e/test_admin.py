"""Stores and tokens through the dashboard (admin): create a store; create a token, see it
once, revoke it, and see the next call with it refused."""

from __future__ import annotations

import uuid

import pytest
from playwright.async_api import Page, expect

from tests.e2e.conftest import ADMIN_TOKEN, serious_violations, sign_in
from tests.gateway.conftest import Served

pytestmark = pytest.mark.slow


async def test_create_a_store(page: Page, served: Served) -> None:
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    await sign_in(page, served.url, ADMIN_TOKEN)
    await page.get_by_role("link", name="stores").click()
    await page.get_by_label("name", exact=True).fill(name)
    await page.get_by_role("button", name="create store").click()
    await expect(
        page.get_by_role("table", name="stores").get_by_role("link", name=name)
    ).to_be_visible()
    created = await served.api.client.get(f"/v1/stores/{name}", headers=served.api.admin)
    assert created.status_code == 200, created.text
    await expect(
        page.get_by_label("store", exact=True).locator(f"option[value='{name}']")
    ).to_have_count(1)
    assert await serious_violations(page) == []


async def test_revoke_a_token_and_the_next_call_is_refused(page: Page, served: Served) -> None:
    label = f"e2e-agent-{uuid.uuid4().hex[:6]}"
    await sign_in(page, served.url, ADMIN_TOKEN)
    await page.get_by_role("link", name="tokens").click()
    await page.get_by_label("tier", exact=True).select_option("CALLER_TIER_WRITE")
    await page.get_by_label("label", exact=True).fill(label)
    await page.get_by_role("button", name="create token").click()
    token = await page.get_by_label("token", exact=True).input_value()
    assert token.startswith("egm_"), token
    headers = served.api.auth(token)
    before = await served.api.client.get("/v1/whoami", headers=headers)
    assert before.status_code == 200 and before.json()["label"] == label, before.text
    assert await serious_violations(page) == []

    await page.get_by_role("button", name=f"revoke {label}").click()
    await page.get_by_role("button", name="revoke token").click()
    await expect(page.get_by_role("button", name=f"revoke {label}")).to_have_count(0)
    after = await served.api.client.get("/v1/whoami", headers=headers)
    assert after.status_code == 401, after.text
