"""Job records (services.runtime.jobs) as the `engram.v1.Job` proto every face returns."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final, TypeVar

from engram.v1 import common_pb2
from google.protobuf import json_format
from google.protobuf.message import Message

from services.runtime.jobs import JobRecord, JobState

_STATES = {
    JobState.QUEUED: common_pb2.JOB_STATE_QUEUED,
    JobState.RUNNING: common_pb2.JOB_STATE_RUNNING,
    JobState.DONE: common_pb2.JOB_STATE_DONE,
    JobState.FAILED: common_pb2.JOB_STATE_FAILED,
    JobState.CANCELLED: common_pb2.JOB_STATE_CANCELLED,
}


# A job's typed result, by message: the `result` oneof field of `Job` that holds it.
_RESULT_FIELDS: Final[Mapping[str, str]] = {
    field.message_type.full_name: field.name
    for field in common_pb2.Job.DESCRIPTOR.oneofs_by_name["result"].fields
    if field.message_type is not None
}


def job_result(result: Message) -> dict[str, Any]:
    """What a job handler returns for `result`: one of `Job`'s result messages, kept as JSON
    in the job record (typed again by `job_to_proto`)."""
    name = result.DESCRIPTOR.full_name
    if name not in _RESULT_FIELDS:
        raise TypeError(f"{name} is not one of the job results {sorted(_RESULT_FIELDS)}")
    return {
        "type": name,
        "value": json_format.MessageToDict(result, preserving_proto_field_name=True),
    }


def _set_result(job: common_pb2.Job, result: Mapping[str, Any]) -> None:
    field = _RESULT_FIELDS.get(str(result.get("type", "")))
    if field is None:
        job.result_json = json.dumps(dict(result))  # a job recorded before typed results
        return
    json_format.ParseDict(result.get("value", {}), getattr(job, field))


M = TypeVar("M", bound=Message)


def job_payload(payload: Message) -> dict[str, Any]:
    """A job's payload message as the JSON the queue keeps."""
    return json_format.MessageToDict(payload, preserving_proto_field_name=True)


def read_payload(data: Mapping[str, Any], message_type: type[M]) -> M:
    """A queued payload as its message (`job_payload` wrote it)."""
    message = message_type()
    json_format.ParseDict(dict(data), message)
    return message


def job_to_proto(record: JobRecord) -> common_pb2.Job:
    """The proto of a job record."""
    job = common_pb2.Job(
        id=record.id,
        kind=record.kind,
        store=record.store,
        state=_STATES[record.state],
        progress=common_pb2.JobProgress(
            items_done=record.progress.items_done,
            items_total=record.progress.items_total,
            units_done=record.progress.units_done,
            unit=record.progress.unit,
            message=record.progress.message,
        ),
        errors=[
            common_pb2.JobItemError(item_id=e.item_id, code=e.code, message=e.message)
            for e in record.errors
        ],
        attempts=record.attempts,
        error=record.error,
        errors_total=record.errors_total,
        cancel_requested=record.cancel_requested,
    )
    if record.result:
        _set_result(job, record.result)
    job.created_at.FromDatetime(record.created_at)
    if record.started_at is not None:
        job.started_at.FromDatetime(record.started_at)
    if record.finished_at is not None:
        job.finished_at.FromDatetime(record.finished_at)
    return job
