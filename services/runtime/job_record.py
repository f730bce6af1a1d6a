"""How the job queue keeps a job in Redis: the public `engram.v1.Job` message itself.

One shape: what the queue stores, publishes and returns is the `Job` every face answers, so
there is no second model to keep in step with the proto and no conversion on the way out.

The value of `<q>:job:<id>`, and each message on `<q>:events:<id>`, is

    FORMAT (1 byte) | write version (8 bytes, big-endian) | Job as protobuf binary

- The version is the queue's bookkeeping, not something a person is shown: each write grows
  it by one, and a watcher orders and deduplicates what it sees by it (pub/sub messages and
  re-reads can cross). So it sits beside the message, and the public proto has no field for it.
- Protobuf binary rather than proto JSON: a replica built from an older `common.proto` that
  reads a record and writes it back (a cancel, a progress report) keeps the fields it does
  not know, where JSON parsing would refuse or drop them, so a rolling upgrade that adds a
  field to `Job` loses nothing. It is also the cheapest to parse, and every progress report,
  poll and pub/sub message parses one. The cost: `redis-cli GET` shows bytes (`decode` reads
  them).
- Records written before this format (pydantic JSON, see `job_legacy`) begin with "{", a byte
  this format never begins with; they are read through `job_legacy` and written back in this
  format at their next change. Finished records expire after the queue's retention (7 days by
  default) and live ones change as they run, so `job_legacy` can go once no deployment has
  records from before this format.

A finished job's typed result sits in `Job`'s `result` oneof, put there straight from the
message its handler returned (`set_result`).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias

from engram.v1 import common_pb2
from google.protobuf.message import Message

from services.runtime import job_legacy

FORMAT: Final = 1
_HEADER: Final = struct.Struct(">BQ")
_LEGACY_START: Final = b"{"

# What a job handler returns: one of the messages of `Job`'s `result` oneof.
JobResult: TypeAlias = (
    common_pb2.IngestResult
    | common_pb2.ComposeResult
    | common_pb2.ConsolidateResult
    | common_pb2.ReembedResult
)

# A result message's full name -> the `result` oneof field of `Job` that holds it.
RESULT_FIELDS: Final[Mapping[str, str]] = {
    field.message_type.full_name: field.name
    for field in common_pb2.Job.DESCRIPTOR.oneofs_by_name["result"].fields
    if field.message_type is not None
}


@dataclass(frozen=True, slots=True)
class StoredJob:
    """A job as one read from Redis found it: the message and its write version."""

    job: common_pb2.Job
    version: int


def encode(job: common_pb2.Job, version: int) -> bytes:
    """The bytes kept in Redis (and published) for `job` at write `version`."""
    return _HEADER.pack(FORMAT, version) + job.SerializeToString()


def decode(raw: bytes) -> StoredJob:
    """A record as `encode` wrote it, or as the queue wrote it before (see `job_legacy`)."""
    if raw.startswith(_LEGACY_START):
        job, version = job_legacy.read(raw)
        return StoredJob(job, version)
    if len(raw) < _HEADER.size or raw[0] != FORMAT:
        raise ValueError(f"a job record in an unknown format (it begins {raw[:9]!r})")
    _, version = _HEADER.unpack_from(raw)
    return StoredJob(common_pb2.Job.FromString(raw[_HEADER.size :]), version)


def result_field(result: object) -> str:
    """The field of `Job`'s `result` oneof that holds `result`; TypeError when none does."""
    name = result.DESCRIPTOR.full_name if isinstance(result, Message) else type(result).__name__
    field = RESULT_FIELDS.get(name) if isinstance(result, Message) else None
    if field is None:
        raise TypeError(f"{name} is not one of the job results {sorted(RESULT_FIELDS)}")
    return field


def set_result(job: common_pb2.Job, result: JobResult) -> None:
    """Put a handler's result into `job`'s `result` oneof.

    A result with every field at its default is left out, as the queue always did (it kept
    results as JSON, where such a message is `{}` and parsed back to nothing): the faces
    answer exactly as before."""
    field = result_field(result)
    if result.ListFields():
        getattr(job, field).CopyFrom(result)
