"""The MCP face of the gateway: the tool table served over the gateway core.

`build_server` makes a low-level MCP server whose tools call the `Gateway` core — one async
method per operation taking the caller's `Principal` and the request proto — so every tool
checks tier and store scope exactly as the REST route of the same operation does.
`McpEndpoint` serves it at `/mcp` over streamable HTTP behind bearer-token auth (the REST
face's TokenStore: `Authorization: Bearer <token>`, 401 without a valid one), and
`install_mcp(app, gateway_of)` mounts it on the gateway app and runs it in the app's lifespan.

Decisions:

- Stateless streamable HTTP with JSON answers: every POST carries its own bearer token and is
  served on its own, so the principal of a call is the token of that very request, a gateway
  restart loses no MCP session, and replicas need no shared session state. Nothing a tool
  does needs a server-to-client stream.
- Arguments are checked against the tool's input schema here (the SDK does not enforce it),
  so `additionalProperties: false` and the signature `minLength` are real limits: a call
  that breaks them is a tool error and reaches no tier.
- Domain errors (`EngramError`) are tool errors (`isError`) carrying the human message, so
  the agent reads what to fix; protocol errors are left for what MCP itself gets wrong.
- The gateway core is looked up when a call runs (`gateway_of`), because the app builds it
  in its lifespan, after the routes are mounted.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, Final
from urllib.parse import parse_qsl

import jsonschema  # type: ignore[import-untyped]  # no stubs in the venv
import mcp_types as types
from engram.v1 import corpus_pb2
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.exceptions import MCPError
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from gateway.core.operations import OPERATIONS, REQUIRED_TIER
from gateway.core.principal import Principal
from gateway.core.service import Gateway
from gateway.core.tokens import bearer_credentials
from gateway.errors import error_response, error_text
from gateway.mcp import framing, recollection
from gateway.mcp.rendering import RENDERERS
from gateway.mcp.tools import (
    MAX_MCP_BODY_BYTES,
    Json,
    ToolSpec,
    build_request,
    build_tools,
    input_schema,
    parse_toolsets,
    upload_content,
)
from gateway.protojson import to_json
from services.runtime.errors import EngramError, Unauthenticated

logger = logging.getLogger(__name__)

# How often the tool schemas look at the authoring tier's signature rule, and how soon they
# look again when the tier could not answer.
RULES_REFRESH_S: Final = 60.0
RULES_RETRY_S: Final = 5.0

SERVER_NAME: Final = "engram"
MCP_PATH: Final = "/mcp"

# Where the auth wrapper leaves the caller's principal in the ASGI scope for the tool handler.
PRINCIPAL_SCOPE_KEY: Final = "engram.principal"
# The toolsets a connection asked for with `/mcp?tools=` (parse_toolsets), kept in its scope.
TOOLSETS_SCOPE_KEY: Final = "engram.toolsets"
TOOLS_PARAM: Final = "tools"

# The gateway core, or a function returning it (the app builds it in its lifespan).
GatewaySource = Gateway | Callable[[], Gateway]


def _text(payload: object) -> types.TextContent:
    return types.TextContent(type="text", text=json.dumps(payload, ensure_ascii=False))


def tool_error(message: str) -> types.CallToolResult:
    """A tool error the agent reads: what went wrong and what to do."""
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)], is_error=True
    )


class EngramTools:
    """The tool table bound to one gateway core: listing, validation and calls.

    The signature rule in the schemas (`minLength`, and the descriptions that state it) is
    the authoring tier's setting in force: `follow_rules` asks the tier, at most every
    `RULES_REFRESH_S`, and rebuilds the table when it changed. A table built with an explicit
    `min_signature_chars` keeps it (tests, an embedding application that knows its tier).
    """

    def __init__(
        self,
        gateway: GatewaySource,
        *,
        tools: Sequence[ToolSpec] | None = None,
        min_signature_chars: int | None = None,
    ) -> None:
        self._gateway = gateway
        self._given_tools = tools
        self._follows_tier = min_signature_chars is None
        self._rules_due = 0.0  # monotonic time of the next look at the tier's rules
        self._build(
            framing.DEFAULT_MIN_SIGNATURE_CHARS
            if min_signature_chars is None
            else min_signature_chars
        )
        missing = sorted(
            {s.operation for s in self.specs.values() if s.operation not in OPERATIONS}
        )
        if missing:
            raise TypeError(f"the gateway core has no operations {missing} for the MCP tools")

    def _build(self, min_signature_chars: int) -> None:
        self.min_signature_chars = min_signature_chars
        self.specs: dict[str, ToolSpec] = {
            spec.name: spec for spec in (self._given_tools or build_tools(min_signature_chars))
        }
        self.schemas: dict[str, Json] = {
            name: input_schema(spec, min_signature_chars) for name, spec in self.specs.items()
        }
        self._validators = {
            name: jsonschema.Draft202012Validator(schema) for name, schema in self.schemas.items()
        }
        self.listing = [
            types.Tool(
                name=spec.name,
                description=spec.description,
                input_schema=self.schemas[spec.name],
                annotations=types.ToolAnnotations(
                    read_only_hint=spec.read_only,
                    destructive_hint=spec.declared.effect == "deletes",
                    idempotent_hint=spec.declared.idempotent,
                    open_world_hint=False,
                ),
            )
            for spec in self.specs.values()
        ]

    async def follow_rules(self) -> None:
        """Adopt the authoring tier's signature rule when it is due for a look. While the tier
        cannot answer, the last known rule stands (the tier enforces its own anyway)."""
        now = time.monotonic()
        if not self._follows_tier or now < self._rules_due:
            return
        try:
            rules = await self.gateway.draft_rules()
        except EngramError as error:
            self._rules_due = now + RULES_RETRY_S
            logger.warning("MCP schemas keep their signature rule: %s", error.message)
            return
        self._rules_due = now + RULES_REFRESH_S
        wanted = int(rules.min_signature_chars)
        if wanted and wanted != self.min_signature_chars:
            self._build(wanted)

    def listing_for(
        self, caller: Principal | None, toolsets: frozenset[str] | None = None
    ) -> list[types.Tool]:
        """The tools of `toolsets` (None: all) that `caller`'s token may use (a read token is
        not offered writes); the call itself is checked either way, and a tool outside the
        listed toolsets can still be called."""
        listed = [
            tool
            for tool in self.listing
            if toolsets is None or self.specs[tool.name].toolset in toolsets
        ]
        if caller is None:
            return listed
        return [
            tool
            for tool in listed
            if REQUIRED_TIER.get(self.specs[tool.name].operation, caller.tier) <= caller.tier
        ]

    @property
    def gateway(self) -> Gateway:
        source = self._gateway
        return source if isinstance(source, Gateway) else source()

    def schema_of(self, name: str) -> Mapping[str, Any] | None:
        return self.schemas.get(name)

    def _invalid(self, name: str, arguments: Mapping[str, Any]) -> str | None:
        errors = list(self._validators[name].iter_errors(dict(arguments)))
        if not errors:
            return None
        worst = jsonschema.exceptions.best_match(errors)
        where = "/".join(str(part) for part in worst.absolute_path) or "arguments"
        message = worst.message
        if worst.validator == "minLength" and isinstance(worst.instance, str):
            message = (
                f"{len(worst.instance)} characters; at least {worst.validator_value} are needed"
            )
        return f"invalid_input: {where}: {message}"

    async def call(
        self, principal: Principal | None, name: str, arguments: Mapping[str, Any] | None
    ) -> types.CallToolResult:
        spec = self.specs.get(name)
        if spec is None:
            return tool_error(f"not_found: no tool {name!r}; engram tools: {', '.join(self.specs)}")
        if principal is None:
            return tool_error("unauthenticated: no valid bearer token came with this call")
        args = dict(arguments or {})
        problem = self._invalid(name, args)
        if problem is not None:
            return tool_error(problem)
        try:
            request = build_request(spec, args)
            operation = self.gateway.operation(spec.operation)
            if isinstance(request, corpus_pb2.UploadFileHeader):
                data = upload_content(args)
                request.declared_size = len(data)  # refused before any byte when too large
                answer = await operation(principal, request, _chunks(data))
            else:
                answer = await operation(principal, request)
            renderer = RENDERERS.get(spec.operation)
            if renderer is not None:
                # An answer an agent reads as text, its data once in the structured content.
                text, payload = renderer(answer, args)
                return types.CallToolResult(
                    content=[types.TextContent(type="text", text=text)],
                    structured_content=payload,
                )
            payload = (
                spec.result(answer) if spec.result is not None else to_json(answer, compact=True)
            )
        except EngramError as error:
            return tool_error(error_text(error))
        except Exception:
            logger.exception("MCP tool %s failed", name)
            return tool_error("internal: the gateway failed to answer; the error is logged")
        return types.CallToolResult(content=[_text(payload)], structured_content=payload)


async def _chunks(data: bytes, size: int = 1 << 20) -> AsyncIterator[bytes]:
    """An upload's bytes as the stream the gateway's upload operation consumes."""
    for start in range(0, max(len(data), 1), size):
        yield data[start : start + size]


def _from_scope(ctx: ServerRequestContext[Any, Any], key: str) -> Any:
    """What the HTTP endpoint put in the request's scope under `key` (None in-process)."""
    scope = getattr(ctx.request, "scope", None)
    return scope.get(key) if isinstance(scope, dict) else None


