"""The operator CLI over the client library, against the real stack (the session gateway's
public gRPC port): imports of exports, transcripts and a vault, kept in step on a re-run; a
malformed export refused whole; search, add, stores, export and jobs, with --json for scripts;
exit statuses that mean something."""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import socket
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from services.cli.__main__ import build_parser
from tests.gateway.conftest import ADMIN_TOKEN, Api

FIXTURES = Path(__file__).parents[1] / "unit" / "corpus" / "fixtures"


class Cli:
    """`engram …` run in a worker thread (its blocking client must not stall the loop the
    gateway serves on), with its status, stdout and stderr."""

    def __init__(self, api: Api) -> None:
        self.address = f"127.0.0.1:{api.app.state.grpc_port}"

    async def __call__(self, *argv: str, address: str | None = None) -> tuple[int, str, str]:
        connection = ["--grpc", address or self.address, "--token", ADMIN_TOKEN]
        args = build_parser().parse_args([*argv, *connection])
        out, err = io.StringIO(), io.StringIO()

        def run() -> int:
            with redirect_stdout(out), redirect_stderr(err):
                status: int = args.func(args)
                return status

        status = await asyncio.to_thread(run)
        return status, out.getvalue(), err.getvalue()

    async def json(self, *argv: str) -> Any:
        status, out, err = await self(*argv, "--json")
        assert status == 0, err
        lines = [json.loads(line) for line in out.splitlines() if line.strip()]
        return lines[0] if len(lines) == 1 else lines


@pytest.fixture
async def cli(api: Api, store_name: str) -> Cli:
    await api.create_store(store_name)
    return Cli(api)


async def test_a_chatgpt_export_imports_once_and_a_rerun_sends_nothing(
    cli: Cli, store_name: str
) -> None:
    export = str(FIXTURES / "chatgpt_conversations.json")
    first = await cli.json("import", store_name, "chatgpt", export)
    assert (first["new"], first["unchanged"], first["failed"]) == (1, 0, [])
    assert first["chunks"] == 3
    hits = await cli.json(
        "search", store_name, "how much water for my sourdough?", "--raw", "-n", "1"
    )
    top = hits["results"][0]["chunk"]
    assert "350 g water" in top["content"] and top["origin_kind"] == "chatgpt"
    again = await cli.json("import", store_name, "chatgpt", export)
    assert (again["new"], again["changed"], again["unchanged"], again["jobs"]) == (0, 0, 1, [])


async def test_a_malformed_export_is_refused_and_nothing_is_stored(
    cli: Cli, store_name: str, tmp_path: Path, api: Api
) -> None:
    broken = tmp_path / "conversations.json"
    broken.write_bytes(
        (FIXTURES / "claude_conversations.json")
        .read_bytes()
        .replace(b'"sender": "assistant"', b'"sender": "robot"', 1)
    )
    status, _, err = await cli("import", store_name, "claude", str(broken))
    assert status == 1
    assert "conversation 1 'Renaming the billing service'" in err and "message 2" in err
    files = await api.client.get(f"/v1/stores/{store_name}/files", headers=api.admin)
    assert files.json()["files"] == [], "nothing was sent"


async def test_claude_code_sessions_from_the_standard_place_and_the_new_ones_later(
    cli: Cli, store_name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    project = tmp_path / "claude" / "projects" / "-home-dev-shop"
    project.mkdir(parents=True)
    shutil.copy(FIXTURES / "claude_code_session.jsonl", project / "7f3e.jsonl")
    first = await cli.json("import", store_name, "claude-code")
    assert (first["new"], first["chunks"]) == (1, 2)
    (project / "8a1b.jsonl").write_text(
        json.dumps({"type": "user", "sessionId": "8a1b", "uuid": "u1",
                    "timestamp": "2025-07-15T10:00:00Z",
                    "message": {"role": "user", "content": "Bump the cache TTL to ten minutes."}})
        + "\n"
    )  # fmt: skip
    second = await cli.json("import", store_name, "claude-code")
    assert (second["new"], second["unchanged"]) == (1, 1)


async def test_a_vault_is_kept_in_step(cli: Cli, store_name: str, tmp_path: Path) -> None:
    vault = tmp_path / "Garden"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / ".obsidian" / "app.md").write_text("settings")
    (vault / "tomatoes.md").write_text("# Tomatoes\n\nStake the San Marzano plants in May.\n")
    (vault / "compost.md").write_text("# Compost\n\nTurn the heap every second Sunday.\n")
    first = await cli.json("import", store_name, "vault", str(vault))
    assert (first["new"], first["removed"]) == (2, 0)

    (vault / "compost.md").unlink()
    (vault / "tomatoes.md").write_text("# Tomatoes\n\nStake the Roma plants in June.\n")
    second = await cli.json("import", store_name, "vault", str(vault))
    assert (second["new"], second["changed"], second["removed"]) == (0, 1, 1)
    hits = await cli.json("search", store_name, "when do I turn the compost heap?", "--raw")
    assert all("compost" not in h["chunk"]["content"].lower() for h in hits.get("results", []))
    hits = await cli.json("search", store_name, "which tomato plants get staked?", "--raw")
    assert "Roma" in hits["results"][0]["chunk"]["content"]

    # --watch repeats the import; with nothing changed, each round sends nothing.
    watch = ("--watch", "0.1", "--rounds", "2")
    rounds = await cli.json("import", store_name, "vault", str(vault), *watch)
    assert [r["unchanged"] for r in rounds] == [1, 1] and [r["jobs"] for r in rounds] == [[], []]


async def test_add_search_stores_export_and_jobs(cli: Cli, store_name: str, tmp_path: Path) -> None:
    status, out, err = await cli(
        "add", store_name, "The team decided to cap staging at 50 requests a second.",
        "--type", "decision", "--room", "platform/staging", "--by", "Maya",
        "--signature", "cap staging at 50 requests a second",
    )  # fmt: skip
    assert status == 0 and out.startswith("stored d"), out + err
    status, out, _ = await cli(
        "search", store_name, "why is staging rate limited?", "--min-score", "-1"
    )
    assert status == 0 and "cap staging at 50 requests" in out and "intent:" in out

    fresh = store_name + "-new"
    created = await cli.json("stores", "--create", fresh, "--mode", "companion")
    assert created["spec"]["deployment_mode"] == "DEPLOYMENT_MODE_COMPANION"
    stores = await cli.json("stores")
    mine = [
        s
        for s in (stores if isinstance(stores, list) else [stores])
        if s["spec"]["name"] == store_name
    ]
    assert mine and mine[0]["drawer_count"] == "1"

    target = tmp_path / "drawers.jsonl"
    status, _, err = await cli("export", store_name, "--output", str(target))
    assert status == 0 and "1 drawers" in err
    assert json.loads(target.read_text().splitlines()[0])["content"].startswith("The team decided")

    imported = await cli.json("import", store_name, "files", str(FIXTURES / "guide.md"))
    job_id = imported["jobs"][0]
    job = await cli.json("jobs", job_id)
    assert job["state"] == "JOB_STATE_DONE" and job["id"] == job_id
    status, out, _ = await cli("jobs", "--store", store_name)
    assert status == 0 and job_id in out and "ingest_files" in out


async def test_exit_statuses(cli: Cli, store_name: str) -> None:
    status, _, err = await cli("search", "no-such-store-" + store_name, "anything")
    assert status == 1 and "not_found" in err
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"127.0.0.1:{sock.getsockname()[1]}"
    status, _, err = await cli("stores", address=closed)
    assert status == 2 and "cannot reach the stack" in err
