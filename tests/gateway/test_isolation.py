"""Store isolation on the faces the route and RPC matrices (test_auth.py, test_grpc.py) do not
walk: every MCP tool and every streaming RPC of the public gRPC API, called by an admin token
scoped to store A with arguments naming store B, is refused; store B is unchanged after.

Arguments are generated from each tool's own input schema (required fields filled with a
value of their type), so a new tool joins the matrix without an edit here."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
from engram.v1 import common_pb2, corpus_pb2, gateway_pb2, gateway_pb2_grpc, retrieval_pb2

from tests.gateway.conftest import Api
from tests.gateway.test_drawers_search import FACTS, _seed
from tests.gateway.test_grpc import bearer
from tests.gateway.test_mcp import _error, connect

# The one tool that names no store: it lists the token's own stores (test_mcp checks that).
STORELESS = {"engram_list_stores"}
# Tools scoped by a job (GetJob): asked for store B's job.
BY_JOB = {"engram_job_status"}


def _value(schema: dict[str, Any]) -> Any:
    """A value the schema accepts: the first enum value, the first of alternatives, an object
    with its required fields, a string as long as it must be."""
    for alternatives in ("oneOf", "anyOf"):
        if alternatives in schema:
            merged = {k: v for k, v in schema.items() if k != alternatives}
            first = schema[alternatives][0]
            required = [*merged.get("required", []), *first.get("required", [])]
            return _value({**merged, **first, "required": required})
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next(k for k in kind if k != "null")
    if kind == "object" or "properties" in schema:
        return _filled(schema)
    if kind == "string":
        return "x" * max(int(schema.get("minLength", 1)), 1)
    return {"integer": 1, "number": 0.5, "boolean": False, "array": []}.get(kind, "x")


def _filled(schema: dict[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties", {})
    return {name: _value(properties[name]) for name in schema.get("required", [])}


def _arguments(schema: dict[str, Any], store: str) -> dict[str, Any]:
    return {**_value(schema), "store": store}


async def _drawer_count(api: Api, store: str) -> int:
    stats = await api.client.get(f"/v1/stores/{store}/stats", headers=api.admin)
    return int(stats.json()["drawers"])


async def _job_of(api: Api, store: str) -> str:
    """An ingest job of `store`."""
    uploaded = await api.client.post(
        f"/v1/stores/{store}/files",
        files={"file": ("b.md", b"# B\n\nStore B only.\n")},
        headers=api.admin,
    )
    job = await api.client.post(
        f"/v1/stores/{store}/ingest", json={"file_ids": [uploaded.json()["id"]]}, headers=api.admin
    )
    assert job.status_code == 202, job.text
    job_id: str = job.json()["id"]
    return job_id


async def test_every_mcp_tool_refuses_another_store(api: Api, store_name: str) -> None:
    other = f"{store_name}-b"
    await api.create_store(store_name)
    await _seed(api, other)
    job_id = await _job_of(api, other)
    refused, walked = [], 0
    async with connect(api, "admin", store_name) as client:
        tools = (await client.list_tools()).tools
        for tool in tools:
            if tool.name in STORELESS:
                continue
            walked += 1
            if tool.name in BY_JOB:
                arguments = {"id": job_id}
            else:
                assert "store" in tool.input_schema["properties"], f"{tool.name} names no store"
                arguments = _arguments(tool.input_schema, other)
            result = await client.call_tool(tool.name, arguments)
            message = _error(result) if result.is_error else "answered"
            if not message.startswith("permission_denied:"):
                refused.append(f"{tool.name}: {message[:160]}")
    assert walked >= 20, f"only {walked} tools walked"
    assert not refused, "tools that did not refuse store B:\n" + "\n".join(refused)
    assert await _drawer_count(api, other) == len(FACTS), "store B is unchanged"


async def _refusal(call: Any) -> grpc.StatusCode:
    try:
        if hasattr(call, "__aiter__"):
            async for _ in call:
                pass
        else:
            await call
    except grpc.aio.AioRpcError as error:
        return error.code()
    return grpc.StatusCode.OK


async def _one(message: Any) -> AsyncIterator[Any]:
    yield message


async def test_every_streaming_rpc_refuses_another_store(
    api: Api, engram: gateway_pb2_grpc.EngramStub, store_name: str
) -> None:
    other = f"{store_name}-b"
    await api.create_store(store_name)
    await _seed(api, other)
    job_id = await _job_of(api, other)
    token = bearer(await api.token("admin", store_name))
    b = common_pb2.StoreContext(name=other)
    calls = {
        "ExportDrawers": lambda: engram.ExportDrawers(
            retrieval_pb2.ExportDrawersRequest(store=b), metadata=token
        ),
        "ImportDrawers": lambda: engram.ImportDrawers(
            _one(retrieval_pb2.ImportDrawersChunk(store=b, jsonl=b"{}\n")), metadata=token
        ),
        "UploadFile": lambda: engram.UploadFile(
            _one(
                corpus_pb2.UploadFileChunk(header=corpus_pb2.UploadFileHeader(store=b, name="b.md"))
            ),
            metadata=token,
        ),
        "BackupStore": lambda: engram.BackupStore(
            common_pb2.BackupStoreRequest(store=b), metadata=token
        ),
        "RestoreStore": lambda: engram.RestoreStore(
            _one(common_pb2.ArchiveChunk(store=common_pb2.StoreContext(name=f"{other}-copy"))),
            metadata=token,
        ),
    }
    streaming = {
        m.name
        for m in gateway_pb2.DESCRIPTOR.services_by_name["Engram"].methods
        if m.client_streaming or m.server_streaming
    }
    # WatchJob is scoped by the job's store: it is asked for store B's ingest job below.
    assert streaming - set(calls) == {"WatchJob"}, "a streaming RPC missing from this matrix"
    failures = []
    for name, make in calls.items():
        code = await _refusal(make())
        if code != grpc.StatusCode.PERMISSION_DENIED:
            failures.append(f"{name}: {code.name}")
    watch = await _refusal(engram.WatchJob(gateway_pb2.GetJobRequest(id=job_id), metadata=token))
    if watch != grpc.StatusCode.PERMISSION_DENIED:
        failures.append(f"WatchJob: {watch.name}")
    assert not failures, "streams that did not refuse store B: " + ", ".join(failures)
    assert await _drawer_count(api, other) == len(FACTS), "store B is unchanged"
