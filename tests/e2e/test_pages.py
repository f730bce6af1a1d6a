"""Every page opens on a store with content, for an admin and for a read token, without a
script error and without a serious accessibility violation; a read token's pages offer no
write or admin action."""

from __future__ import annotations

import pytest
from playwright.async_api import Page, expect

from tests.e2e.conftest import ADMIN_TOKEN, serious_violations, sign_in, store_with_drawers
from tests.e2e.test_authoring import TURNS
from tests.gateway.conftest import Served

pytestmark = pytest.mark.slow

STORE_PAGES = ("search?q=missing+drawer", "drawers", "raw", "corpus", "authoring", "links",
               "insight")  # fmt: skip
WRITE_ACTIONS = ("new drawer", "write drawer", "create store", "create token", "compose",
                 "smoke test", "pin", "deprecate", "create link")  # fmt: skip


async def _store(served: Served) -> tuple[str, str]:
    store, ids = await store_with_drawers(served)
    added = await served.api.client.post(
        f"/v1/stores/{store}/raw/sessions",
        json={"session_id": "sync-1", "origin_kind": "dialog", "turns": TURNS},
        headers=served.api.admin,
    )
    assert added.status_code in (200, 201), added.text
    return store, ids[0]


@pytest.mark.parametrize("tier", ["admin", "read"])
async def test_every_page_opens_clean(page: Page, served: Served, tier: str) -> None:
    store, drawer = await _store(served)
    token = ADMIN_TOKEN if tier == "admin" else await served.api.token("read")
    await sign_in(page, served.url, token)
    paths = [f"s/{store}/{p}" for p in STORE_PAGES] + [f"s/{store}/drawers/{drawer}", "stores"]
    if tier == "admin":
        paths.append("tokens")
    for path in paths:
        await page.goto(f"{served.url}/dashboard/{path}")
        main = page.locator("main")
        await expect(main.locator(".card").first).to_be_visible()
        await page.wait_for_load_state("networkidle")
        assert await serious_violations(page) == [], path
        if tier == "read":
            for action in WRITE_ACTIONS:
                found = main.get_by_role("button", name=action, exact=True)
                assert await found.count() == 0, f"{path}: a read token is offered {action!r}"
