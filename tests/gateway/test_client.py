"""The client library (`engram.client`) against the real stack, on both transports: every
operation by its table name, paged lists, uploads and job progress, import/export, refusals as
one error type; the REST fallback when the gRPC port is down; retries only where they are safe;
the blocking client; and the package standing on its own."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import sys
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from engram.client import AsyncClient, Client, EngramError
from engram.client._grpc import GrpcTransport
from engram.client._rest import RestTransport
from engram.operations import OPERATIONS, Operation
from engram.v1 import authoring_pb2, common_pb2, retrieval_pb2

from tests.gateway.conftest import ADMIN_TOKEN, Api

ROOT = Path(__file__).parents[2]


def _grpc(api: Api) -> GrpcTransport:
    return GrpcTransport(f"127.0.0.1:{api.app.state.grpc_port}", ADMIN_TOKEN)


def _rest(api: Api) -> RestTransport:
    return RestTransport("http://gateway", ADMIN_TOKEN, client=api.client)


@pytest.fixture(params=["grpc", "rest"])
async def client(request: pytest.FixtureRequest, api: Api) -> AsyncIterator[AsyncClient]:
    transport = _grpc(api) if request.param == "grpc" else _rest(api)
    async with AsyncClient(transports=[transport]) as engram:
        assert engram.transport == request.param
        yield engram


def _signed(content: str, room: str = "platform/billing") -> authoring_pb2.AddDrawerSignedRequest:
    return authoring_pb2.AddDrawerSignedRequest(
        drawer=authoring_pb2.DrawerDraft(
            content=content + " We settled on ledger for the billing service name.",
            memory_type="decision",
            added_by="The Architect",
            wing="platform",
            room=room,
        ),
        signature="settled on ledger for the billing service name",
        allow_new_wing=True,
    )


async def test_operations_by_name_on_either_transport(client: AsyncClient, store_name: str) -> None:
    await client.create_store(spec={"name": store_name})
    written = await client.add_drawer_signed(
        _signed("The Architect decided the billing service is renamed ledger."),
        store=store_name,
    )
    assert written.drawer.id
    answer = await client.search(
        store=store_name, query="what is the billing service renamed to?", min_score=-1
    )
    assert isinstance(answer, retrieval_pb2.SearchResponse)
    assert answer.results[0].drawer.id == written.drawer.id
    info = await client.call("GetStore", name=store_name)  # the RPC's name works too
    assert info.spec.name == store_name


async def test_paged_lists_are_walked_to_the_end(client: AsyncClient, store_name: str) -> None:
    await client.create_store(spec={"name": store_name})
    for n in range(5):
        await client.add_drawer(
            store=store_name,
            drawer={
                "content": f"Observation {n}: the nightly export {n} finished at 0{n}:00.",
                "memory_type": "observation",
                "added_by": "ops-agent",
                "wing": "platform",
                "room": "platform/exports",
            },
            allow_new_wing=True,
        )
    ids = [d.id async for d in client.pages("list_drawers", store=store_name, page_size=2)]
    assert len(ids) == 5 and len(set(ids)) == 5


async def test_upload_then_an_ingest_job_followed_to_its_end(
    client: AsyncClient, store_name: str
) -> None:
    await client.create_store(spec={"name": store_name})
    body = b"# Runbook\n\n## Restarts\n\nRestart the ledger worker with a drain first.\n"
    uploaded = await client.upload_file(store_name, "runbook.md", body, folder="ops")
    assert uploaded.detected_type == "markdown" and uploaded.size_bytes == len(body)
    job = await client.ingest_files(store=store_name, file_ids=[uploaded.id])
    seen: list[Any] = []
    done = await client.wait_job(job.id, on_progress=seen.append)
    assert done.state == common_pb2.JOB_STATE_DONE, done
    assert done.ingest.chunks >= 1
    assert seen and seen[-1] == done
    hits = await client.search_raw(store=store_name, query="how do I restart the worker?")
    assert "drain" in hits.results[0].chunk.content


async def test_export_then_import_moves_every_drawer(client: AsyncClient, store_name: str) -> None:
    await client.create_store(spec={"name": store_name})
    await client.add_drawer_signed(
        _signed("Ledger is the billing service's new name."), store=store_name
    )
    jsonl = b"".join([piece async for piece in client.export_drawers(store_name)])
    assert jsonl.count(b"\n") == 1
    copy = store_name + "-copy"
    await client.create_store(spec={"name": copy})
    answer = await client.import_drawers(copy, jsonl)
    assert answer.imported == 1
    listed = await client.list_drawers(store=copy)
    assert len(listed.drawers) == 1


async def test_a_backup_restores_as_a_new_store(
    client: AsyncClient, store_name: str, tmp_path: Path
) -> None:
    await client.create_store(spec={"name": store_name})
    await client.add_drawer_signed(
        _signed("Ledger is the billing service's name."), store=store_name
    )
    archive = tmp_path / "store.engram.tar"
    archive.write_bytes(b"".join([piece async for piece in client.backup_store(store_name)]))
    assert archive.stat().st_size > 1024
    restored = await client.restore_store(store_name + "-copy", archive)
    assert restored.spec.name == store_name + "-copy"
    copied = await client.list_drawers(store=store_name + "-copy")
    assert [d.content for d in copied.drawers] == [
        d.content for d in (await client.list_drawers(store=store_name)).drawers
    ]
    with pytest.raises(EngramError) as taken:
        await client.restore_store(store_name, archive)
    assert taken.value.code == "conflict", taken.value


async def test_refusals_are_one_error_with_the_stacks_code(
    client: AsyncClient, store_name: str
) -> None:
    with pytest.raises(EngramError) as unknown:
        await client.search(store="no-such-store-" + store_name, query="anything")
    assert unknown.value.code == "not_found", unknown.value
    await client.create_store(spec={"name": store_name})
    with pytest.raises(EngramError) as empty:
        await client.search(store=store_name, query="")
    assert empty.value.code == "invalid_input" and empty.value.field == "query", empty.value
    with pytest.raises(TypeError, match="has no field 'qurey'"):
        await client.search(store=store_name, qurey="typo")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_rest_is_the_fallback_when_the_grpc_port_is_down(api: Api, store_name: str) -> None:
    down = GrpcTransport(f"127.0.0.1:{_closed_port()}", ADMIN_TOKEN)
    async with AsyncClient(transports=[down, _rest(api)], retries=0) as engram:
        assert engram.transport == "grpc"
        await engram.create_store(spec={"name": store_name})
        assert engram.transport == "rest", "the unreachable gRPC port is set aside for a while"
        stats = await engram.stats(store=store_name)
        assert stats is not None
    # A refusal is the stack's answer: the other transport is never asked instead.
    async with AsyncClient(transports=[_grpc(api), _rest(api)]) as engram:
        with pytest.raises(EngramError) as refused:
            await engram.search(store="no-such-store-" + store_name, query="x")
        assert refused.value.transport == "grpc" and engram.transport == "grpc"


class _Flaky:
    """A transport that fails the first `failures` calls with `error`, then answers."""

    name = "grpc"

    def __init__(self, error: EngramError, failures: int) -> None:
        self.error, self.failures, self.calls = error, failures, 0

    async def unary(self, op: Operation, request: Any, deadline_s: float | None) -> Any:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return retrieval_pb2.SearchResponse()

    async def aclose(self) -> None:
        return None


async def test_retries_only_what_cannot_have_been_done_twice() -> None:
    overloaded = EngramError("overloaded", "queue full", retry_after_s=0.01)
    flaky = _Flaky(overloaded, failures=2)
    async with AsyncClient(transports=[flaky]) as engram:
        await engram.search(store="s", query="q")
    assert flaky.calls == 3, "an overloaded stack did nothing: retried"

    cut = EngramError("unavailable", "connection lost mid-call")
    write = _Flaky(cut, failures=1)
    async with AsyncClient(transports=[write]) as engram:
        with pytest.raises(EngramError):
            await engram.add_drawer(store="s", drawer={"content": "c"})
    assert write.calls == 1, "a write cut off mid-way may have landed: not retried"
    assert OPERATIONS["add_drawer"].effect == "writes" and not OPERATIONS["add_drawer"].idempotent

    read = _Flaky(cut, failures=1)
    async with AsyncClient(transports=[read]) as engram:
        await engram.search(store="s", query="q")
    assert read.calls == 2, "a read cut off mid-way is retried"


async def test_the_blocking_client_from_another_thread(api: Api, store_name: str) -> None:
    address = f"127.0.0.1:{api.app.state.grpc_port}"

    def blocking() -> tuple[str, list[str]]:
        with Client(grpc=address, token=ADMIN_TOKEN) as engram:
            engram.create_store(spec={"name": store_name})
            engram.add_drawer_signed(_signed("Ledger it is, says the Architect."), store=store_name)
            ids = [d.id for d in engram.pages("list_drawers", store=store_name)]
            lines = b"".join(engram.export_drawers(store_name)).decode().splitlines()
            return engram.transport, [*ids, *lines]

    transport, seen = await asyncio.to_thread(blocking)
    assert transport == "grpc" and len(seen) == 2


def test_the_client_wheel_stands_on_its_own(tmp_path: Path) -> None:
    """The wheel of protos/pyproject.toml holds the messages, the operation table, the
    client and the MCP bridge (console script `engram-mcp`), and imports nothing of the
    services or the gateway."""
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         str(ROOT / "protos"), "-w", str(tmp_path / "dist")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    shutil.rmtree(ROOT / "protos" / "build", ignore_errors=True)
    shutil.rmtree(ROOT / "protos" / "engram_client.egg-info", ignore_errors=True)
    wheel = next((tmp_path / "dist").glob("engram_client-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(tmp_path / "site")
        entry_points = next(n for n in archive.namelist() if n.endswith("entry_points.txt"))
        scripts = archive.read(entry_points).decode()
    assert "engram-mcp = engram.mcp_bridge:main" in scripts, f"no engram-mcp script: {scripts}"
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); "
        "from engram.client import AsyncClient, Client; import engram.operations as o; "
        "assert o.__file__.startswith(sys.argv[1]), o.__file__; "
        "assert len(o.OPERATIONS) > 50; "
        "import engram.mcp_bridge as b; assert b.__file__.startswith(sys.argv[1]), b.__file__; "
        "ours = sorted(m for m in sys.modules if m.split('.')[0] in ('services', 'gateway')); "
        "sys.exit(f'imports {ours}' if ours else 0)"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-c", script, str(tmp_path / "site")],
        cwd=tmp_path, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_unary_operation_is_a_typed_method_of_both_clients() -> None:
    """Generated from the table with the protos (scripts/gen_client_methods.py)."""
    import typing

    for op in OPERATIONS.values():
        if op.client_streaming or op.server_streaming:
            continue
        for cls in (AsyncClient, Client):
            method = getattr(cls, op.name, None)
            assert method is not None, f"{cls.__name__} has no {op.name}"
            hints = typing.get_type_hints(method)
            assert hints["return"].DESCRIPTOR.full_name == op.response, (cls.__name__, op.name)
