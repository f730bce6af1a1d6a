"""The prompt lab: smoke-test a prompt version against one raw session and see the drafts it
would write, with nothing written; save an edited version and see it listed."""

from __future__ import annotations

import uuid

import pytest
from playwright.async_api import Page, expect

from tests.e2e.conftest import ADMIN_TOKEN, serious_violations, sign_in
from tests.gateway.conftest import Served

pytestmark = pytest.mark.slow

TURNS = [
    {
        "role": "user",
        "speaker": "Maya",
        "content": "What should the API return for a missing drawer?",
    },
    {
        "role": "assistant",
        "speaker": "The_Architect",
        "content": "We decided that the API returns 404 for missing drawers.",
    },
]


async def test_smoke_test_a_prompt_version_writes_nothing(page: Page, served: Served) -> None:
    store = f"e2e-{uuid.uuid4().hex[:8]}"
    await served.api.create_store(store)
    added = await served.api.client.post(
        f"/v1/stores/{store}/raw/sessions",
        json={"session_id": "sync-1", "origin_kind": "dialog", "turns": TURNS},
        headers=served.api.admin,
    )
    assert added.status_code in (200, 201), added.text
    await sign_in(page, served.url, ADMIN_TOKEN)
    await page.goto(f"{served.url}/dashboard/s/{store}/authoring")

    await expect(page.get_by_role("table", name="prompt versions")).to_contain_text("default-v2")
    await page.get_by_label("allow new wing").check()
    await page.get_by_role("button", name="smoke test", exact=True).click()
    result = page.get_by_role("region", name="dry run result")
    await expect(result.get_by_role("article").first).to_be_visible()
    await expect(result).to_contain_text("404")
    assert await serious_violations(page) == []
    listed = await served.api.client.get(f"/v1/stores/{store}/drawers", headers=served.api.admin)
    assert listed.json().get("drawers", []) == [], "a smoke test wrote drawers"
