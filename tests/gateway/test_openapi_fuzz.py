"""Schemathesis over the gateway's own OpenAPI document, against a gateway served by uvicorn
over the real tiers: generated valid and invalid requests for every operation must never
be answered with a 5xx, and every answer must match the schema the document declares.

The example count is bounded (`EXAMPLES` per operation and generation mode) so CI stays
fast; the store path parameter is pinned to a store that exists, so generated requests
reach the tiers instead of stopping at 404. Store deletion is left out: one generated
`confirm=true` would delete the store every later request is aimed at (it has its own
tests in test_stores.py)."""

from __future__ import annotations

import asyncio
import json
import traceback
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
)

from tests.gateway.conftest import ADMIN_TOKEN, Served, Tiers, gateway_settings, served_gateway

EXAMPLES = 10
FUZZ_STORE = "gw-fuzz"
LEFT_OUT = {("DELETE", "/v1/stores/{store}")}
CHECKS = [not_a_server_error, response_schema_conformance, content_type_conformance]


@schemathesis.serializer("application/x-ndjson")
def _ndjson(context: schemathesis.SerializationContext, value: Any) -> bytes:
    """The drawer import body: the generated text as it is, anything else as one JSON line."""
    return (
        value.encode("utf-8", "surrogatepass")
        if isinstance(value, str)
        else json.dumps(value).encode()
    )


@pytest.fixture(scope="module")
async def served(tiers: Tiers, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    settings_ = gateway_settings(tiers, tmp_path_factory.mktemp("gateway-fuzz"))
    async with served_gateway(settings_) as running:
        created = await running.api.client.post(
            "/v1/stores", json={"spec": {"name": FUZZ_STORE}}, headers=running.api.admin
        )
        assert created.status_code == 201, created.text
        yield running


def _cases(
    operation: schemathesis.APIOperation,
    mode: GenerationMode,
    call: Callable[[schemathesis.Case], Any],
    statuses: set[int],
) -> None:
    """Generate and send one operation's cases in one mode; raises the first failure."""
    pinned = {"store": FUZZ_STORE} if "{store}" in operation.path else None

    @given(case=operation.as_strategy(generation_mode=mode, path_parameters=pinned))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def check(case: schemathesis.Case) -> None:
        response = call(case)
        statuses.add(response.status_code)
        case.validate_response(response, checks=CHECKS)

    check()


def _fuzz(url: str, spec: dict[str, Any], statuses: dict[str, set[int]]) -> list[str]:
    """Run every operation's generated cases; returns one line per failing operation and
    fills `statuses` (operation → the statuses it answered with)."""
    schema = schemathesis.openapi.from_dict(spec)
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    failures: list[str] = []
    with requests.Session() as session:

        def call(case: schemathesis.Case) -> Any:
            return case.call(base_url=url, session=session, headers=headers)

        for result in schema.get_all_operations():
            operation = result.ok()
            if (operation.method.upper(), operation.path) in LEFT_OUT:
                continue
            seen = statuses.setdefault(operation.label, set())
            for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
                try:
                    _cases(operation, mode, call, seen)
                except Unsatisfiable:  # nothing to make invalid (no parameters, no body)
                    continue
                except Exception as error:  # collect every operation's failure, then report
                    lines = traceback.format_exception_only(error)
                    failures.append(f"{operation.label} [{mode.value}]: {''.join(lines)[:2000]}")
    return failures


@pytest.mark.slow
async def test_generated_requests_get_no_5xx_and_answers_match_the_schema(
    served: Served,
) -> None:
    spec = (await served.api.client.get("/openapi.json")).json()
    operations = sum(len(methods) for methods in spec["paths"].values())
    assert operations >= 50, f"only {operations} operations in the OpenAPI document"
    # Schemathesis calls synchronously; the tiers and the gateway serve on this event loop.
    statuses: dict[str, set[int]] = {}
    failures = await asyncio.to_thread(_fuzz, served.url, spec, statuses)
    assert not failures, "\n\n".join(failures)
    # The run must have reached the tiers, not stopped at the door: most operations answered
    # a generated request with success, and invalid ones were refused with a 4xx.
    succeeded = sorted(op for op, codes in statuses.items() if any(c < 300 for c in codes))
    refused = sorted(op for op, codes in statuses.items() if any(400 <= c < 500 for c in codes))
    assert len(statuses) >= operations - len(LEFT_OUT), sorted(statuses)
    assert len(succeeded) >= operations // 2, f"only these succeeded: {succeeded}"
    assert len(refused) >= operations // 2, f"only these refused anything: {refused}"
