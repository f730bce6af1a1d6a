"""Job records (services.runtime.jobs) as the `engram.v1.Job` proto every face returns."""

from __future__ import annotations

import json

from engram.v1 import common_pb2

from services.runtime.jobs import JobRecord, JobState

_STATES = {
    JobState.QUEUED: common_pb2.JOB_STATE_QUEUED,
    JobState.RUNNING: common_pb2.JOB_STATE_RUNNING,
    JobState.DONE: common_pb2.JOB_STATE_DONE,
    JobState.FAILED: common_pb2.JOB_STATE_FAILED,
    JobState.CANCELLED: common_pb2.JOB_STATE_CANCELLED,
}


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
            units_done=int(record.progress.units_done),
            unit=record.progress.unit,
            message=record.progress.message,
        ),
        errors=[
            common_pb2.JobItemError(item_id=e.item_id, code=e.code, message=e.message)
            for e in record.errors
        ],
        attempts=record.attempts,
        result_json=json.dumps(record.result) if record.result else "",
        error=record.error,
        errors_total=record.errors_total,
        cancel_requested=record.cancel_requested,
    )
    job.created_at.FromDatetime(record.created_at)
    if record.started_at is not None:
        job.started_at.FromDatetime(record.started_at)
    if record.finished_at is not None:
        job.finished_at.FromDatetime(record.finished_at)
    return job
