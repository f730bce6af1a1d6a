"""The public gRPC face (`engram.v1.Engram`) against the real stack: every RPC is a Gateway
operation with a tier, auth from the `authorization` metadata, refusals as the core raises
them, streamed uploads, JSONL transfer and job progress, health."""

from __future__ import annotations

import json
import typing
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from engram.v1 import (
    authoring_pb2,
    common_pb2,
    corpus_pb2,
    gateway_pb2,
    gateway_pb2_grpc,
    retrieval_pb2,
)
from google.protobuf import message_factory
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from gateway.core.operations import OPERATIONS, REQUIRED_TIER, operation_name
from gateway.core.principal import Tier
from gateway.core.service import Gateway
from gateway.rpc.servicer import SERVICE, EngramServicer
from gateway.settings import GatewaySettings
from services.runtime.grpc_server import STATUS_DETAILS_KEY
from tests.gateway.conftest import ADMIN_TOKEN, Api, Tiers, gateway_settings, running_gateway

DECISION = (
    "The Architect decided that the gateway only translates between faces and never holds "
    "business logic of its own."
)
SIGNATURE = "the gateway only translates"
NOTES = (
    b"# Release process\n\n"
    b"Every release is cut from main after the integration suite passes.\n\n"
    b"## Rollback\n\nA failed deploy is rolled back by redeploying the previous tag.\n"
)
TERMINAL = (common_pb2.JOB_STATE_DONE, common_pb2.JOB_STATE_FAILED, common_pb2.JOB_STATE_CANCELLED)


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


ADMIN = bearer(ADMIN_TOKEN)


def store(name: str) -> common_pb2.StoreContext:
    return common_pb2.StoreContext(name=name)


async def create_store(engram: gateway_pb2_grpc.EngramStub, name: str) -> None:
    spec = gateway_pb2.StoreSpec(name=name)
    await engram.CreateStore(gateway_pb2.CreateStoreRequest(spec=spec), metadata=ADMIN)


def signed_write(name: str) -> authoring_pb2.AddDrawerSignedRequest:
    return authoring_pb2.AddDrawerSignedRequest(
        store=store(name),
        drawer=authoring_pb2.DrawerDraft(
            content=DECISION,
            memory_type="decision",
            wing="projects",
            room="projects/engram",
            added_by="The Architect",
        ),
        signature=SIGNATURE,
        allow_new_wing=True,
        reason="written over the public gRPC API",
    )


