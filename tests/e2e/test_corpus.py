"""The corpus page: upload two files, ingest them and watch the job reach done in the jobs
panel, then compose them and see both files authored."""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest
from playwright.async_api import Page, expect

from tests.e2e.conftest import ADMIN_TOKEN, serious_violations, sign_in
from tests.gateway.conftest import Served

pytestmark = pytest.mark.slow

SESSIONS = {
    "sync.jsonl": [
        ("The_Architect", "OK, so we decided that the API returns 404 for missing drawers."),
        ("The_Engineer", "The search endpoint crashes with a KeyError when the query is empty."),
    ],
    "billing.jsonl": [
        ("The_Architect", "We decided that invoices are issued on the first of the month."),
        ("The_Engineer", "The invoice exporter crashes when a customer has no address."),
    ],
}
DONE_S = 120_000  # ms: ingest and compose run the real model on CPU


def _transcripts(root: Path) -> list[Path]:
    paths = []
    for name, turns in SESSIONS.items():
        path = root / name
        path.write_text(
            "\n".join(
                json.dumps({"speaker": s, "text": t, "timestamp": f"2025-03-03T09:3{i}:00Z"})
                for i, (s, t) in enumerate(turns)
            ),
            encoding="utf-8",
        )
        paths.append(path)
    return paths


async def test_upload_ingest_watch_the_job_and_compose(
    page: Page, served: Served, tmp_path: Path
) -> None:
    store = f"e2e-{uuid.uuid4().hex[:8]}"
    await served.api.create_store(store)
    await sign_in(page, served.url, ADMIN_TOKEN)
    await page.goto(f"{served.url}/dashboard/s/{store}/corpus")

    await page.get_by_label("choose files to upload").set_input_files(_transcripts(tmp_path))
    files = page.get_by_role("table", name="files")
    for name in SESSIONS:
        await expect(files).to_contain_text(name)
    await page.get_by_label("select all files on this page").check()
    await page.get_by_role("button", name="ingest 2 files").click()

    jobs = page.get_by_role("region", name="jobs")
    ingest = jobs.get_by_role("listitem", name=re.compile(r"job ingest_files"))
    await expect(ingest.locator(".job-state")).to_have_text("done", timeout=DONE_S)
    await expect(files.get_by_text("ingested")).to_have_count(2)

    await page.get_by_label("select all files on this page").check()
    await page.get_by_label("allow new wing").check()
    await page.get_by_role("button", name="compose", exact=True).click()
    compose = jobs.get_by_role("listitem", name=re.compile(r"job compose_drawers"))
    await expect(compose.locator(".job-state")).to_have_text("done", timeout=DONE_S)
    await expect(files.get_by_text("authored")).to_have_count(2)
    assert await serious_violations(page) == []
