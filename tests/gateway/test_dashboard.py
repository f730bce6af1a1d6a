"""The dashboard's contract with the gateway: its API types are generated from the OpenAPI
document the gateway serves (stale types fail here, so the dashboard and the API cannot
drift); the gateway serves the built bundle at /dashboard/ with the page for any client
route; and the two operations a client needs to set itself up answer: who is calling, and
how the system is."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from gateway.app import create_app
from gateway.openapi_snapshot import SNAPSHOT, current_document, render
from gateway.settings import GatewaySettings
from tests.gateway.conftest import Api

DASHBOARD = SNAPSHOT.parent
SCHEMA = DASHBOARD / "src" / "api" / "schema.d.ts"
REGENERATE = "run `make dashboard-types` and commit gateway/dashboard/openapi.json and schema.d.ts"


def test_the_committed_openapi_snapshot_is_the_one_the_gateway_serves() -> None:
    assert SNAPSHOT.read_text(encoding="utf-8") == render(current_document()), (
        f"gateway/dashboard/openapi.json is stale: {REGENERATE}"
    )


def test_the_dashboards_api_types_are_generated_from_the_snapshot(tmp_path: Path) -> None:
    tool = DASHBOARD / "node_modules" / ".bin" / "openapi-typescript"
    if not tool.exists() or shutil.which("node") is None:
        pytest.fail("the dashboard's node modules are missing: `make dashboard` installs them")
    fresh = tmp_path / "schema.d.ts"
    subprocess.run(
        [str(tool), str(SNAPSHOT), "-o", str(fresh)],
        check=True,
        capture_output=True,
        cwd=DASHBOARD,
        timeout=120,
    )
    assert SCHEMA.read_text(encoding="utf-8") == fresh.read_text(encoding="utf-8"), (
        f"src/api/schema.d.ts is not what openapi-typescript makes of openapi.json: {REGENERATE}"
    )


def _bundle(root: Path) -> Path:
    (root / "assets").mkdir(parents=True)
    (root / "index.html").write_text("<!doctype html><div id=root></div>", encoding="utf-8")
    (root / "assets" / "index-abc123.js").write_text("console.log(1)", encoding="utf-8")
    return root


async def _client(dashboard_dir: Path) -> httpx.AsyncClient:
    app = create_app(GatewaySettings(dashboard_dir=dashboard_dir))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gw")


async def test_the_bundle_is_served_with_the_page_for_every_client_route(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path / "dist")
    (tmp_path / "secret.txt").write_text("not for the browser", encoding="utf-8")
    async with await _client(bundle) as client:
        moved = await client.get("/dashboard")
        assert moved.status_code == 308 and moved.headers["location"] == "/dashboard/"
        for path in ("/dashboard/", "/dashboard/s/alpha/search", "/dashboard/tokens"):
            page = await client.get(path)
            assert page.status_code == 200 and "id=root" in page.text, path
            assert page.headers["cache-control"] == "no-cache", path
        asset = await client.get("/dashboard/assets/index-abc123.js")
        assert asset.text == "console.log(1)"
        assert "immutable" in asset.headers["cache-control"]
        missing = await client.get("/dashboard/assets/gone.js")
        assert missing.status_code == 404 and "gone.js" in missing.json()["error"]["message"]
        for escape in ("/dashboard/../secret.txt", "/dashboard/%2e%2e/secret.txt"):
            answer = await client.get(escape)
            assert "not for the browser" not in answer.text, escape


async def test_an_unbuilt_dashboard_says_how_to_build_it(tmp_path: Path) -> None:
    async with await _client(tmp_path / "nothing") as client:
        answer = await client.get("/dashboard/")
    assert answer.status_code == 503
    assert "make dashboard" in answer.json()["error"]["message"]


async def test_who_am_i_answers_each_token_its_own_tier_and_scope(
    api: Api, store_name: str
) -> None:
    await api.create_store(store_name)
    admin = await api.client.get("/v1/whoami", headers=api.admin)
    assert admin.status_code == 200, admin.text
    assert admin.json()["tier"] == "CALLER_TIER_ADMIN"
    scoped = await api.client.get("/v1/whoami", headers=await api.as_tier("read", store_name))
    assert scoped.status_code == 200, scoped.text
    assert scoped.json()["tier"] == "CALLER_TIER_READ"
    assert scoped.json()["stores"] == [store_name]
    assert "token" not in scoped.json(), "the token itself is never answered"
    refused = await api.client.get("/v1/whoami")
    assert refused.status_code == 401


async def test_the_system_status_names_each_tier_and_the_embedder(api: Api) -> None:
    answer = await api.client.get("/v1/system", headers=await api.as_tier("read"))
    assert answer.status_code == 200, answer.text
    status = answer.json()
    assert status["tiers"] == {
        "retrieval": "SERVING",
        "corpus": "SERVING",
        "authoring": "SERVING",
    }
    embedder = status["embedder"]
    assert embedder["device"] == "cpu" and embedder["dimension"] == 384
    assert "minilm" in embedder["model"].lower()
    assert int(embedder.get("vram_total_bytes", 0)) == 0, "no VRAM figures on the CPU"
