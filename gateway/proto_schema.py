"""JSON Schema of a protobuf message's proto3 JSON form, generated from its descriptor.

The one derivation of a shape for every face: REST bodies and responses in the OpenAPI
document, and MCP tool input schemas. Field names are the proto names (snake_case, as
`MessageToDict(preserving_proto_field_name=True)` writes them and `ParseDict` reads them);
enums are their value names; Timestamps are RFC 3339 strings; 64-bit integers are integers
or decimal strings (proto3 JSON writes them as strings); bytes are base64 strings; every
message object is closed (`additionalProperties: false`). Nested messages and enums are
`$defs` named by their full proto name, referenced as `#/$defs/<full name>`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, Final

from engram.v1 import options_pb2
from google.protobuf.descriptor import Descriptor, EnumDescriptor, FieldDescriptor

Json = dict[str, Any]

JSON_SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
DEFS_PREFIX: Final = "#/$defs/"

_INT32: Final[Json] = {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}
_UINT32: Final[Json] = {"type": "integer", "minimum": 0, "maximum": 2**32 - 1}
_INT64: Final[Json] = {"type": ["integer", "string"], "pattern": "^-?[0-9]+$"}
_UINT64: Final[Json] = {"type": ["integer", "string"], "pattern": "^[0-9]+$", "minimum": 0}

_T = FieldDescriptor
_SCALARS: Final[dict[int, Json]] = {
    _T.TYPE_DOUBLE: {"type": "number"},
    _T.TYPE_FLOAT: {"type": "number"},
    _T.TYPE_INT32: _INT32,
    _T.TYPE_SINT32: _INT32,
    _T.TYPE_SFIXED32: _INT32,
    _T.TYPE_UINT32: _UINT32,
    _T.TYPE_FIXED32: _UINT32,
    _T.TYPE_INT64: _INT64,
    _T.TYPE_SINT64: _INT64,
    _T.TYPE_SFIXED64: _INT64,
    _T.TYPE_UINT64: _UINT64,
    _T.TYPE_FIXED64: _UINT64,
    _T.TYPE_BOOL: {"type": "boolean"},
    _T.TYPE_STRING: {"type": "string"},
    _T.TYPE_BYTES: {"type": "string", "contentEncoding": "base64"},
}

# Well-known types have their own JSON forms.
_WELL_KNOWN: Final[dict[str, Json]] = {
    "google.protobuf.Timestamp": {"type": "string", "format": "date-time"},
    "google.protobuf.Duration": {"type": "string", "pattern": r"^-?[0-9]+(\.[0-9]{1,9})?s$"},
    "google.protobuf.Struct": {"type": "object"},
    "google.protobuf.Empty": {"type": "object", "additionalProperties": False},
}


def is_map(field: FieldDescriptor) -> bool:
    entry = field.message_type
    return entry is not None and entry.GetOptions().map_entry


def omitted_types(descriptor: Descriptor, omit: Collection[str]) -> frozenset[str]:
    """Message types of the omitted top-level fields: left out at every depth as well (a
    caller who never sets `store` never sets a nested StoreContext either)."""
    return frozenset(
        f.message_type.full_name
        for f in descriptor.fields
        if f.name in omit and f.message_type is not None and not is_map(f)
    )


def visible_fields(
    descriptor: Descriptor, omit: Collection[str], hidden_types: Collection[str], top: bool
) -> list[FieldDescriptor]:
    """The fields of `descriptor` a caller sees, in declaration order."""
    return [
        f
        for f in descriptor.fields
        if not (top and f.name in omit)
        and not (f.message_type is not None and f.message_type.full_name in hidden_types)
    ]


def required_paths(descriptor: Descriptor, prefix: str = "") -> list[str]:
    """Dotted paths of the fields a caller must set, as the protos mark them
    (`[(engram.v1.required) = true]`), at every depth: "drawer", "drawer.content", …; a
    repeated message's own required fields apply to each item ("turns.content")."""
    paths: list[str] = []
    for field in descriptor.fields:
        path = f"{prefix}{field.name}"
        if field.GetOptions().Extensions[options_pb2.required]:
            paths.append(path)
        entry = field.message_type
        if entry is not None and not is_map(field) and not is_well_known(entry):
            paths.extend(required_paths(entry, f"{path}."))
    return paths


