"""The operation table of Engram's public API: every operation, read from the `engram.v1.Engram`
service's descriptor and its `(engram.v1.operation)` options (engram/v1/options.proto).

An operation is declared once, on its RPC: the least token tier that may call it, which tier
serves it, what it does to stored state, and its REST route when it has a plain one. The
gateway's faces (REST, gRPC, MCP) and the client library (`engram.client`) both read this
table, so adding an operation means annotating its RPC, not editing a list (decision 0016).
This module needs nothing but the generated messages: it ships with the client.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from google.protobuf import descriptor_pool, message_factory
from google.protobuf.descriptor import Descriptor, MethodDescriptor, ServiceDescriptor
from google.protobuf.descriptor_pb2 import MethodOptions
from google.protobuf.message import Message

from engram.v1 import gateway_pb2, options_pb2

# Who may serve an operation: a tier the gateway forwards to, or the gateway itself.
SERVERS: Final = frozenset({"retrieval", "corpus", "authoring", "gateway"})


@dataclass(frozen=True, slots=True)
class HttpRoute:
    """An operation's plain REST route, as its RPC declares it."""

    method: str  # GET, POST, PUT, PATCH, DELETE
    path: str  # under /v1, with {store} and the request's own {fields}
    summary: str
    tag: str
    query: tuple[str, ...]  # dotted request fields read from the query string
    body: bool  # the request is the JSON body (else the path and query alone)
    status: int

    @property
    def path_fields(self) -> tuple[str, ...]:
        """The request fields the path fills, `store` aside."""
        return tuple(f for f in re.findall(r"{(\w+)}", self.path) if f != "store")


_METHODS: Final = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})

_EFFECTS: Final[Mapping[int, str]] = MappingProxyType(
    {
        options_pb2.EFFECT_READS: "reads",
        options_pb2.EFFECT_WRITES: "writes",
        options_pb2.EFFECT_DELETES: "deletes",
    }
)


def _http(rpc: str, declared: options_pb2.HttpRoute) -> HttpRoute:
    method = declared.method.upper()
    if method not in _METHODS or not declared.path.startswith("/"):
        raise ValueError(f"engram.v1.Engram.{rpc}: route {method} {declared.path!r} is not valid")
    if declared.query and method in ("POST", "PUT", "PATCH") and not declared.no_body:
        raise ValueError(f"engram.v1.Engram.{rpc}: a {method} with a body reads no query")
    return HttpRoute(
        method=method,
        path=declared.path,
        summary=declared.summary,
        tag=declared.tag,
        query=tuple(declared.query),
        body=method in ("POST", "PUT", "PATCH") and not declared.no_body,
        status=declared.status or 200,
    )


@dataclass(frozen=True, slots=True)
class Operation:
    """One public operation, as its RPC declares it."""

    name: str  # snake_case: the operation's name in every face ("add_drawer_signed")
    rpc: str  # the RPC's name on engram.v1.Engram and on the serving tier ("AddDrawerSigned")
    tier: int  # the least token tier that may call it (an engram.v1.CallerTier value)
    served_by: str  # retrieval | corpus | authoring | gateway
    request: str  # full name of the request message
    response: str  # full name of the response message
    client_streaming: bool
    server_streaming: bool
    http: HttpRoute | None  # its plain REST route; None: hand-written (or none)
    effect: str  # reads | writes | deletes: what calling it does to stored state
    idempotent: bool  # calling it again with the same request changes nothing more
    # Where the store a call names goes in its request: "store" (a StoreContext), "name" (a
    # registry request whose route is `/stores/{store}`), or None (it names no store).
    store_field: str | None = None


def message_class(full_name: str) -> type[Message]:
    """The generated class of a message named in the table ("engram.v1.SearchRequest")."""
    found = descriptor_pool.Default().FindMessageTypeByName(full_name)
    cls: type[Message] = message_factory.GetMessageClass(found)
    return cls


def operation_name(rpc: str) -> str:
    """ "AddDrawerSigned" → "add_drawer_signed"."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", rpc).lower()


def declaration(rpc: str, options: MethodOptions) -> options_pb2.OperationOptions:
    """An RPC's `(engram.v1.operation)`, refused when it is missing or incomplete."""
    if not options.HasExtension(options_pb2.operation):
        raise ValueError(f"engram.v1.Engram.{rpc} declares no (engram.v1.operation)")
    declared = options.Extensions[options_pb2.operation]
    if declared.tier == 0:
        raise ValueError(f"engram.v1.Engram.{rpc} declares no caller tier")
    if declared.effect not in _EFFECTS:
        raise ValueError(f"engram.v1.Engram.{rpc} declares no effect (reads, writes, deletes)")
    if declared.served_by not in SERVERS:
        raise ValueError(
            f"engram.v1.Engram.{rpc} is served by {declared.served_by!r}: "
            f"expected one of {sorted(SERVERS)}"
        )
    return declared


def _store_field(request: Descriptor, http: HttpRoute | None) -> str | None:
    store = request.fields_by_name.get("store")
    if store is not None and store.message_type is not None:
        return "store"
    if http is not None and "{store}" in http.path and "name" in request.fields_by_name:
        return "name"
    return None


def _operation(method: MethodDescriptor) -> Operation:
    declared = declaration(method.name, method.GetOptions())
    http = _http(method.name, declared.http) if declared.HasField("http") else None
    return Operation(
        name=operation_name(method.name),
        rpc=method.name,
        tier=int(declared.tier),
        served_by=declared.served_by,
        request=method.input_type.full_name,
        response=method.output_type.full_name,
        client_streaming=method.client_streaming,
        server_streaming=method.server_streaming,
        http=http,
        effect=_EFFECTS[declared.effect],
        idempotent=declared.idempotent,
        store_field=_store_field(method.input_type, http),
    )


def build_operations(service: ServiceDescriptor) -> Mapping[str, Operation]:
    """The table of one service's annotated RPCs, by operation name."""
    table = {op.name: op for op in (_operation(m) for m in service.methods)}
    return MappingProxyType(table)


OPERATIONS: Final[Mapping[str, Operation]] = build_operations(
    gateway_pb2.DESCRIPTOR.services_by_name["Engram"]
)