def _principal_of_request(ctx: ServerRequestContext[Any, Any]) -> Principal | None:
    principal = _from_scope(ctx, PRINCIPAL_SCOPE_KEY)
    return principal if isinstance(principal, Principal) else None


def build_server(
    gateway: GatewaySource,
    *,
    principal: Principal | None = None,
    tools: Sequence[ToolSpec] | None = None,
    min_signature_chars: int | None = None,
    toolsets: frozenset[str] | None = None,
) -> Server[Any]:
    """The MCP server over the gateway core (signature rule: the authoring tier's, unless
    `min_signature_chars` fixes one).

    Served over HTTP (`McpEndpoint`), each call's principal is the one its request's bearer
    token resolved to. `principal` fixes one for every call instead: an in-process client
    (tests, an embedding application) that has already authenticated its token.
    """
    table = EngramTools(gateway, tools=tools, min_signature_chars=min_signature_chars)
    return _server(table, principal, toolsets)


def _toolsets_of_request(ctx: ServerRequestContext[Any, Any]) -> frozenset[str] | None:
    chosen = _from_scope(ctx, TOOLSETS_SCOPE_KEY)
    return chosen if isinstance(chosen, frozenset) else None


def _server(
    table: EngramTools, principal: Principal | None, toolsets: frozenset[str] | None = None
) -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        await table.follow_rules()
        caller = principal if principal is not None else _principal_of_request(ctx)
        chosen = _toolsets_of_request(ctx) or toolsets
        return types.ListToolsResult(tools=table.listing_for(caller, chosen))

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        caller = principal if principal is not None else _principal_of_request(ctx)
        await table.follow_rules()
        return await table.call(caller, params.name, params.arguments)

    async def list_prompts(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=recollection.PROMPTS)

    async def get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != recollection.SESSION_START:
            raise MCPError(
                recollection.INVALID_PARAMS,
                f"not_found: no prompt {params.name!r}; engram prompts: "
                + ", ".join(p.name for p in recollection.PROMPTS),
            )
        caller = principal if principal is not None else _principal_of_request(ctx)
        return await recollection.session_start(table.gateway, caller, params.arguments)

    async def list_resources(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=recollection.RESOURCES)

    async def list_templates(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=recollection.TEMPLATES)

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        caller = principal if principal is not None else _principal_of_request(ctx)
        return await recollection.read(table.gateway, caller, str(params.uri))

    return Server(
        SERVER_NAME,
        version=_version(),
        title="Engram memory",
        instructions=framing.instructions(),  # the same whatever the toolsets
        get_tool_input_schema=table.schema_of,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
    )


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("engram")
    except Exception:
        return ""


