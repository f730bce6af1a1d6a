"""The three faces refuse the same calls: for every operation an MCP tool serves, a read,
write and admin token, scoped to the store the call names or to another one, is refused (or
let through) alike by REST, by public gRPC and by MCP, and exactly where the operation
table's tier and the token's scope say.

REST and gRPC walk their whole surfaces in their own matrices (test_auth, test_grpc); this one
holds the faces against each other. Each face gets a call it accepts as well-formed (MCP
checks arguments against the tool's schema first, so its arguments are made from that schema),
so a refusal seen here is the permission check and nothing else."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import jsonschema  # type: ignore[import-untyped]
import mcp_types as types
import pytest
from engram.v1 import corpus_pb2, gateway_pb2, gateway_pb2_grpc
from fastapi.routing import APIRoute, iter_route_contexts
from google.protobuf import message_factory
from mcp import Client

from gateway.core.operations import OPERATIONS, REQUIRED_TIER
from gateway.core.principal import Tier
from gateway.mcp.server import build_server
from gateway.mcp.tools import build_tools, input_schema
from tests.gateway.conftest import TIERS, Api

IN_STORE, OUT_STORE = "gw-faces-in", "gw-faces-out"
UPLOAD = b"# Faces\n\nA tiny file the three faces upload.\n"
# Operations scoped by the store of the job they name, not by a store in the request.
JOB_SCOPED = {"get_job"}
UNSCOPED = {"list_stores"}


def _example(schema: dict[str, Any], name: str = "") -> Any:
    """The smallest instance `schema` accepts (required properties only)."""
    if "enum" in schema:
        return next((value for value in schema["enum"] if value), schema["enum"][0])
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        return {key: _example(properties[key], key) for key in schema.get("required", [])}
    if kind == "array":
        return [_example(schema.get("items", {}), name)]
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return False
    return "x" * max(int(schema.get("minLength", 1)), 12)


def _mcp_arguments(tool: str, schema: dict[str, Any], job_id: str) -> dict[str, Any]:
    arguments: dict[str, Any] = _example(schema)
    if "store" in schema.get("properties", {}):
        arguments["store"] = IN_STORE
    if tool == "engram_upload_file":
        arguments["content"] = UPLOAD.decode()
    if tool == "engram_job_status":
        arguments["id"] = job_id
    return arguments


def _rest_route(api: Api, operation: str) -> tuple[str, str]:
    for route in iter_route_contexts(api.app.routes):
        original = route.original_route
        if isinstance(original, APIRoute) and original.name == operation:
            return sorted(original.methods)[0], original.path
    raise AssertionError(f"operation {operation} has no REST route")


async def _rest_denied(api: Api, operation: str, headers: dict[str, str], job_id: str) -> bool:
    method, template = _rest_route(api, operation)
    path = template.replace("{store}", IN_STORE).replace("{id}", job_id)
    path = re.sub(r"\{[a-z_]+\}", "x", path)
    kwargs: dict[str, Any] = {"headers": headers}
    if operation == "upload_file":
        kwargs["files"] = {"file": ("faces.md", UPLOAD)}
    elif method in ("POST", "PUT", "PATCH"):
        kwargs["json"] = {}
    status = (await api.client.request(method, path, **kwargs)).status_code
    assert status != 401, f"REST {method} {path}: a valid token was not authenticated"
    return status == 403


def _grpc_request(operation: str, job_id: str) -> Any:
    rpc = OPERATIONS[operation]
    request = message_factory.GetMessageClass(
        gateway_pb2.DESCRIPTOR.services_by_name["Engram"].methods_by_name[rpc.rpc].input_type
    )()
    if operation == "get_job":
        request.id = job_id
    elif operation == "get_store":
        request.name = IN_STORE
    elif "store" in request.DESCRIPTOR.fields_by_name:
        request.store.name = IN_STORE
    return request


async def _grpc_denied(
    engram: gateway_pb2_grpc.EngramStub, operation: str, token: str, job_id: str
) -> bool:
    rpc = getattr(engram, OPERATIONS[operation].rpc)
    metadata = (("authorization", f"Bearer {token}"),)
    if operation == "upload_file":
        header = corpus_pb2.UploadFileHeader(name="faces.md")
        header.store.name = IN_STORE

        def chunks() -> Iterator[corpus_pb2.UploadFileChunk]:
            yield corpus_pb2.UploadFileChunk(header=header)
            yield corpus_pb2.UploadFileChunk(data=UPLOAD)

        call = rpc(chunks(), metadata=metadata)
    else:
        call = rpc(_grpc_request(operation, job_id), metadata=metadata)
    try:
        await call
        return False
    except grpc.aio.AioRpcError as error:
        assert error.code() != grpc.StatusCode.UNAUTHENTICATED, f"gRPC {operation}: {error}"
        return error.code() == grpc.StatusCode.PERMISSION_DENIED


def _mcp_denied(result: types.CallToolResult, tool: str) -> bool:
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert not text.text.startswith("unauthenticated"), f"MCP {tool}: {text.text}"
    return bool(result.is_error) and text.text.startswith("permission_denied")


@pytest.fixture
async def engram(api: Api) -> AsyncIterator[gateway_pb2_grpc.EngramStub]:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{api.app.state.grpc_port}") as channel:
        yield gateway_pb2_grpc.EngramStub(channel)


@contextlib.asynccontextmanager
async def _mcp(api: Api, token: str) -> AsyncIterator[Client]:
    gateway = api.app.state.gateway
    server = build_server(lambda: gateway, principal=gateway.authenticate(token))
    async with Client(server) as client:
        yield client


@pytest.fixture
async def job_id(api: Api) -> str:
    """A job of the in-scope store (job status is scoped by its job's store)."""
    for name in (IN_STORE, OUT_STORE):
        if (await api.client.get(f"/v1/stores/{name}", headers=api.admin)).status_code == 404:
            await api.create_store(name)
    uploaded = await api.client.post(
        f"/v1/stores/{IN_STORE}/files", files={"file": ("f.md", UPLOAD)}, headers=api.admin
    )
    job = await api.client.post(
        f"/v1/stores/{IN_STORE}/ingest",
        json={"file_ids": [uploaded.json()["id"]]},
        headers=api.admin,
    )
    assert job.status_code == 202, job.text
    identifier: str = job.json()["id"]
    return identifier


async def test_rest_grpc_and_mcp_refuse_the_same_calls(
    api: Api, engram: gateway_pb2_grpc.EngramStub, job_id: str
) -> None:
    tools = build_tools()
    assert {tool.operation for tool in tools} <= set(OPERATIONS)
    failures: list[str] = []
    walked = 0
    for tier in TIERS:
        for scope in ("in", "out"):
            token = await api.token(tier, IN_STORE if scope == "in" else OUT_STORE)
            async with _mcp(api, token) as client:
                for tool in tools:
                    operation = tool.operation
                    schema = input_schema(tool)
                    arguments = _mcp_arguments(tool.name, schema, job_id)
                    jsonschema.validate(arguments, schema)  # MCP's own check lets it through
                    seen = {
                        "REST": await _rest_denied(api, operation, api.auth(token), job_id),
                        "gRPC": await _grpc_denied(engram, operation, token, job_id),
                        "MCP": _mcp_denied(await client.call_tool(tool.name, arguments), tool.name),
                    }
                    too_low = Tier[tier.upper()] < REQUIRED_TIER[operation]
                    due = too_low or (scope == "out" and operation not in UNSCOPED)
                    walked += 1
                    wrong = {face: denied for face, denied in seen.items() if denied != due}
                    if wrong:
                        failures.append(
                            f"{tier}/{scope}-scope {tool.name} ({operation}): "
                            f"{'denial' if due else 'no denial'} expected, faces saw "
                            + ", ".join(
                                f"{f}: {'denied' if d else 'let through'}" for f, d in seen.items()
                            )
                        )
    assert walked == len(tools) * len(TIERS) * 2
    assert not failures, "\n".join(failures)


def test_job_scoped_operations_are_named_here() -> None:
    """The job-scoped set above is the table's: an operation with a job id and no store."""
    job_scoped = {
        name
        for name, op in OPERATIONS.items()
        if name in {t.operation for t in build_tools()} and op.request == "engram.v1.GetJobRequest"
    }
    assert job_scoped == JOB_SCOPED
