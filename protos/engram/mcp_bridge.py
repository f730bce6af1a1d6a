"""`engram-mcp` (`python -m engram.mcp_bridge`): the stdio MCP bridge an agent spawns as a
child process, beside the agent rather than in the gateway (it is a client of `/mcp`, as
`engram.client` is of REST and gRPC, and imports nothing of the gateway's).

It holds no model, no store handle and no state of its own: it serves MCP on stdin/stdout and
relays the tool listing and every tool call to the gateway's `/mcp` endpoint (streamable HTTP,
`Authorization: Bearer $ENGRAM_TOKEN`) at `$ENGRAM_URL` (default http://127.0.0.1:8080), listing
the toolsets `$ENGRAM_MCP_TOOLS` names (default: the gateway's, the memory tools). Tool
descriptions, schemas and answers are the gateway's own, so the bridge cannot drift from it.

Failures are messages, never tracebacks: without a token, without a gateway at the URL, or
with a token the gateway refuses, the bridge says so on stderr and exits non-zero before it
serves anything; a gateway that goes away later turns each call into a tool error that says so.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlencode

import anyio
import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

ENV_URL: Final = "ENGRAM_URL"
ENV_TOKEN: Final = "ENGRAM_TOKEN"
ENV_TOOLS: Final = "ENGRAM_MCP_TOOLS"  # memory, browse, lifecycle, ingest (comma-separated), all
DEFAULT_URL: Final = "http://127.0.0.1:8080"
MCP_PATH: Final = "/mcp"

# Exit statuses: 2 for a missing setting (the agent's configuration), 1 for the gateway.
EXIT_CONFIG: Final = 2
EXIT_GATEWAY: Final = 1

CONNECT_TIMEOUT_S: Final = 5.0
# Searches embed a query and compose jobs are enqueued, never awaited: a minute is generous.
CALL_TIMEOUT_S: Final = 120.0


class BridgeError(Exception):
    """Why the bridge cannot serve, worded for the person configuring the agent."""

    def __init__(self, message: str, status: int = EXIT_GATEWAY) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True)
class BridgeConfig:
    url: str  # the gateway's base URL
    token: str
    tools: str = ""  # the toolsets to list (ENGRAM_MCP_TOOLS); "" = the gateway's default

    @property
    def endpoint(self) -> str:
        base = self.url.rstrip("/")
        endpoint = base if base.endswith(MCP_PATH) else base + MCP_PATH
        return f"{endpoint}?{urlencode({'tools': self.tools})}" if self.tools else endpoint

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> BridgeConfig:
        token = env.get(ENV_TOKEN, "").strip()
        if not token:
            raise BridgeError(
                f"{ENV_TOKEN} is not set: give the bridge a gateway token "
                f"(`engram token create --tier read` or `--tier write`) in its environment",
                EXIT_CONFIG,
            )
        url = env.get(ENV_URL, "").strip() or DEFAULT_URL
        if not url.startswith(("http://", "https://")):
            raise BridgeError(
                f"{ENV_URL}={url!r} is not an http(s) URL (e.g. {DEFAULT_URL})", EXIT_CONFIG
            )
        return cls(url=url, token=token, tools=env.get(ENV_TOOLS, "").strip())


def _headers(config: BridgeConfig) -> dict[str, str]:
    return {"Authorization": f"Bearer {config.token}"}


def _error_message(response: httpx2.Response) -> str:
    try:
        body = response.json()
        return str(body["error"]["message"])
    except Exception:
        return response.text[:200] or response.reason_phrase


async def preflight(config: BridgeConfig) -> None:
    """Check that a gateway answers at the URL and accepts the token, with a clear reason."""
    ping = {"jsonrpc": "2.0", "id": 0, "method": "ping"}
    headers = {
        **_headers(config),
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": "2025-11-25",
    }
    try:
        async with httpx2.AsyncClient(timeout=CONNECT_TIMEOUT_S) as http:
            response = await http.post(config.endpoint, json=ping, headers=headers)
    except httpx2.TransportError as error:
        raise BridgeError(
            f"no Engram gateway answers at {config.url} ({type(error).__name__}: {error}); "
            f"start it (`make run` or `engram up`) or point {ENV_URL} at it"
        ) from None
    if response.status_code == 401:
        raise BridgeError(
            f"the gateway at {config.url} refused {ENV_TOKEN}: {_error_message(response)}"
        )
    if response.status_code == 403:
        raise BridgeError(
            f"the gateway at {config.url} does not let this token use MCP: "
            f"{_error_message(response)}"
        )
    if response.status_code == 404:
        raise BridgeError(f"{config.endpoint} does not exist: is {config.url} an Engram gateway?")
    if response.status_code >= 400:
        raise BridgeError(
            f"the gateway at {config.url} answered {response.status_code} on {MCP_PATH}: "
            f"{_error_message(response)}"
        )


def _first(error: BaseException) -> BaseException:
    """The first leaf of an exception group (task groups wrap what their tasks raise)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return error


