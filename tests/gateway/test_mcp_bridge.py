"""`engram-mcp`, the stdio bridge, as a real subprocess talking to a real gateway served by
uvicorn on 127.0.0.1 (over the real tiers); and `/mcp` itself refusing calls without a valid
bearer token. The bridge's failures are one clear line on stderr and a non-zero exit."""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters

from gateway.mcp.server import build_server
from gateway.mcp.tools import parse_toolsets
from tests.gateway.conftest import Served, Tiers, gateway_settings, served_gateway
from tests.gateway.test_mcp import (
    DECISION,
    SIGNATURE,
    TOOLS,
    _draft,
    _error,
    _rendered,
)

REPO = Path(__file__).resolve().parents[2]
BRIDGE = [sys.executable, "-m", "engram.mcp_bridge"]
EXIT_TIMEOUT_S = 60


@pytest.fixture(scope="module")
async def served(tiers: Tiers, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    """A gateway (create_app mounts /mcp), served by uvicorn on a free port of 127.0.0.1."""
    settings = gateway_settings(tiers, tmp_path_factory.mktemp("gateway-mcp"))
    async with served_gateway(settings) as running:
        yield running


def _bridge_env(url: str, token: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("ENGRAM_URL", "ENGRAM_TOKEN")}
    env["ENGRAM_URL"] = url
    if token is not None:
        env["ENGRAM_TOKEN"] = token
    return env


async def _run_bridge(env: dict[str, str]) -> tuple[int, str]:
    """Run the bridge to its exit (stdin closed at once); its status and stderr."""
    process = await asyncio.create_subprocess_exec(
        *BRIDGE,
        cwd=REPO,
        env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    _, stderr = await asyncio.wait_for(process.communicate(b""), EXIT_TIMEOUT_S)
    assert process.returncode is not None
    return process.returncode, stderr.decode()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_bridge_lists_tools_and_searches(served: Served, store_name: str) -> None:
    api = served.api
    await api.create_store(store_name)
    written = await api.client.post(
        f"/v1/stores/{store_name}/drawers/signed",
        json={"drawer": _draft(), "signature": SIGNATURE, "allow_new_wing": True},
        headers=await api.as_tier("write", store_name),
    )
    assert written.status_code in (200, 201), written.text
    drawer_id = written.json()["drawer"]["id"]

    read_token = await api.token("read", store_name)
    reader = api.app.state.gateway.authenticate(read_token)
    memory = parse_toolsets("memory")  # the gateway's default toolsets
    async with Client(
        build_server(lambda: api.app.state.gateway, principal=reader, toolsets=memory)
    ) as local:
        in_process = {tool.name: tool for tool in (await local.list_tools()).tools}
    async with Client(build_server(lambda: api.app.state.gateway, principal=reader)) as local:
        every_tool = {tool.name for tool in (await local.list_tools()).tools}

    params = StdioServerParameters(
        command=BRIDGE[0],
        args=BRIDGE[1:],
        env=_bridge_env(served.url, read_token),
        cwd=str(REPO),
    )
    async with Client(params, read_timeout_seconds=60) as bridge:
        assert bridge.instructions and "third person" in bridge.instructions
        tools = (await bridge.list_tools()).tools
        # The tools this read token may use, exactly as the gateway offers them to it.
        assert {tool.name for tool in tools} == set(in_process) < TOOLS
        for tool in tools:  # relayed as the gateway serves them, not re-declared
            assert tool.input_schema == in_process[tool.name].input_schema, tool.name
            assert tool.description == in_process[tool.name].description, tool.name

        text, found = _rendered(
            await bridge.call_tool(
                "engram_search",
                {"store": store_name, "query": "does the gateway hold business logic?"},
            )
        )
        assert drawer_id in text and DECISION in text, "the agent's text crosses the bridge"
        assert [hit["drawer"]["id"] for hit in found["results"]] == [drawer_id]
        assert found["results"][0]["drawer"]["content"] == DECISION

        refused = _error(
            await bridge.call_tool(
                "engram_add_raw_memory", {"store": store_name, "content": "a raw note"}
            )
        )
        assert refused.startswith("permission_denied:"), "an unlisted tool is still checked"
        invalid = await bridge.call_tool("engram_search", {"store": store_name, "q": "x"})
        assert isinstance(invalid, types.CallToolResult) and invalid.is_error

    # ENGRAM_MCP_TOOLS asks for more: every tool the read token may use.
    wide = StdioServerParameters(
        command=BRIDGE[0],
        args=BRIDGE[1:],
        env={**_bridge_env(served.url, read_token), "ENGRAM_MCP_TOOLS": "all"},
        cwd=str(REPO),
    )
    async with Client(wide, read_timeout_seconds=60) as bridge:
        listed = {tool.name for tool in (await bridge.list_tools()).tools}
    assert listed == every_tool and in_process.keys() < listed
    assert "engram_get_drawer" in listed and "engram_add_drawer" not in listed, "read token"


async def test_mcp_endpoint_needs_a_bearer_token(served: Served) -> None:
    api = served.api
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
    }
    anonymous = await api.client.post("/mcp", json=ping, headers=headers)
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["code"] == "unauthenticated"
    assert anonymous.headers["www-authenticate"].startswith("Bearer")
    forged = await api.client.post(
        "/mcp", json=ping, headers={**headers, **api.auth("egm_not-a-token")}
    )
    assert forged.status_code == 401
    valid = await api.client.post(
        "/mcp", json=ping, headers={**headers, **await api.as_tier("read")}
    )
    assert valid.status_code == 200, valid.text
    assert valid.json()["id"] == 1
    openapi = (await api.client.get("/openapi.json")).json()
    assert "/mcp" not in openapi["paths"]


async def test_bridge_without_a_gateway_exits_with_a_message() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    status, stderr = await _run_bridge(_bridge_env(url, "egm_whatever"))
    assert status == 1
    assert stderr.startswith("engram-mcp: no Engram gateway answers at " + url)
    assert "Traceback" not in stderr


async def test_bridge_with_a_refused_token_exits_with_a_message(served: Served) -> None:
    status, stderr = await _run_bridge(_bridge_env(served.url, "egm_revoked-or-never-issued"))
    assert status == 1
    assert "refused ENGRAM_TOKEN" in stderr
    assert "egm_revoked-or-never-issued" not in stderr  # the token is never echoed
    assert "Traceback" not in stderr


async def test_bridge_without_a_token_exits_with_a_message() -> None:
    status, stderr = await _run_bridge(_bridge_env("http://127.0.0.1:9", None))
    assert status == 2
    assert "ENGRAM_TOKEN is not set" in stderr
    assert "Traceback" not in stderr


async def test_a_connection_chooses_its_toolsets(served: Served) -> None:
    api = served.api
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
        **await api.as_tier("admin"),
    }
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}

    async def names(query: str) -> set[str]:
        answer = await api.client.post(f"/mcp{query}", json=listing, headers=headers)
        assert answer.status_code == 200, answer.text
        return {tool["name"] for tool in answer.json()["result"]["tools"]}

    default = await names("")
    assert "engram_search" in default and "engram_link_drawers" not in default
    lifecycle = await names("?tools=lifecycle")
    assert "engram_link_drawers" in lifecycle and "engram_search" not in lifecycle
    assert await names("?tools=memory,lifecycle") == default | lifecycle
    assert len(await names("?tools=all")) == len(TOOLS)
    bogus = await api.client.post("/mcp?tools=everything", json=listing, headers=headers)
    assert bogus.status_code in (400, 422)
    message = bogus.json()["error"]["message"]
    assert "unknown toolset 'everything'" in message and "memory, browse" in message