def is_well_known(descriptor: Descriptor) -> bool:
    return descriptor.full_name in _WELL_KNOWN


class _Builder:
    def __init__(self, hidden_types: frozenset[str]) -> None:
        self.hidden = hidden_types
        self.defs: dict[str, Json] = {}

    def message(self, descriptor: Descriptor, omit: Collection[str], top: bool) -> Json:
        fields = visible_fields(descriptor, omit, self.hidden, top)
        schema: Json = {
            "type": "object",
            "properties": {f.name: self.field(f) for f in fields},
            "additionalProperties": False,
        }
        required = [f.name for f in fields if f.GetOptions().Extensions[options_pb2.required]]
        if required:
            schema["required"] = required
        names = {f.name for f in fields}
        exclusive = [
            sorted(n for n in (f.name for f in oneof.fields) if n in names)
            for oneof in descriptor.oneofs
            if not _synthetic(oneof.name, [f.name for f in oneof.fields])
        ]
        pairs = [
            {"required": [a, b]}
            for group in exclusive
            for i, a in enumerate(group)
            for b in group[i + 1 :]
        ]
        if pairs:
            schema["not"] = {"anyOf": pairs}
        return schema

    def ref_message(self, descriptor: Descriptor) -> Json:
        known = _WELL_KNOWN.get(descriptor.full_name)
        if known is not None:
            return dict(known)
        name = descriptor.full_name
        if name not in self.defs:
            self.defs[name] = {}  # placeholder first: recursive messages refer to themselves
            self.defs[name] = {"title": descriptor.name, **self.message(descriptor, (), False)}
        return {"$ref": DEFS_PREFIX + name}

    def ref_enum(self, descriptor: EnumDescriptor) -> Json:
        name = descriptor.full_name
        if name not in self.defs:
            self.defs[name] = {
                "title": descriptor.name,
                "type": "string",
                "enum": [value.name for value in descriptor.values],
            }
        return {"$ref": DEFS_PREFIX + name}

    def single(self, field: FieldDescriptor) -> Json:
        if field.type == _T.TYPE_MESSAGE:
            assert field.message_type is not None
            return self.ref_message(field.message_type)
        if field.type == _T.TYPE_ENUM:
            assert field.enum_type is not None
            return self.ref_enum(field.enum_type)
        return dict(_SCALARS[field.type])

    def field(self, field: FieldDescriptor) -> Json:
        if is_map(field):
            entry = field.message_type
            assert entry is not None
            key, value = entry.fields_by_name["key"], entry.fields_by_name["value"]
            schema: Json = {"type": "object", "additionalProperties": self.single(value)}
            if key.type == _T.TYPE_BOOL:
                schema["propertyNames"] = {"enum": ["true", "false"]}
            elif key.type != _T.TYPE_STRING:
                schema["propertyNames"] = {"pattern": "^-?[0-9]+$"}
            return schema
        if field.is_repeated:
            return {"type": "array", "items": self.single(field)}
        return self.single(field)


def _synthetic(oneof_name: str, field_names: list[str]) -> bool:
    """proto3 `optional` makes a one-field oneof named `_<field>`; it is no real choice."""
    return len(field_names) == 1 and oneof_name == "_" + field_names[0]


def schema_for(descriptor: Descriptor, *, omit: Collection[str] = ("store",)) -> Json:
    """The JSON Schema of `descriptor`'s proto3 JSON form, standing alone.

    `omit` names top-level fields the caller does not send (by default `store`: the gateway
    fills it); their message types are left out at every depth too. The top-level object is
    inline; nested messages and enums are in `$defs`.
    """
    builder = _Builder(omitted_types(descriptor, omit))
    body = builder.message(descriptor, omit, True)
    schema: Json = {"$schema": JSON_SCHEMA_DIALECT, "title": descriptor.name, **body}
    if builder.defs:
        schema["$defs"] = builder.defs
    return schema


def field_schema(field: FieldDescriptor) -> tuple[Json, dict[str, Json]]:
    """One field's schema and the `$defs` it refers to (for query parameters)."""
    builder = _Builder(frozenset())
    return builder.field(field), builder.defs
