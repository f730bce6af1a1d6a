"""Job records as the queue wrote them before it kept `engram.v1.Job` itself: pydantic JSON.

Such records may still sit in a deployment's Redis (a finished one for the queue's retention,
a queued one until it runs), and an older replica may still publish them during a rolling
upgrade, so `job_record.decode` reads them through here. They are never written any more.

Their fields were the proto's, name for name, with three differences: `state` by lowercase
name ("queued"), timestamps as RFC 3339 text (null when unset), and `result` as JSON, either
`{"type": <result message>, "value": <its proto JSON>}` or, from before typed results, a
plain summary (shown as `result_json`); plus the write `version`. Each job is read to what
the faces answered for it then, field for field.
"""

from __future__ import annotations

import json
from typing import Any

from engram.v1 import common_pb2
from google.protobuf import json_format


def read(raw: bytes) -> tuple[common_pb2.Job, int]:
    """The job in an old record, and the record's write version."""
    data: dict[str, Any] = json.loads(raw)
    version = int(data.pop("version", 0))
    result: dict[str, Any] = data.pop("result", None) or {}
    data["state"] = f"JOB_STATE_{data['state'].upper()}"
    job = json_format.ParseDict(data, common_pb2.Job())
    job.progress.SetInParent()  # every old record had one, and every face showed it
    if result:
        _set_result(job, result)
    return job, version


def _set_result(job: common_pb2.Job, result: dict[str, Any]) -> None:
    for field in common_pb2.Job.DESCRIPTOR.oneofs_by_name["result"].fields:
        if field.message_type is not None and field.message_type.full_name == result.get("type"):
            json_format.ParseDict(result.get("value", {}), getattr(job, field.name))
            return
    job.result_json = json.dumps(result)  # a job recorded before typed results
