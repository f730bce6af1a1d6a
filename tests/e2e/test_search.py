"""The marquee page: sign in, ask a store a question, open a result's score breakdown and the
query's dampening profile; a read token is offered no write or admin action."""

from __future__ import annotations

import pytest
from playwright.async_api import Page, expect

from tests.e2e.conftest import ADMIN_TOKEN, serious_violations, sign_in, store_with_drawers
from tests.gateway.conftest import Served

pytestmark = pytest.mark.slow


async def test_a_search_shows_every_factor_and_the_dampening_profile(
    page: Page, served: Served
) -> None:
    store, _ = await store_with_drawers(served)
    await sign_in(page, served.url, ADMIN_TOKEN)
    await page.get_by_label("store", exact=True).select_option(store)
    await expect(page.get_by_label("mode DEFAULT")).to_be_visible()
    await page.get_by_role("link", name="search").click()

    await page.get_by_label("query").fill("what does the API return when a drawer is missing?")
    await page.get_by_role("button", name="search", exact=True).click()
    first = page.get_by_role("article", name="result 1")
    await expect(first).to_contain_text("404")
    await first.get_by_role("button", name="breakdown").click()
    breakdown = first.get_by_role("table", name="score breakdown")
    for factor in ("similarity", "authority", "type × intent", "provenance", "final"):
        await expect(breakdown.get_by_role("cell", name=factor, exact=True)).to_be_visible()
    profile = page.get_by_role("table", name="dampening profile")
    await expect(profile).to_contain_text("type")
    await expect(page.get_by_label("query profile")).to_contain_text("inferred")
    assert await serious_violations(page) == []

    # The three rankers on the same question, side by side.
    await page.get_by_label("side by side").check()
    await page.get_by_role("button", name="search", exact=True).click()
    for ranker in ("full", "hybrid", "cosine"):
        await expect(page.get_by_label(f"ranker · {ranker}")).to_contain_text("404")


async def test_a_read_token_is_offered_no_write_or_admin_action(page: Page, served: Served) -> None:
    store, _ = await store_with_drawers(served)
    await sign_in(page, served.url, await served.api.token("read"))
    await expect(page.get_by_text("read", exact=True)).to_be_visible()
    await expect(page.get_by_role("link", name="tokens")).to_have_count(0)
    await page.goto(f"{served.url}/dashboard/s/{store}/drawers")
    await expect(page.get_by_role("link", name="open drawer").first).to_be_visible()
    main = page.locator("main")
    for action in ("new drawer", "delete", "pin", "create store", "ingest", "compose"):
        await expect(main.get_by_role("button", name=action)).to_have_count(0)
