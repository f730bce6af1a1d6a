"""A compose job's queued payload: typed, and readable when an earlier version queued it."""

from __future__ import annotations

import base64
import json

from engram.v1 import authoring_pb2, common_pb2

from services.authoring.compose import compose_payload
from services.runtime.job_proto import job_payload

STORE = common_pb2.StoreContext(
    name="s", deployment_mode=common_pb2.DEPLOYMENT_MODE_COMPANION, caller_tier=2
)


def test_a_payload_survives_the_queue_as_json() -> None:
    sent = authoring_pb2.ComposeJobPayload(
        store=STORE, sessions=["a", "b"], replace_existing=True, allow_new_wing=False
    )
    sent.sessions_by_file["f1"].ids.extend(["a"])
    queued = json.loads(json.dumps(job_payload(sent)))
    assert compose_payload(queued) == sent


def test_a_payload_queued_by_an_earlier_version_is_read() -> None:
    legacy = {
        "store": base64.b64encode(STORE.SerializeToString()).decode(),
        "sessions": ["a", "b"],
        "files": {"f1": ["a"]},
        "replace_existing": False,
        "allow_new_wing": True,
    }
    read = compose_payload(legacy)
    assert read.store == STORE and list(read.sessions) == ["a", "b"]
    assert list(read.sessions_by_file["f1"].ids) == ["a"] and read.allow_new_wing
