"""Drawers through the dashboard: write one with the form, see it listed, open it, pin it
(admin), and delete it with a reason; a write that repeats a claim is told it is a duplicate."""

from __future__ import annotations

import uuid

import pytest
from playwright.async_api import Page, expect

from tests.e2e.conftest import ADMIN_TOKEN, serious_violations, sign_in
from tests.gateway.conftest import Served

pytestmark = pytest.mark.slow

CLAIM = "The Architect decided that exports run nightly at 02:00 UTC."


async def _write(page: Page, content: str) -> None:
    form = page.get_by_role("region", name="new drawer")
    await form.get_by_label("content (1–3 sentences", exact=False).fill(content)
    await form.get_by_label("memory type").select_option("decision")
    await form.get_by_label("wing", exact=True).fill("projects")
    await form.get_by_label("room (wing/name)").fill("projects/exports")
    await form.get_by_label("may open a new wing").check()
    await form.get_by_role("button", name="write drawer").click()


async def test_write_open_pin_and_delete_a_drawer(page: Page, served: Served) -> None:
    store = f"e2e-{uuid.uuid4().hex[:8]}"
    await served.api.create_store(store)
    await sign_in(page, served.url, ADMIN_TOKEN)
    await page.goto(f"{served.url}/dashboard/s/{store}/drawers")
    await page.get_by_role("button", name="new drawer").click()
    await _write(page, CLAIM)
    await expect(page.get_by_text("written", exact=True)).to_be_visible()
    await expect(page.locator("main")).to_contain_text(CLAIM)

    await _write(page, CLAIM)
    await expect(page.get_by_text("duplicate: an existing drawer", exact=False)).to_be_visible()
    assert await serious_violations(page) == []

    await page.get_by_role("link", name="open").first.click()
    await expect(page.locator("main")).to_contain_text(CLAIM)
    await page.get_by_role("button", name="pin", exact=True).click()
    await expect(page.locator("main").get_by_text("pinned", exact=True).first).to_be_visible()
    assert await serious_violations(page) == []

    await page.get_by_role("button", name="delete this drawer…").click()
    await page.get_by_label("reason (required; the provenance log keeps it)").fill(
        "written by the browser test"
    )
    await page.get_by_role("button", name="delete for good").click()
    await expect(page).to_have_url(f"{served.url}/dashboard/s/{store}/drawers")
    listed = await served.api.client.get(f"/v1/stores/{store}/drawers", headers=served.api.admin)
    assert listed.json().get("drawers", []) == [], "the drawer is gone from the store"
