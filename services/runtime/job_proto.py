"""Job payloads as proto messages: the queue keeps a payload as JSON (arq's job arguments),
handlers read it back as the message the tier's request made it from.

(A job's record and result are `engram.v1.Job` itself: see services.runtime.job_record.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from google.protobuf import json_format
from google.protobuf.message import Message

M = TypeVar("M", bound=Message)


def job_payload(payload: Message) -> dict[str, Any]:
    """A job's payload message as the JSON the queue keeps."""
    return json_format.MessageToDict(payload, preserving_proto_field_name=True)


def read_payload(data: Mapping[str, Any], message_type: type[M]) -> M:
    """A queued payload as its message (`job_payload` wrote it)."""
    message = message_type()
    json_format.ParseDict(dict(data), message)
    return message
