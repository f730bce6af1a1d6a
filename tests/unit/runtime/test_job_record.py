"""The job record in Redis is `engram.v1.Job` itself: typed results straight in its oneof, a
write version beside it, and records from before (pydantic JSON) read as the faces showed them."""

from __future__ import annotations

import json
import typing
from typing import Any

import pytest
from engram.v1 import common_pb2
from google.protobuf import json_format

from services.runtime.job_record import (
    FORMAT,
    RESULT_FIELDS,
    JobResult,
    decode,
    encode,
    result_field,
    set_result,
)

# Records exactly as the queue wrote them before (JobRecord.model_dump_json()), and what every
# face answered for them then (job_to_proto, as REST writes it), taken from that code.
OLD_DONE = (
    b'{"id":"j1","kind":"ingest_files","store":"s","state":"done","progress":{"items_done":2,'
    b'"items_total":3,"units_done":40,"unit":"chunks","message":"2/3 files"},"errors":[{"item_id":'
    b'"f3","code":"invalid_input","message":"f3 is empty"}],"errors_total":1,"error":"attempt 1 '
    b'failed (Unavailable: embedder restarting); retrying",'
    b'"created_at":"2026-01-02T03:04:05.678901Z","started_at":"2026-01-02T03:04:06Z",'
    b'"finished_at":"2026-01-02T03:05:00.250000Z","attempts":2,'
    b'"result":{"type":"engram.v1.IngestResult","value":{"files":3,"failed":1,"chunks":"40"}},'
    b'"cancel_requested":false,"version":9}'
)
OLD_DONE_SHOWN = {
    "id": "j1",
    "kind": "ingest_files",
    "store": "s",
    "state": "JOB_STATE_DONE",
    "progress": {
        "items_done": 2,
        "items_total": 3,
        "units_done": "40",
        "unit": "chunks",
        "message": "2/3 files",
    },
    "errors": [{"item_id": "f3", "code": "invalid_input", "message": "f3 is empty"}],
    "created_at": "2026-01-02T03:04:05.678901Z",
    "started_at": "2026-01-02T03:04:06Z",
    "finished_at": "2026-01-02T03:05:00.250Z",
    "attempts": 2,
    "error": "attempt 1 failed (Unavailable: embedder restarting); retrying",
    "errors_total": 1,
    "ingest": {"files": 3, "failed": 1, "chunks": "40"},
    "result_json": "",
    "cancel_requested": False,
}
OLD_QUEUED = (
    b'{"id":"q1","kind":"compose_drawers","store":"s","state":"queued","progress":{"items_done":0,'
    b'"items_total":0,"units_done":0,"unit":"","message":""},"errors":[],"errors_total":0,'
    b'"error":"","created_at":"2026-01-02T03:04:05Z","started_at":null,"finished_at":null,'
    b'"attempts":0,"result":{},"cancel_requested":false,"version":0}'
)
OLD_QUEUED_SHOWN = {
    "id": "q1",
    "kind": "compose_drawers",
    "store": "s",
    "state": "JOB_STATE_QUEUED",
    "progress": {"items_done": 0, "items_total": 0, "units_done": "0", "unit": "", "message": ""},
    "created_at": "2026-01-02T03:04:05Z",
    "errors": [],
    "attempts": 0,
    "result_json": "",
    "error": "",
    "errors_total": 0,
    "cancel_requested": False,
}
# From before typed results: the summary was plain JSON (and fields at defaults were left out).
OLD_UNTYPED = (
    b'{"id":"j0","kind":"ingest_files","store":"s","state":"cancelled",'
    b'"created_at":"2025-06-01T00:00:00Z","finished_at":"2025-06-01T00:01:00Z","attempts":1,'
    b'"result":{"files":2,"chunks":9},"cancel_requested":true,"version":4}'
)


def _shown(job: common_pb2.Job) -> dict[str, Any]:
    """As REST and SSE write a job (gateway.protojson.to_json)."""
    return json_format.MessageToDict(
        job, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )


