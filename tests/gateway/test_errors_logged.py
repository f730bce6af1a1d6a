"""Every 5xx leaves a trace: with the retrieval tier unreachable, the gateway answers 503 with a
readable message, and its log holds the failure with where it surfaced and a traceback."""

from __future__ import annotations

import dataclasses
import logging
import socket
from pathlib import Path

import pytest

from tests.gateway.conftest import Tiers, gateway_settings, running_gateway


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])  # closed again when the block ends


async def test_a_tier_that_does_not_answer_is_a_logged_503(
    tiers: Tiers, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dead = dataclasses.replace(tiers, retrieval_addr=f"127.0.0.1:{_closed_port()}")
    settings = gateway_settings(dead, tmp_path, tier_deadline_s=3.0)
    caplog.set_level(logging.ERROR, logger="gateway.errors")
    async with running_gateway(settings) as api:
        created = await api.client.post(
            "/v1/stores", json={"spec": {"name": "anything"}}, headers=api.admin
        )
        answer = created
        if created.status_code < 500:  # the registry may not need the retrieval tier
            answer = await api.client.post(
                "/v1/stores/anything/search", json={"query": "is anyone there"}, headers=api.admin
            )
    assert answer.status_code == 503, answer.text
    assert answer.json()["error"]["message"], "a 503 says what failed"
    logged = [r for r in caplog.records if r.name == "gateway.errors" and "503" in r.getMessage()]
    assert logged, f"no log line for the 503: {[r.getMessage() for r in caplog.records]}"
    assert logged[0].exc_info is not None, "the 503 is logged with its traceback"
    assert "/v1/stores" in logged[0].getMessage()
