"""What every REST route shares: a proto request from the body or the query string, the proto
answer as JSON, and the OpenAPI description of both, generated from the messages.

A route names its request and response messages in a `ProtoOp`; `ProtoOp.route()` gives the
decorator's OpenAPI extras (the `x-engram-*` markers the app's OpenAPI builder turns into
component schemas, see `gateway.openapi`), `ProtoOp.parse()` builds the request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, cast

from fastapi import Request
from fastapi.responses import JSONResponse
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from gateway.errors import MalformedRequest
from gateway.proto_schema import DEFS_PREFIX, field_schema
from gateway.protojson import parse, to_json
from services.runtime.errors import TooLarge

Json = dict[str, Any]
Req = TypeVar("Req", bound=Message)

BODY_MARK = "x-engram-body"
RESPONSE_MARK = "x-engram-response"
ERROR_SCHEMA = "Error"

_TRUE, _FALSE = frozenset({"true", "1", "yes"}), frozenset({"false", "0", "no"})
_INTEGERS = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SFIXED32,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_FIXED32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_SFIXED64,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_FIXED64,
    }
)


def reply(message: Message, status_code: int = 200) -> JSONResponse:
    """A proto answer as proto3 JSON."""
    return JSONResponse(to_json(message), status_code=status_code)


async def read_json(request: Request, limit: int) -> object:
    """The decoded JSON body (an empty body is `{}`), refused over `limit` bytes."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise TooLarge(f"the body is {int(declared)} bytes; the limit is {limit}", field="body")
    body = bytearray()
    async for piece in request.stream():
        body += piece
        if len(body) > limit:
            raise TooLarge(f"the body is over {limit} bytes, the limit", field="body")
    if not body.strip():
        return {}
    try:
        return json.loads(body)
    except (UnicodeDecodeError, ValueError) as error:
        raise MalformedRequest(f"the body is not valid JSON: {error}") from None


def _resolve(path: str, message: type[Message]) -> FieldDescriptor:
    """The field at a dotted path of a message ("page.page_size")."""
    descriptor = cast(Descriptor, message.DESCRIPTOR)
    *parents, leaf = path.split(".")
    for name in parents:
        nested = descriptor.fields_by_name[name].message_type
        assert nested is not None, f"{path}: {name} is not a message field"
        descriptor = nested
    return descriptor.fields_by_name[leaf]


def _inline(schema: Json, defs: Mapping[str, Json]) -> Json:
    """A parameter schema with its enum references inlined (parameters stand alone)."""
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(DEFS_PREFIX):
        inlined = dict(defs[ref.removeprefix(DEFS_PREFIX)])
        inlined.pop("title", None)
        return inlined
    if isinstance(schema.get("items"), dict):
        return {**schema, "items": _inline(schema["items"], defs)}
    return schema


@dataclass(frozen=True)
class ProtoOp(Generic[Req]):
    """The request and response messages of one route, and where the request comes from.

    `path_fields` are request fields filled from the path (besides `store`); `query` lists
    dotted request fields read from the query string (GET and DELETE routes); otherwise the
    request is the JSON body. `store_field` is where the path's store goes: "store" (a
    StoreContext, `store.name`), "name" (the registry's requests), or None."""

    request: type[Req]
    response: type[Message] | None = None
    path_fields: tuple[str, ...] = ()
    query: tuple[str, ...] = ()
    body: bool = True
    store_field: str | None = "store"

    @property
    def omitted(self) -> tuple[str, ...]:
        fields = self.request.DESCRIPTOR.fields_by_name
        store = (self.store_field,) if self.store_field in fields else ()
        return (*store, *self.path_fields)

    def route(self, **extra: Any) -> dict[str, Any]:
        """Keyword arguments for the FastAPI route decorator."""
        openapi: Json = {}
        if self.body:
            openapi[BODY_MARK] = {
                "message": self.request.DESCRIPTOR.full_name,
                "omit": list(self.omitted),
            }
        if self.query:
            openapi["parameters"] = [self._parameter(path) for path in self.query]
        if self.response is not None:
            openapi[RESPONSE_MARK] = self.response.DESCRIPTOR.full_name
        error = {
            "content": {
                "application/json": {"schema": {"$ref": f"#/components/schemas/{ERROR_SCHEMA}"}}
            }
        }
        kwargs: dict[str, Any] = {
            "openapi_extra": openapi,
            "responses": {
                "4XX": {"description": "refused; `error.message` says why", **error},
                "5XX": {"description": "a tier or the gateway failed", **error},
            },
            "response_model": None,
        }
        openapi.update(extra.pop("openapi_extra", {}))
        kwargs["responses"].update(extra.pop("responses", {}))
        kwargs.update(extra)
        return kwargs

    def _parameter(self, path: str) -> Json:
        field = _resolve(path, self.request)
        schema, defs = field_schema(field)
        parameter: Json = {
            "name": path.rsplit(".", 1)[-1],
            "in": "query",
            "required": False,
            "schema": _inline(schema, defs),
        }
        if field.is_repeated:
            parameter["style"] = "form"
            parameter["explode"] = True
        return parameter

    async def parse(
        self, request: Request, *, limit: int, store: str | None = None, **path: str
    ) -> Req:
        """The request message: body or query string, then the path's values on top."""
        if self.body:
            data = await read_json(request, limit)
        else:
            data = self._from_query(request)
        message = parse(self.request, data, omit=self.omitted)
        if store is not None and self.store_field == "store":
            message.store.name = store  # type: ignore[attr-defined]
        elif store is not None and self.store_field is not None:
            setattr(message, self.store_field, store)
        for name, value in path.items():
            setattr(message, name, value)
        return message

    def _from_query(self, request: Request) -> Json:
        by_name = {path.rsplit(".", 1)[-1]: path for path in self.query}
        unknown = sorted(set(request.query_params) - set(by_name))
        if unknown:
            known = ", ".join(by_name) or "none"
            raise MalformedRequest(
                f"unknown query parameter {unknown[0]!r} (this route takes: {known})",
                field=unknown[0],
            )
        data: Json = {}
        for name, path in by_name.items():
            values = request.query_params.getlist(name)
            if not values:
                continue
            field = _resolve(path, self.request)
            converted = [_convert(field, name, v) for v in values]
            value: Any = converted if field.is_repeated else converted[-1]
            target = data
            *parents, leaf = path.split(".")
            for parent in parents:
                target = target.setdefault(parent, {})
            target[leaf] = value
        return data


def _convert(field: FieldDescriptor, name: str, value: str) -> Any:
    """A query-string value as the JSON value its field takes."""
    if field.type == FieldDescriptor.TYPE_BOOL:
        lowered = value.strip().lower()
        if lowered in _TRUE:
            return True
        if lowered in _FALSE:
            return False
        raise MalformedRequest(f"query parameter {name!r} must be true or false", field=name)
    if field.type in _INTEGERS:
        try:
            return int(value)
        except ValueError:
            raise MalformedRequest(
                f"query parameter {name!r} must be an integer, got {value!r}", field=name
            ) from None
    if field.type in (FieldDescriptor.TYPE_DOUBLE, FieldDescriptor.TYPE_FLOAT):
        try:
            return float(value)
        except ValueError:
            raise MalformedRequest(
                f"query parameter {name!r} must be a number, got {value!r}", field=name
            ) from None
    return value
