"""Authentication and authorization: tokens over REST, and the whole matrix of route × tier ×
in-scope/out-of-scope store, with 401/403 exactly where due.

The route list comes from the app itself, and every route must name a gateway operation with
a required tier (`REQUIRED_TIER`), so a new route cannot escape the matrix."""

from __future__ import annotations

import re
from typing import Any

import pytest
from fastapi.routing import APIRoute, iter_route_contexts

from gateway.core.operations import REQUIRED_TIER
from gateway.core.principal import Tier
from tests.gateway.conftest import TIERS, Api

PUBLIC = {
    "/healthz",
    "/readyz",
    "/metrics",
    "/openapi.json",
    "/docs",
    "/docs/oauth2-redirect",
    "/redoc",
    # The dashboard's static bundle: no data; every call it makes carries the operator's token.
    "/dashboard",
    "/dashboard/{path:path}",
}
# Endpoints that are no REST routes and authenticate every request themselves (their own 401
# tests live beside them): MCP's streamable HTTP transport.
SELF_AUTHENTICATING = {"/mcp"}
IN_STORE, OUT_STORE = "gw-matrix-in", "gw-matrix-out"
# Routes scoped by something other than a {store} in the path: the body's store (create_store,
# create_token: the matrix names the in-scope store there) or the job's store.
SCOPED_WITHOUT_STORE_PATH = {"create_store", "create_token", "get_job", "cancel_job", "watch_job"}
UPLOAD = b"# Matrix\n\nA tiny file for the auth matrix.\n"


def _api_routes(api: Api) -> list[tuple[str, str, str]]:
    """(method, path template, name) of every route but the public ones."""
    found = []
    for route in iter_route_contexts(api.app.routes):
        if route.path in PUBLIC or route.path in SELF_AUTHENTICATING:
            continue
        assert isinstance(route.original_route, APIRoute), f"{route.path}: add it to PUBLIC?"
        assert route.path and route.name and route.methods
        for method in sorted(route.methods):
            found.append((method, route.path, route.name))
    # Last: an empty write policy (the matrix sends `{}`) leaves no tier allowed to write.
    found.sort(key=lambda route: route[2] == "set_write_policy")
    return found


@pytest.fixture(scope="module")
async def job_id(api: Api) -> str:
    """A finished ingest job of the in-scope store (the job routes need one)."""
    for name in (IN_STORE, OUT_STORE):
        if (await api.client.get(f"/v1/stores/{name}", headers=api.admin)).status_code == 404:
            await api.create_store(name)
    uploaded = await api.client.post(
        f"/v1/stores/{IN_STORE}/files", files={"file": ("m.md", UPLOAD)}, headers=api.admin
    )
    job = await api.client.post(
        f"/v1/stores/{IN_STORE}/ingest",
        json={"file_ids": [uploaded.json()["id"]]},
        headers=api.admin,
    )
    job_id: str = job.json()["id"]
    await api.wait_job(job_id)
    return job_id


async def _call(api: Api, method: str, path: str, name: str, headers: dict[str, str]) -> int:
    kwargs: dict[str, Any] = {"headers": headers}
    if name == "upload_file":
        kwargs["files"] = {"file": ("matrix.md", UPLOAD)}
    elif name == "create_store":
        kwargs["json"] = {"spec": {"name": IN_STORE}}
    elif name == "create_token":
        kwargs["json"] = {"tier": "CALLER_TIER_READ", "stores": [IN_STORE]}
    elif method in ("POST", "PUT", "PATCH") and name != "import_drawers":
        kwargs["json"] = {}
    answer = await api.client.request(method, path, **kwargs)
    return answer.status_code


async def test_every_route_has_a_required_tier(api: Api) -> None:
    names = {name for _, _, name in _api_routes(api)}
    assert names - set(REQUIRED_TIER) == set(), "routes without a tier in REQUIRED_TIER"
    assert set(REQUIRED_TIER) - names == set(), "operations without a REST route"


async def test_missing_or_bad_token_is_401_everywhere(api: Api, job_id: str) -> None:
    for method, template, name in _api_routes(api):
        path = _fill(template, IN_STORE, job_id)
        for headers in ({}, api.auth("egm_not-a-real-token"), {"Authorization": "Basic eDp5"}):
            status = await _call(api, method, path, name, headers)
            assert status == 401, f"{method} {path} with {headers or 'no token'}: {status}"


def _fill(template: str, store: str, job_id: str) -> str:
    path = template.replace("{store}", store)
    if template.startswith("/v1/jobs/"):
        path = path.replace("{id}", job_id)
    return re.sub(r"\{[a-z_]+\}", "x", path)


async def test_auth_matrix(api: Api, job_id: str) -> None:
    failures = []
    for tier in TIERS:
        for scope in ("in", "out"):
            token_store = IN_STORE if scope == "in" else OUT_STORE
            headers = await api.as_tier(tier, token_store)
            for method, template, name in _api_routes(api):
                path = _fill(template, IN_STORE, job_id)
                status = await _call(api, method, path, name, headers)
                by_tier = Tier[tier.upper()] < REQUIRED_TIER[name]
                store_scoped = "{store}" in template or name in SCOPED_WITHOUT_STORE_PATH
                due = by_tier or (scope == "out" and store_scoped)
                if status == 401 or (status == 403) != due:
                    failures.append(
                        f"{tier}/{scope}-scope {method} {path}: {status}, "
                        f"expected {'403' if due else 'not 401/403'}"
                    )
    assert not failures, "\n".join(failures)


