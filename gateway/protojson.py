"""Requests from JSON and answers to JSON, by the proto3 JSON mapping (proto field names):
the one converter of every face (REST, MCP, SSE).

`parse` is strict where `ParseDict` alone is lenient: only the proto field names a caller is
meant to send are accepted (not the camelCase JSON names, not fields the gateway fills), so
what the OpenAPI and MCP schemas say (`additionalProperties: false`) is what is enforced.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any, TypeVar, cast

from google.protobuf import json_format
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message

from gateway.errors import MalformedRequest
from gateway.proto_schema import is_map, is_well_known, omitted_types, visible_fields

M = TypeVar("M", bound=Message)

Json = dict[str, Any]


def to_json(message: Message, *, compact: bool = False) -> Json:
    """A message as proto3 JSON: proto field names, enum names.

    REST writes every field without presence even when empty (so `results: []` and
    `intent_inferred: false` are there). `compact` (MCP, where an agent's context is the
    budget) leaves defaults out but keeps every top-level list, so an empty answer (silence)
    still reads as an explicit []."""
    if not compact:
        return json_format.MessageToDict(
            message,
            preserving_proto_field_name=True,
            always_print_fields_with_no_presence=True,
        )
    answer = json_format.MessageToDict(message, preserving_proto_field_name=True)
    descriptor = cast(Descriptor, message.DESCRIPTOR)
    for field in descriptor.fields:
        if field.is_repeated and not is_map(field):
            answer.setdefault(field.name, [])
    return answer


def parse(message_type: type[M], data: object, *, omit: Collection[str] = ("store",)) -> M:
    """Build `message_type` from decoded JSON; MalformedRequest (HTTP 400) names what is wrong.

    `omit` lists top-level fields the caller may not send (the gateway fills them)."""
    descriptor = cast(Descriptor, message_type.DESCRIPTOR)
    if not isinstance(data, dict):
        raise MalformedRequest(
            f"the body must be a JSON object ({descriptor.name}), not {_kind(data)}"
        )
    _check(descriptor, data, omit, omitted_types(descriptor, omit), True, "")
    message = message_type()
    try:
        json_format.ParseDict(data, message)
    except json_format.ParseError as error:
        raise MalformedRequest(f"{descriptor.name}: {error}") from None
    return message


def _check(
    descriptor: Descriptor,
    data: dict[Any, Any],
    omit: Collection[str],
    hidden: Collection[str],
    top: bool,
    path: str,
) -> None:
    fields = {f.name: f for f in visible_fields(descriptor, omit, hidden, top)}
    for key, value in data.items():
        where = f"{path}{key}"
        field = fields.get(key)
        if field is None:
            known = ", ".join(fields) or "none"
            raise MalformedRequest(
                f"unknown field {where!r} in {descriptor.name} (its fields: {known})",
                field=where,
            )
        _check_value(field, value, hidden, where)


def _check_value(field: FieldDescriptor, value: Any, hidden: Collection[str], where: str) -> None:
    entry = field.message_type
    if entry is None or value is None or is_well_known(entry):
        return
    if is_map(field):
        inner = entry.fields_by_name["value"]
        if isinstance(value, dict) and inner.message_type is not None:
            for key, item in value.items():
                _check_value(inner, item, hidden, f"{where}.{key}")
        return
    items = value if field.is_repeated and isinstance(value, list) else [value]
    for index, item in enumerate(items):
        at = f"{where}[{index}]" if field.is_repeated else where
        if isinstance(item, dict):
            _check(entry, item, (), hidden, False, f"{at}.")


def _kind(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if value is None:
        return "null"
    return f"a {type(value).__name__}"