def _describe(error: BaseException) -> str:
    """One line for an upstream failure."""
    error = _first(error)
    if isinstance(error, MCPError):
        return error.error.message
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


class Upstream:
    """The gateway's /mcp endpoint, one short MCP connection per relayed request.

    A fresh connection per request keeps the bridge stateless: a gateway restarted between
    two calls is simply there again for the next one.
    """

    def __init__(self, config: BridgeConfig) -> None:
        self.config = config

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[Client]:
        async with (
            httpx2.AsyncClient(
                headers=_headers(self.config),
                timeout=httpx2.Timeout(CALL_TIMEOUT_S, connect=CONNECT_TIMEOUT_S),
            ) as http,
            Client(
                streamable_http_client(self.config.endpoint, http_client=http),
                cache=None,
                read_timeout_seconds=CALL_TIMEOUT_S,
            ) as client,
        ):
            yield client

    async def instructions(self) -> str | None:
        async with self._client() as client:
            return client.instructions

    async def list_tools(self) -> types.ListToolsResult:
        try:
            async with self._client() as client:
                return await client.list_tools()
        except Exception as error:
            raise MCPError(
                code=types.INTERNAL_ERROR,
                message=f"the Engram gateway at {self.config.url} did not list its tools: "
                f"{_describe(error)}",
            ) from None

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any] | None
    ) -> types.CallToolResult:
        try:
            async with self._client() as client:
                return await client.call_tool(name, dict(arguments or {}))
        except Exception as error:
            return types.CallToolResult(
                content=[
                    types.TextContent(
                        type="text",
                        text=f"unavailable: the Engram gateway at {self.config.url} did not "
                        f"answer {name}: {_describe(error)}",
                    )
                ],
                is_error=True,
            )


def build_bridge(upstream: Upstream, instructions: str | None) -> Server[Any]:
    """The stdio-side MCP server: every request relayed to the gateway."""

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return await upstream.list_tools()

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await upstream.call_tool(params.name, params.arguments)

    return Server(
        "engram",
        title="Engram memory (stdio bridge)",
        instructions=instructions,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve(config: BridgeConfig) -> None:
    await preflight(config)
    upstream = Upstream(config)
    try:
        instructions = await upstream.instructions()
    except Exception as error:
        raise BridgeError(
            f"the gateway at {config.url} did not complete an MCP handshake: {_describe(error)}"
        ) from None
    server = build_bridge(upstream, instructions)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main(argv: list[str] | None = None) -> int:
    """Console entry point (`engram-mcp`); configuration comes from the environment."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("-h", "--help"):
        print(__doc__.strip() if __doc__ else "engram-mcp")
        print(
            f"\nenvironment: {ENV_URL} (default {DEFAULT_URL}), {ENV_TOKEN} (required), "
            f"{ENV_TOOLS} (memory, browse, lifecycle, ingest or all; default memory)"
        )
        return 0
    try:
        config = BridgeConfig.from_env(os.environ)
        anyio.run(serve, config)
    except KeyboardInterrupt:
        return 130
    except BaseException as error:  # never a traceback: one line an operator can act on
        reason = _first(error)
        if isinstance(reason, BridgeError):
            print(f"engram-mcp: {reason.message}", file=sys.stderr)
            return reason.status
        if isinstance(reason, KeyboardInterrupt):
            return 130
        if isinstance(reason, SystemExit):
            raise
        print(f"engram-mcp: stopped: {_describe(reason)}", file=sys.stderr)
        return EXIT_GATEWAY
    return 0


if __name__ == "__main__":
    sys.exit(main())
