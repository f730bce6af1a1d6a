"""Job records as the `engram.v1.Job` proto: typed results by kind, old records readable."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from engram.v1 import common_pb2

from services.runtime.job_proto import job_result, job_to_proto
from services.runtime.jobs import JobRecord, JobState


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