def _bearer(scope: Scope) -> str | None:
    for key, value in scope.get("headers", []):
        if key == b"authorization":
            return bearer_credentials(bytes(value).decode("latin-1"))
    return None


def _unauthenticated(message: str) -> JSONResponse:
    return error_response(Unauthenticated(message))


class McpEndpoint:
    """The ASGI endpoint at /mcp: bearer auth in front of the streamable HTTP transport.

    `lifespan()` must be entered for as long as the endpoint serves (`install_mcp` does it).
    """

    def __init__(
        self,
        gateway: GatewaySource,
        *,
        min_signature_chars: int | None = None,
        toolsets: frozenset[str] | None = None,
    ) -> None:
        self.tools = EngramTools(gateway, min_signature_chars=min_signature_chars)
        self.toolsets = toolsets
        self.server = _server(self.tools, None, toolsets)
        self.sessions = StreamableHTTPSessionManager(
            app=self.server,
            stateless=True,
            json_response=True,
            max_request_body_size=MAX_MCP_BODY_BYTES,
        )

    def lifespan(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Runs the transport's task group; enter it after the gateway core exists."""
        return self.sessions.run()

    def _principal(self, token: str) -> Principal | None:
        try:
            return self.tools.gateway.authenticate(token)
        except EngramError:
            return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        token = _bearer(scope)
        if token is None:
            response = _unauthenticated(
                "this endpoint needs Authorization: Bearer <token> (engram token create)"
            )
            await response(scope, receive, send)
            return
        principal = self._principal(token)
        if principal is None:
            response = _unauthenticated("the bearer token is not valid (revoked or never issued)")
            await response(scope, receive, send)
            return
        scope[PRINCIPAL_SCOPE_KEY] = principal
        asked = _query_value(scope, TOOLS_PARAM)
        if asked is not None:
            try:
                scope[TOOLSETS_SCOPE_KEY] = parse_toolsets(asked)
            except EngramError as error:
                await error_response(error)(scope, receive, send)
                return
        await self.sessions.handle_request(scope, receive, send)


def _query_value(scope: Scope, name: str) -> str | None:
    for key, value in parse_qsl(bytes(scope.get("query_string", b"")).decode("latin-1")):
        if key == name:
            return value
    return None


def install_mcp(
    app: Any,
    gateway_of: GatewaySource,
    *,
    path: str = MCP_PATH,
    min_signature_chars: int | None = None,
    toolsets: frozenset[str] | None = None,
) -> McpEndpoint:
    """Serve MCP at `path` of a Starlette/FastAPI app, running inside the app's lifespan.

    Call it once the app exists (`gateway_of` may return the core the lifespan builds); the
    app's own lifespan runs first, so the core is there before MCP serves. The route is a
    plain ASGI route, so it stays out of the OpenAPI document. Installing twice returns the
    endpoint already there.
    """
    existing = getattr(app.state, "mcp", None)
    if isinstance(existing, McpEndpoint):
        return existing
    endpoint = McpEndpoint(gateway_of, min_signature_chars=min_signature_chars, toolsets=toolsets)
    app.router.routes.append(Route(path, endpoint=endpoint, methods=["GET", "POST", "DELETE"]))
    inner = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(running: Any) -> AsyncIterator[Any]:
        async with inner(running) as state, endpoint.lifespan():
            yield state

    app.router.lifespan_context = lifespan
    app.state.mcp = endpoint
    return endpoint