async def refusal(call: typing.Awaitable[object]) -> grpc.aio.AioRpcError:
    """The error `call` ends with (a call that succeeds fails the test)."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return caught.value


async def drawer_count(engram: gateway_pb2_grpc.EngramStub, name: str) -> int:
    stats = await engram.Stats(retrieval_pb2.StatsRequest(store=store(name)), metadata=ADMIN)
    return int(stats.drawers)


# ---------------------------------------------------------------- the service ↔ the core


def test_every_rpc_is_a_gateway_operation_with_a_tier() -> None:
    operations = {operation_name(m.name): m for m in SERVICE.methods}
    # Forwarded operations have no method of their own (tests/unit/gateway/test_operations.py
    # checks them against the serving tier's RPC); the rest must be written in the gateway.
    written = {o for o, op in OPERATIONS.items() if op.served_by == "gateway"}
    no_method = sorted(o for o in written if not callable(getattr(Gateway, o, None)))
    assert not no_method, f"gateway-served RPCs with no Gateway method: {no_method}"
    no_tier = sorted(set(operations) - set(REQUIRED_TIER))
    assert not no_tier, f"RPCs of engram.v1.Engram with no REQUIRED_TIER entry: {no_tier}"
    no_rpc = sorted(set(REQUIRED_TIER) - set(operations))
    assert not no_rpc, f"REQUIRED_TIER operations engram.v1.Engram does not serve: {no_rpc}"

    streams = [m.name for m in SERVICE.methods if m.client_streaming or m.server_streaming]
    unhandled = [name for name in streams if not hasattr(EngramServicer, name)]
    assert not unhandled, f"streaming RPCs with no handler in EngramServicer: {unhandled}"


def test_unary_rpcs_carry_the_messages_the_gateway_takes_and_answers() -> None:
    mismatched = []
    for method in SERVICE.methods:
        if method.client_streaming or method.server_streaming:
            continue
        operation = getattr(Gateway, operation_name(method.name), None)
        if operation is None:
            continue  # forwarded as declared: same messages as the tier's RPC by construction
        hints = typing.get_type_hints(operation)
        expected = (
            message_factory.GetMessageClass(method.input_type),
            message_factory.GetMessageClass(method.output_type),
        )
        if (hints["request"], hints["return"]) != expected:
            mismatched.append(
                f"{method.name}: RPC {method.input_type.name} -> {method.output_type.name}, "
                f"Gateway {hints['request'].__name__} -> {hints['return'].__name__}"
            )
    assert not mismatched, "RPC messages differ from the Gateway method's:\n" + "\n".join(
        mismatched
    )


def test_grpc_port_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_GATEWAY_GRPC_PORT", "50999")
    monkeypatch.setenv("ENGRAM_GATEWAY_GRPC_ENABLED", "false")
    settings = GatewaySettings()
    assert (settings.grpc_port, settings.grpc_enabled) == (50999, False)


# ---------------------------------------------------------------- serving


async def test_health_reports_the_engram_service_serving(api: Api) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{api.app.state.grpc_port}") as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", "engram.v1.Engram"):
            answer = await health.Check(health_pb2.HealthCheckRequest(service=service))
            assert answer.status == health_pb2.HealthCheckResponse.SERVING, (
                f"health of {service or 'the server'!r}: expected SERVING, got {answer.status}"
            )


async def test_grpc_can_be_turned_off(tiers: Tiers, tmp_path: Path) -> None:
    settings = gateway_settings(tiers, tmp_path / "data", grpc_enabled=False)
    async with running_gateway(settings) as off:
        assert off.app.state.grpc_port is None, "grpc_enabled=False still bound a gRPC port"


# ---------------------------------------------------------------- auth


async def test_no_or_bad_token_is_unauthenticated(engram: gateway_pb2_grpc.EngramStub) -> None:
    request = gateway_pb2.ListStoresRequest()
    for metadata in ((), bearer("egm_not-a-real-token"), (("authorization", ADMIN_TOKEN),)):
        error = await refusal(engram.ListStores(request, metadata=metadata))
        assert error.code() == grpc.StatusCode.UNAUTHENTICATED, (
            f"metadata {[k for k, _ in metadata]}: expected UNAUTHENTICATED, got "
            f"{error.code().name}: {error.details()}"
        )
        assert "Bearer <token>" in error.details() or "not valid" in error.details()


async def test_read_token_cannot_write(
    api: Api, engram: gateway_pb2_grpc.EngramStub, store_name: str
) -> None:
    await create_store(engram, store_name)
    read = bearer(await api.token("read", store_name))
    error = await refusal(engram.AddDrawerSigned(signed_write(store_name), metadata=read))
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED, (
        f"a read token writing: expected PERMISSION_DENIED, got {error.code().name}"
    )
    assert await drawer_count(engram, store_name) == 0, "a refused write changed the store"


async def test_token_scoped_to_another_store_is_refused(
    api: Api, engram: gateway_pb2_grpc.EngramStub, store_name: str
) -> None:
    other = f"{store_name}-other"
    await create_store(engram, store_name)
    await create_store(engram, other)
    scoped = bearer(await api.token("admin", other))
    search = retrieval_pb2.SearchRequest(store=store(store_name), query="gateway")
    error = await refusal(engram.Search(search, metadata=scoped))
    assert error.code() == grpc.StatusCode.PERMISSION_DENIED, (
        f"a token of {other!r} reading {store_name!r}: expected PERMISSION_DENIED, "
        f"got {error.code().name}"
    )
    assert store_name in error.details() or "scope" in error.details(), error.details()


# ---------------------------------------------------------------- operations


async def test_signed_write_is_found_by_search(
    api: Api, engram: gateway_pb2_grpc.EngramStub, store_name: str
) -> None:
    await create_store(engram, store_name)
    write = bearer(await api.token("write", store_name))
    written = await engram.AddDrawerSigned(signed_write(store_name), metadata=write)
    assert written.drawer.signature == SIGNATURE

    read = bearer(await api.token("read", store_name))
    query = "does the gateway hold business logic?"
    found = await engram.Search(
        retrieval_pb2.SearchRequest(store=store(store_name), query=query), metadata=read
    )
    assert [hit.drawer.id for hit in found.results] == [written.drawer.id], (
        f"search for {query!r} should find the drawer just written; got {found}"
    )
    metrics = (await api.client.get("/metrics")).text
    counted = 'engram_grpc_requests_total{code="OK",method="Search",tier="gateway"}'
    assert counted in metrics, "/metrics does not count the public gRPC face's Search calls"


async def test_bad_request_is_invalid_argument_with_a_readable_message(
    api: Api, engram: gateway_pb2_grpc.EngramStub, store_name: str
) -> None:
    await create_store(engram, store_name)
    read = bearer(await api.token("read", store_name))
    empty = retrieval_pb2.SearchRequest(store=store(store_name), query="")
    error = await refusal(engram.Search(empty, metadata=read))
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, (
        f"an empty query: expected INVALID_ARGUMENT, got {error.code().name}: {error.details()}"
    )
    assert "query" in error.details(), f"the message should name the query: {error.details()!r}"

    details = dict(error.trailing_metadata() or ()).get(STATUS_DETAILS_KEY)
    assert details, "the refusal carries no google.rpc.Status details"
    status = status_pb2.Status.FromString(details)
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    assert info.reason == "invalid_input", info


async def test_upload_stream_then_ingest_job_watched_to_done(
    api: Api, engram: gateway_pb2_grpc.EngramStub, store_name: str
) -> None:
    await create_store(engram, store_name)
    write = bearer(await api.token("write", store_name))

    def chunks() -> Iterator[corpus_pb2.UploadFileChunk]:
        header = corpus_pb2.UploadFileHeader(
            store=store(store_name), name="release.md", folder="handbook"
        )
        yield corpus_pb2.UploadFileChunk(header=header)
        half = len(NOTES) // 2
        yield corpus_pb2.UploadFileChunk(data=NOTES[:half])
        yield corpus_pb2.UploadFileChunk(data=NOTES[half:])

    file = await engram.UploadFile(chunks(), metadata=write)
    assert (file.name, file.folder, file.size_bytes) == ("release.md", "handbook", len(NOTES))
    assert file.state == corpus_pb2.FILE_STATE_UPLOADED

    job = await engram.IngestFiles(
        corpus_pb2.IngestFilesRequest(store=store(store_name), file_ids=[file.id]), metadata=write
    )
    seen = [
        update
        async for update in engram.WatchJob(
            gateway_pb2.GetJobRequest(id=job.id), metadata=write, timeout=120
        )
    ]
    states = [common_pb2.JobState.Name(update.state) for update in seen]
    assert states and seen[-1].state == common_pb2.JOB_STATE_DONE, (
        f"WatchJob should end with JOB_STATE_DONE; the states were {states}"
    )
    assert {update.id for update in seen} == {job.id}
    assert all(update.state not in TERMINAL for update in seen[:-1]), states

    ingested = await engram.GetFile(
        corpus_pb2.GetFileRequest(store=store(store_name), file_id=file.id), metadata=write
    )
    assert ingested.state == corpus_pb2.FILE_STATE_INGESTED


async def test_upload_without_a_header_first_is_invalid(
    api: Api, engram: gateway_pb2_grpc.EngramStub, store_name: str
) -> None:
    await create_store(engram, store_name)
    write = bearer(await api.token("write", store_name))
    error = await refusal(
        engram.UploadFile(iter([corpus_pb2.UploadFileChunk(data=NOTES)]), metadata=write)
    )
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert "header" in error.details(), error.details()


async def test_export_then_import_moves_the_drawers(
    engram: gateway_pb2_grpc.EngramStub, store_name: str
) -> None:
    copy = f"{store_name}-copy"
    await create_store(engram, store_name)
    await create_store(engram, copy)
    await engram.AddDrawerSigned(signed_write(store_name), metadata=ADMIN)

    export = retrieval_pb2.ExportDrawersRequest(store=store(store_name))
    pieces = [piece.jsonl async for piece in engram.ExportDrawers(export, metadata=ADMIN)]
    assert b"".join(pieces).count(b"\n") == 1, f"one drawer should export one line: {pieces}"

    def chunks() -> Iterator[retrieval_pb2.ImportDrawersChunk]:
        yield retrieval_pb2.ImportDrawersChunk(store=store(copy))
        for piece in pieces:
            yield retrieval_pb2.ImportDrawersChunk(jsonl=piece)

    imported = await engram.ImportDrawers(chunks(), metadata=ADMIN)
    assert (imported.imported, list(imported.errors)) == (1, []), imported
    assert await drawer_count(engram, copy) == 1


# ---------------------------------------------------------------- the auth matrix over gRPC

MATRIX_IN, MATRIX_OUT = "gw-grpc-matrix-in", "gw-grpc-matrix-out"
# Scoped by a job's store, which needs a real job: the REST matrix walks these (same core).
MATRIX_SKIPPED = {"GetJob", "CancelJob"}


def _aimed_at(method_name: str, request: typing.Any, name: str) -> bool:
    """Point `request` at store `name`; True when the request names a store at all."""
    fields = request.DESCRIPTOR.fields_by_name
    if "store" in fields and fields["store"].message_type is not None:
        request.store.name = name
    elif method_name == "CreateStore":
        request.spec.name = name
    elif method_name == "CreateToken":
        request.tier = common_pb2.CALLER_TIER_READ
        request.stores.append(name)
    elif "name" in fields:
        request.name = name
    elif "store" in fields:  # ListJobs: a plain store name
        request.store = name
    else:
        return False
    return True


async def test_auth_matrix_over_grpc(api: Api, engram: gateway_pb2_grpc.EngramStub) -> None:
    """Every unary RPC × tier × in/out-of-scope token: PERMISSION_DENIED exactly where the
    tier is too low or the request names a store outside the token's scope; a valid token is
    never UNAUTHENTICATED. (Other refusals, e.g. an empty request, come after these checks.)"""
    for name in (MATRIX_IN, MATRIX_OUT):
        listed = await engram.ListStores(gateway_pb2.ListStoresRequest(), metadata=ADMIN)
        if name not in {s.spec.name for s in listed.stores}:
            await create_store(engram, name)
    failures, walked = [], 0
    for method in SERVICE.methods:
        if method.client_streaming or method.server_streaming or method.name in MATRIX_SKIPPED:
            continue
        walked += 1
        request_type = message_factory.GetMessageClass(method.input_type)
        rpc = getattr(engram, method.name)
        for tier in ("read", "write", "admin"):
            for scope in ("in", "out"):
                token = await api.token(tier, MATRIX_IN if scope == "in" else MATRIX_OUT)
                request = request_type()
                scoped = _aimed_at(method.name, request, MATRIX_IN)
                too_low = Tier[tier.upper()] < REQUIRED_TIER[operation_name(method.name)]
                due = too_low or (scope == "out" and scoped)
                try:
                    await rpc(request, metadata=bearer(token))
                    code = grpc.StatusCode.OK
                except grpc.aio.AioRpcError as error:
                    code = error.code()
                denied = code == grpc.StatusCode.PERMISSION_DENIED
                if code == grpc.StatusCode.UNAUTHENTICATED or denied != due:
                    failures.append(
                        f"{tier}/{scope}-scope {method.name}: {code.name}, expected "
                        f"{'PERMISSION_DENIED' if due else 'not UNAUTHENTICATED/PERMISSION_DENIED'}"
                    )
    assert walked >= 50, f"only {walked} unary RPCs walked"
    assert not failures, "\n".join(failures)


async def test_an_import_over_the_limit_is_refused_and_writes_nothing(
    tiers: Tiers, tmp_path: Path, store_name: str
) -> None:
    settings = gateway_settings(tiers, tmp_path / "data", max_upload_bytes=2_000)
    async with running_gateway(settings) as small:
        port = small.app.state.grpc_port
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = gateway_pb2_grpc.EngramStub(channel)
            await create_store(stub, store_name)
            await stub.AddDrawerSigned(signed_write(store_name), metadata=ADMIN)
            export = retrieval_pb2.ExportDrawersRequest(store=store(store_name))
            line = b"".join([p.jsonl async for p in stub.ExportDrawers(export, metadata=ADMIN)])
            await stub.DeleteDrawer(
                authoring_pb2.DeleteDrawerRequest(
                    store=store(store_name), id=json_id(line), reason="make room for the import"
                ),
                metadata=ADMIN,
            )
            big = line * (2_000 // len(line) + 1)  # the same line repeated past the limit

            def in_the_first_chunk() -> Iterator[retrieval_pb2.ImportDrawersChunk]:
                yield retrieval_pb2.ImportDrawersChunk(store=store(store_name), jsonl=big)

            def streamed() -> Iterator[retrieval_pb2.ImportDrawersChunk]:
                yield retrieval_pb2.ImportDrawersChunk(store=store(store_name))
                for start in range(0, len(big), 500):
                    yield retrieval_pb2.ImportDrawersChunk(jsonl=big[start : start + 500])

            for chunks in (in_the_first_chunk, streamed):
                error = await refusal(stub.ImportDrawers(chunks(), metadata=ADMIN))
                assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, (
                    f"{chunks.__name__}: {error.code().name} {error.details()}"
                )
                assert "limit" in (error.details() or "")
                assert await drawer_count(stub, store_name) == 0, "a refused import wrote"


def json_id(line: bytes) -> str:
    return str(json.loads(line)["id"])
