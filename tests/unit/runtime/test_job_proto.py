"""Job records as the `engram.v1.Job` proto: typed results by kind, old records readable."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from engram.v1 import common_pb2

from services.runtime.job_proto import job_result, job_to_proto
from services.runtime.jobs import JobItemError, JobProgress, JobRecord, JobState


def _record(result: dict[str, object]) -> JobRecord:
    return JobRecord(
        id="j1",
        kind="ingest_files",
        store="s",
        state=JobState.DONE,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
        result=result,
    )


def test_a_typed_result_comes_back_typed_and_survives_json() -> None:
    stored = job_result(common_pb2.IngestResult(files=3, failed=1, chunks=40))
    json.dumps(stored)  # the record keeps it as plain JSON
    job = job_to_proto(_record(json.loads(json.dumps(stored))))
    assert job.WhichOneof("result") == "ingest"
    assert (job.ingest.files, job.ingest.failed, job.ingest.chunks) == (3, 1, 40)
    assert job.result_json == "", "no JSON inside the JSON"


def test_a_record_from_before_typed_results_keeps_its_summary_as_text() -> None:
    job = job_to_proto(_record({"files": 2, "chunks": 9}))
    assert job.WhichOneof("result") is None
    assert json.loads(job.result_json) == {"files": 2, "chunks": 9}


def test_only_job_result_messages_are_results() -> None:
    with pytest.raises(TypeError, match="not one of the job results"):
        job_result(common_pb2.Drawer(id="x"))


def test_the_queue_record_holds_exactly_the_proto_job() -> None:
    """The queue keeps its record as JSON in Redis (with its own write version and the typed
    result as JSON); every other field is the public `Job`'s, by name, and nothing of the
    proto is missing from it, so the two cannot drift apart."""
    queue_only = {"version", "result"}
    proto_only = {
        "result_json",
        *(f.name for f in common_pb2.Job.DESCRIPTOR.oneofs_by_name["result"].fields),
    }
    record_fields = set(JobRecord.model_fields) - queue_only
    job_fields = {f.name for f in common_pb2.Job.DESCRIPTOR.fields} - proto_only
    assert record_fields == job_fields, (
        f"record only: {record_fields - job_fields}, proto only: {job_fields - record_fields}"
    )
    for model, message in (
        (JobProgress, common_pb2.JobProgress),
        (JobItemError, common_pb2.JobItemError),
    ):
        assert set(model.model_fields) == {f.name for f in message.DESCRIPTOR.fields}, (
            message.DESCRIPTOR.name
        )
