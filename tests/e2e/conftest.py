"""The operator dashboard in a real browser: Debian's headless Chromium driven by Playwright
over the real stack (every tier in-process, the gateway served by uvicorn on a free port and
serving the built bundle, `make dashboard`). Each test saves a screenshot under
`var/e2e/` (ENGRAM_E2E_ARTIFACTS) and may scan its page with axe-core."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, async_playwright

from tests.gateway.conftest import (
    ADMIN_TOKEN,
    Served,
    gateway_settings,
    served_gateway,
    tiers,
)

__all__ = ["ADMIN_TOKEN", "tiers"]

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "gateway" / "dashboard" / "dist"
AXE = ROOT / "gateway" / "dashboard" / "node_modules" / "axe-core" / "axe.min.js"
ARTIFACTS = Path(os.environ.get("ENGRAM_E2E_ARTIFACTS", ROOT / "var" / "e2e"))
SERIOUS = ("serious", "critical")

pytestmark = pytest.mark.slow


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    message = "no chromium on PATH: `apt-get install chromium` (.ci/run does)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
async def served(tiers: Any, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    if not (BUNDLE / "index.html").is_file():
        pytest.fail("the dashboard is not built: `make dashboard` (make test builds it)")
    settings = gateway_settings(tiers, tmp_path_factory.mktemp("e2e-gateway"), dashboard_dir=BUNDLE)
    async with served_gateway(settings) as running:
        yield running


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    executable = _chromium()
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(
            executable_path=executable,
            headless=True,
            args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"],
        )
        try:
            yield launched
        finally:
            await launched.close()


@pytest.fixture
async def page(browser: Browser, request: pytest.FixtureRequest) -> AsyncIterator[Page]:
    """A fresh tab (its own session storage); a screenshot of where it ended is saved."""
    context = await browser.new_context(viewport={"width": 1400, "height": 900})
    context.set_default_timeout(20_000)
    tab = await context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    try:
        yield tab
    finally:
        await asyncio.to_thread(ARTIFACTS.mkdir, parents=True, exist_ok=True)
        name = re.sub(r"[^\w.-]+", "_", request.node.name)
        await tab.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        await context.close()
    assert not errors, f"the page threw: {errors}"


DRAWERS = [
    ("decision", "The Architect decided that the API returns 404 for missing drawers."),
    ("observation", "Kyle noticed the API returned 500 for a missing drawer last week."),
    ("bug", "The search endpoint crashes with a KeyError when the query string is empty."),
]


async def store_with_drawers(served: Served) -> tuple[str, list[str]]:
    """A new store holding `DRAWERS` (written through REST): its name and the drawer ids."""
    name = f"e2e-{uuid.uuid4().hex[:8]}"
    await served.api.create_store(name)
    ids = []
    for memory_type, content in DRAWERS:
        draft = {"content": content, "memory_type": memory_type, "wing": "projects",
                 "room": "projects/engram"}  # fmt: skip
        answer = await served.api.client.post(
            f"/v1/stores/{name}/drawers",
            json={"drawer": draft, "allow_new_wing": True},
            headers=served.api.admin,
        )
        assert answer.status_code in (200, 201), answer.text
        ids.append(answer.json()["drawer"]["id"])
    return name, ids


async def sign_in(page: Page, base: str, token: str) -> None:
    """Open the dashboard and sign in with `token`, as an operator does."""
    await page.goto(f"{base}/dashboard/")
    await page.get_by_label("bearer token").fill(token)
    await page.get_by_role("button", name="sign in").click()
    await page.get_by_role("navigation", name="pages").wait_for()


async def serious_violations(page: Page) -> list[str]:
    """axe-core's serious and critical accessibility violations on the page as it is now."""
    await page.add_script_tag(path=str(AXE))
    result: dict[str, Any] = await page.evaluate(
        "async () => await axe.run(document, { resultTypes: ['violations'] })"
    )
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — {[n['target'] for n in v['nodes']][:3]}"
        for v in result["violations"]
        if v.get("impact") in SERIOUS
    ]