@pytest.mark.parametrize(
    ("raw", "shown", "version"),
    [(OLD_DONE, OLD_DONE_SHOWN, 9), (OLD_QUEUED, OLD_QUEUED_SHOWN, 0)],
    ids=["done-typed-result", "queued"],
)
def test_an_old_record_reads_as_every_face_showed_it(
    raw: bytes, shown: dict[str, Any], version: int
) -> None:
    stored = decode(raw)
    assert _shown(stored.job) == shown
    assert stored.version == version
    again = decode(encode(stored.job, stored.version + 1))
    assert _shown(again.job) == shown and again.version == version + 1, "kept in the new format"


def test_an_old_record_from_before_typed_results_keeps_its_summary_as_text() -> None:
    stored = decode(OLD_UNTYPED)
    assert stored.job.WhichOneof("result") is None
    assert json.loads(stored.job.result_json) == {"files": 2, "chunks": 9}
    assert stored.job.state == common_pb2.JOB_STATE_CANCELLED and stored.job.cancel_requested
    assert stored.job.HasField("progress") and not stored.job.HasField("started_at")
    assert stored.version == 4


def test_a_typed_result_goes_straight_into_the_oneof_and_survives_redis() -> None:
    job = common_pb2.Job(id="j1", state=common_pb2.JOB_STATE_DONE)
    set_result(job, common_pb2.IngestResult(files=3, failed=1, chunks=40))
    stored = decode(encode(job, 5))
    assert stored.job.WhichOneof("result") == "ingest"
    assert (stored.job.ingest.files, stored.job.ingest.failed, stored.job.ingest.chunks) == (
        3,
        1,
        40,
    )
    assert stored.job.result_json == "", "no JSON inside the record"
    assert stored.version == 5


def test_a_result_of_defaults_only_is_left_out_as_before() -> None:
    """The old record kept results as JSON, where such a result is `{}` and read back as no
    result at all; the faces answer as they did."""
    job = common_pb2.Job(id="j1", state=common_pb2.JOB_STATE_DONE)
    set_result(job, common_pb2.ConsolidateResult())
    assert job.WhichOneof("result") is None


def test_only_job_result_messages_are_results() -> None:
    with pytest.raises(TypeError, match="not one of the job results"):
        result_field(common_pb2.Drawer(id="x"))
    with pytest.raises(TypeError, match="not one of the job results"):
        result_field({"files": 1})
    with pytest.raises(TypeError, match="not one of the job results"):
        set_result(common_pb2.Job(), common_pb2.Drawer(id="x"))  # type: ignore[arg-type]


def test_the_result_type_is_exactly_the_protos_result_oneof() -> None:
    """`JobResult` (what handlers are typed to return) names every message of `Job`'s
    `result` oneof and nothing else, so the two cannot drift apart."""
    typed = {t.DESCRIPTOR.full_name for t in typing.get_args(JobResult)}
    oneof = common_pb2.Job.DESCRIPTOR.oneofs_by_name["result"].fields
    assert (
        typed == set(RESULT_FIELDS) == {f.message_type.full_name for f in oneof if f.message_type}
    )


def test_fields_a_reader_does_not_know_survive_its_write() -> None:
    """A replica built from an older proto that reads and rewrites a record (a cancel, a
    progress report) keeps the fields a newer one wrote: binary protobuf keeps them."""
    newer_field = b"\x98\x06\x2a"  # field 99 (a varint), 42: no field of today's `Job`
    raw = encode(common_pb2.Job(id="j1"), 1) + newer_field
    stored = decode(raw)
    stored.job.cancel_requested = True
    assert newer_field in encode(stored.job, stored.version + 1)


def test_a_record_in_an_unknown_format_is_refused() -> None:
    assert encode(common_pb2.Job(), 0)[0] == FORMAT
    with pytest.raises(ValueError, match="unknown format"):
        decode(bytes([FORMAT + 1]) + bytes(8))
    with pytest.raises(ValueError, match="unknown format"):
        decode(b"")