async def test_token_create_list_revoke(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    created = await api.client.post(
        "/v1/tokens",
        json={"tier": "CALLER_TIER_WRITE", "stores": [store_name], "label": "ci"},
        headers=api.admin,
    )
    assert created.status_code == 201, created.text
    token, info = created.json()["token"], created.json()["info"]
    assert token.startswith("egm_")
    assert info["tier"] == "CALLER_TIER_WRITE" and info["stores"] == [store_name]

    listed = await api.client.get("/v1/tokens", headers=api.admin)
    entry = next(t for t in listed.json()["tokens"] if t["id"] == info["id"])
    assert token not in listed.text  # only ever the hash is kept
    assert "last_used_at" not in entry

    used = await api.client.get(f"/v1/stores/{store_name}", headers=api.auth(token))
    assert used.status_code == 200
    listed = await api.client.get("/v1/tokens", headers=api.admin)
    entry = next(t for t in listed.json()["tokens"] if t["id"] == info["id"])
    assert entry["last_used_at"]

    revoked = await api.client.delete(f"/v1/tokens/{info['id']}", headers=api.admin)
    assert revoked.status_code == 200 and revoked.json() == {"revoked": True}
    refused = await api.client.get(f"/v1/stores/{store_name}", headers=api.auth(token))
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"].startswith("Bearer")
    again = await api.client.delete(f"/v1/tokens/{info['id']}", headers=api.admin)
    assert again.status_code == 404


async def test_a_scoped_admin_cannot_grant_beyond_its_scope(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    scoped_admin = await api.as_tier("admin", store_name)
    everything = await api.client.post(
        "/v1/tokens", json={"tier": "CALLER_TIER_READ"}, headers=scoped_admin
    )
    assert everything.status_code == 403, everything.text
    own = await api.client.post(
        "/v1/tokens",
        json={"tier": "CALLER_TIER_READ", "stores": [store_name]},
        headers=scoped_admin,
    )
    assert own.status_code == 201, own.text
    listed = await api.client.get("/v1/tokens", headers=scoped_admin)
    assert all(t["stores"] == [store_name] for t in listed.json()["tokens"])
    stores = await api.client.get("/v1/stores", headers=scoped_admin)
    assert [s["spec"]["name"] for s in stores.json()["stores"]] == [store_name]


async def test_error_bodies_and_statuses(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    cases: list[tuple[str, str, dict[str, Any], int, str]] = [
        (
            "POST",
            f"/v1/stores/{store_name}/search",
            {"json": {"query": "x", "bogus": 1}},
            400,
            "bogus",
        ),
        (
            "POST",
            f"/v1/stores/{store_name}/search",
            {"json": {"query": "x", "nResults": 3}},
            400,
            "nResults",
        ),
        (
            "POST",
            f"/v1/stores/{store_name}/search",
            {"json": {"query": "x", "store": {"name": "y"}}},
            400,
            "store",
        ),
        (
            "POST",
            f"/v1/stores/{store_name}/search",
            {"json": {"query": "x", "n_results": "many"}},
            400,
            "n_results",
        ),
        ("POST", f"/v1/stores/{store_name}/search", {"json": {"query": 7}}, 400, "query"),
        ("POST", f"/v1/stores/{store_name}/search", {"content": b"{not json"}, 400, "JSON"),
        ("POST", f"/v1/stores/{store_name}/search", {"json": ["a list"]}, 400, "object"),
        ("POST", f"/v1/stores/{store_name}/search", {"json": {"query": ""}}, 422, ""),
        (
            "GET",
            f"/v1/stores/{store_name}/drawers",
            {"params": {"page_size": "ten"}},
            400,
            "page_size",
        ),
        ("GET", f"/v1/stores/{store_name}/drawers", {"params": {"colour": "red"}}, 400, "colour"),
        ("POST", "/v1/stores/Bad..Name!/search", {"json": {"query": "x"}}, 422, "not valid"),
        ("POST", "/v1/stores/gw-no-such-store/search", {"json": {"query": "x"}}, 404, "no store"),
        ("GET", "/v1/jobs/no-such-job", {}, 404, "no job"),
        ("GET", "/v1/no/such/route", {}, 404, "no route"),
    ]
    for method, path, kwargs, status, needle in cases:
        answer = await api.client.request(method, path, headers=api.admin, **kwargs)
        assert answer.status_code == status, (method, path, kwargs, answer.text)
        error = answer.json()["error"]
        assert set(error) == {"code", "message", "details"}, answer.text
        assert needle in error["message"], (needle, error)
    missing = await api.client.post(f"/v1/stores/{store_name}/search", json={"query": "x"})
    assert missing.status_code == 401
    assert missing.json()["error"]["code"] == "unauthenticated"


async def test_health_readiness_and_metrics(api: Api) -> None:
    assert (await api.client.get("/healthz")).json() == {"status": "ok"}
    ready = await api.client.get("/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json()["tiers"] == {
        "retrieval": "SERVING",
        "corpus": "SERVING",
        "authoring": "SERVING",
    }
    metrics = await api.client.get("/metrics")
    assert metrics.status_code == 200
    assert (
        'engram_http_requests_total{method="GET",operation="healthz",status="200"}' in metrics.text
    )
