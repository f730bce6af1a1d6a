"""The OpenAPI document, with every body and answer schema generated from the protos.

Routes mark their operations with the request and response message names (`x-engram-body`,
`x-engram-response`, see `gateway.routes._proto`); this builder turns each mark into a
component schema made by `gateway.proto_schema.schema_for` and points the operation at it.
No REST shape is written by hand, except the error envelope every route shares.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from google.protobuf import descriptor_pool

from gateway.proto_schema import DEFS_PREFIX, schema_for
from gateway.routes._proto import BODY_MARK, ERROR_SCHEMA, RESPONSE_MARK

Json = dict[str, Any]
COMPONENTS_PREFIX = "#/components/schemas/"

_ERROR: Json = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string", "description": "invalid_input, not_found, ..."},
                "message": {"type": "string", "description": "what was wrong, what to do"},
                "details": {"type": "object", "description": "e.g. the offending field"},
            },
        }
    },
}


def _relink(node: Any) -> Any:
    """`#/$defs/X` references as `#/components/schemas/X`."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(DEFS_PREFIX):
            return {**node, "$ref": COMPONENTS_PREFIX + ref.removeprefix(DEFS_PREFIX)}
        return {k: _relink(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_relink(v) for v in node]
    return node


class _Components:
    def __init__(self) -> None:
        self.schemas: dict[str, Json] = {ERROR_SCHEMA: _ERROR}
        self._pool = descriptor_pool.Default()

    def _put(self, name: str, schema: Json) -> None:
        existing = self.schemas.get(name)
        if existing is not None and existing != schema:
            raise RuntimeError(f"two different schemas for component {name!r}")
        self.schemas[name] = schema

    def add(self, message: str, omit: tuple[str, ...]) -> str:
        """The component name of `message` without `omit`, generated on first use."""
        descriptor = self._pool.FindMessageTypeByName(message)
        extra = sorted(set(omit) - {"store"})
        name = message if not extra else f"{message}-without-{'-'.join(extra)}"
        schema = schema_for(descriptor, omit=omit)
        for def_name, definition in schema.pop("$defs", {}).items():
            self._put(def_name, _relink(definition))
        schema.pop("$schema", None)
        self._put(name, _relink(schema))
        return name


def build_openapi(app: FastAPI) -> Json:
    """The app's OpenAPI document (cached on the app after the first call)."""
    if app.openapi_schema is not None:
        return app.openapi_schema
    spec = get_openapi(
        title=app.title,
        version=app.version,
        description=app.description,
        routes=app.routes,
    )
    components = _Components()
    for item in spec.get("paths", {}).values():
        for operation in item.values():
            if not isinstance(operation, dict):
                continue
            body = operation.pop(BODY_MARK, None)
            if body is not None:
                name = components.add(body["message"], tuple(body["omit"]))
                operation["requestBody"] = {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": COMPONENTS_PREFIX + name}}},
                }
            response = operation.pop(RESPONSE_MARK, None)
            if response is not None:
                name = components.add(response, ())
                responses = operation.setdefault("responses", {})
                success = next((code for code in responses if code.startswith("2")), "200")
                ok = responses.setdefault(success, {"description": "OK"})
                ok["content"] = {"application/json": {"schema": {"$ref": COMPONENTS_PREFIX + name}}}
    spec.setdefault("components", {}).setdefault("schemas", {}).update(components.schemas)
    app.openapi_schema = spec
    return spec
