"""What an agent reads without calling a tool: the session-start prompt and the store's
vocabulary as MCP resources.

- Prompt `engram_session_start` (arguments `store`, optional `context`): the drawers the
  session should start with (the `prime` operation), rendered as one user message to place at
  the beginning of the context, each memory under its provenance header with the id that
  `engram_get_drawer` expands.
- Resources: `engram://vocabulary/default` and `engram://vocabulary/companion` (each mode's
  memory types and intents, with the intents each type ranks highest for), and per store the
  templates `engram://stores/{store}/vocabulary` (the store's mode, its vocabulary and the
  search defaults in force) and `engram://stores/{store}/rooms` (wings and rooms with their
  drawer counts). Store resources go through the same operations, tiers and scopes as the tools.

Everything reads through `Gateway.operation`, so a prompt or a resource is refused exactly
where the tool of the same operation is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from typing import Any, Final

import mcp_types as types
from engram.v1 import gateway_pb2, retrieval_pb2
from mcp.shared.exceptions import MCPError

from gateway.core.principal import Principal
from gateway.core.service import Gateway
from gateway.errors import error_text
from gateway.mcp import framing
from gateway.protojson import to_json
from services.runtime.errors import EngramError
from services.vocabulary import MODES, TypeLibrary, library_for

SESSION_START: Final = "engram_session_start"
JSON_MIME: Final = "application/json"
INVALID_PARAMS: Final = -32602  # JSON-RPC: the request's parameters are wrong

# Fields of SearchDefaults the vocabulary already lists.
_LISTED: Final = ("library", "memory_types", "intents")
_MODE_URI: Final = re.compile(r"engram://vocabulary/(?P<mode>[a-z]+)\Z")
_STORE_URI: Final = re.compile(r"engram://stores/(?P<store>[^/]+)/(?P<what>vocabulary|rooms)\Z")

PROMPTS: Final = [
    types.Prompt(
        name=SESSION_START,
        title="Start a session with Engram's memories",
        description=(
            "The few memories this session should start with: pinned and canonical drawers "
            "first, then what bears on the context; place it at the beginning of the context."
        ),
        arguments=[
            types.PromptArgument(name="store", description="the store's name", required=True),
            types.PromptArgument(
                name="context",
                description="what the session is about (optional; sharpens the choice)",
                required=False,
            ),
        ],
    )
]

RESOURCES: Final = [
    types.Resource(
        name=f"vocabulary-{library.name}",
        title=f"Memory types and intents, {library.name} mode",
        uri=f"engram://vocabulary/{library.name}",
        description=f"The {library.name} type library: what memory_type and intent take.",
        mime_type=JSON_MIME,
    )
    for library in map(library_for, MODES)
]

TEMPLATES: Final = [
    types.ResourceTemplate(
        name="store-vocabulary",
        title="A store's vocabulary and search defaults",
        uri_template="engram://stores/{store}/vocabulary",
        description="The store's mode, its memory types and intents, and the defaults in force.",
        mime_type=JSON_MIME,
    ),
    types.ResourceTemplate(
        name="store-rooms",
        title="A store's wings and rooms",
        uri_template="engram://stores/{store}/rooms",
        description="Every wing with its rooms and their drawer counts: reuse them when writing.",
        mime_type=JSON_MIME,
    ),
]


def vocabulary(library: TypeLibrary) -> dict[str, Any]:
    """A type library as data: its types, intents, and the intents each type ranks best for."""
    return {
        **framing.library_summary(library),
        "ranks_highest_for": {
            memory_type: sorted(row, key=lambda intent: -row[intent])[:2]
            for memory_type, row in library.matrix.items()
        },
    }


def _refused(error: EngramError) -> MCPError:
    return MCPError(INVALID_PARAMS, error_text(error))


Call = Callable[[str, Any], Awaitable[Any]]


def _caller(gateway: Gateway, principal: Principal | None) -> Call:
    async def call(operation: str, request: Any) -> Any:
        if principal is None:
            raise MCPError(INVALID_PARAMS, "unauthenticated: no valid bearer token came with this")
        try:
            return await gateway.operation(operation)(principal, request)
        except EngramError as error:
            raise _refused(error) from None

    return call


async def session_start(
    gateway: Gateway, principal: Principal | None, arguments: dict[str, str] | None
) -> types.GetPromptResult:
    """The engram_session_start prompt for one store (and an optional context)."""
    args = dict(arguments or {})
    store = args.get("store", "").strip()
    if not store:
        raise MCPError(
            INVALID_PARAMS, "invalid_input: the prompt needs `store` (engram_list_stores)"
        )
    request = retrieval_pb2.PrimeRequest(context=args.get("context", ""))
    request.store.name = store
    primed: retrieval_pb2.PrimeResponse = await _caller(gateway, principal)("prime", request)
    if not primed.items:
        text = f"Engram store {store!r} holds no memories to start this session with."
    else:
        blocks = [
            f"{item.header}\n{item.content}\n(id {item.drawer_id}: engram_get_drawer expands it)"
            for item in primed.items
        ]
        text = (
            f"Memories from Engram store {store!r} to hold for this session "
            f"({len(blocks)}; pinned and canonical first). Search the store for anything else."
            "\n\n" + "\n\n".join(blocks)
        )
    return types.GetPromptResult(
        description=f"session start from {store}",
        messages=[
            types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))
        ],
    )


def _json(uri: str, payload: object) -> types.ReadResourceResult:
    return types.ReadResourceResult(
        contents=[
            types.TextResourceContents(
                uri=uri, mime_type=JSON_MIME, text=json.dumps(payload, ensure_ascii=False)
            )
        ]
    )


async def read(gateway: Gateway, principal: Principal | None, uri: str) -> types.ReadResourceResult:
    """One resource by URI (the vocabularies, or a store's vocabulary or rooms)."""
    mode = _MODE_URI.match(uri)
    if mode is not None:
        if mode["mode"] not in MODES:
            raise MCPError(INVALID_PARAMS, f"not_found: no mode {mode['mode']!r} ({list(MODES)})")
        return _json(uri, vocabulary(library_for(mode["mode"])))
    found = _STORE_URI.match(uri)
    if found is None:
        raise MCPError(
            INVALID_PARAMS,
            f"not_found: no resource {uri!r}; engram resources are engram://vocabulary/<mode>, "
            "engram://stores/<store>/vocabulary and engram://stores/<store>/rooms",
        )
    call = _caller(gateway, principal)
    store = found["store"]
    if found["what"] == "vocabulary":
        info: gateway_pb2.StoreInfo = await call(
            "get_store", gateway_pb2.GetStoreRequest(name=store)
        )
        defaults = info.search_defaults
        in_force = to_json(defaults, compact=True)
        payload = {
            "store": store,
            **vocabulary(library_for(defaults.library or "default")),
            "search_defaults": {k: v for k, v in in_force.items() if k not in _LISTED},
        }
        return _json(uri, payload)
    listing = retrieval_pb2.ListDrawersRequest(include_facets=True)
    listing.store.name = store
    listing.page.page_size = 1
    answer: retrieval_pb2.ListDrawersResponse = await call("list_drawers", listing)
    return _json(
        uri,
        {
            "store": store,
            "wings": [
                {
                    "wing": wing.wing,
                    "drawers": wing.count,
                    "rooms": [{"room": room.room, "drawers": room.count} for room in wing.rooms],
                }
                for wing in answer.facets.wings
            ],
        },
    )
