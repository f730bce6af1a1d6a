"""`engram import STORE KIND [PATH]`: bring what people already have into a store's corpus, as
raw sessions and files, through the client library.

Kinds: ``chatgpt`` and ``claude`` (an export's zip or its conversations.json), ``claude-code``
and ``codex`` (their session folders; the standard places when no path is given), ``vault`` (a
Markdown folder, kept in sync: notes deleted there are deleted here), ``files`` (any files,
into ``--folder``), ``drawers`` (a JSONL file of drawers, as `engram export` writes).

Files go up (the corpus detects each kind), then one ingest job per 1,000 files chunks and
embeds them, followed with a progress line. A re-run sends only what changed
(`import_plan.plan_sync`); `--watch SECONDS` re-runs it on its own, so a vault (or a session
folder) stays in step while the command runs. An export is read whole before anything is
sent, so a malformed one is refused with the line and conversation at fault and nothing is
stored; if its ingest fails, the files this run sent are deleted again, so an export lands
whole or not at all.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Final

from engram.client import Client, EngramError
from engram.v1 import common_pb2

from services.cli import import_plan as plan_
from services.cli.connect import (
    EXIT_OK,
    EXIT_REFUSED,
    add_connection_arguments,
    run_command,
)
from services.cli.import_plan import LocalFile, RemoteFile, SyncPlan
from services.cli.progress import ProgressPrinter
from services.corpus.core.chunk_export import ExportFormat
from services.runtime.errors import InvalidInput

INGEST_BATCH: Final = 1000
KINDS: Final = ("chatgpt", "claude", "claude-code", "codex", "vault", "files", "drawers")


def _say(args: argparse.Namespace, text: str) -> None:
    if not args.json:
        print(text, file=sys.stderr)


def _local_files(args: argparse.Namespace) -> tuple[list[LocalFile], str, bool, str]:
    """(files, the catalog folder they live under, whether it mirrors them, a description)."""
    kind = args.kind
    if kind in ("chatgpt", "claude"):
        if not args.path:
            raise InvalidInput(f"name the {kind} export: its zip or conversations.json")
        path = Path(args.path[0]).expanduser()
        service: ExportFormat = "chatgpt" if kind == "chatgpt" else "claude_ai"
        checked = plan_.check_export(plan_.read_export_body(path), service=service, name=path.name)
        parts = f" in {len(checked.parts)} parts" if len(checked.parts) > 1 else ""
        described = f"{checked.conversations} conversations{parts}"
        return checked.parts, plan_.FOLDERS[service], True, described
    if kind in ("claude-code", "codex"):
        default = plan_.claude_code_home() if kind == "claude-code" else plan_.codex_home()
        root = Path(args.path[0]).expanduser() if args.path else default
        found = plan_.claude_code_files(root) if kind == "claude-code" else plan_.codex_files(root)
        return found, plan_.FOLDERS[kind], False, f"{len(found)} sessions under {root}"
    if kind == "vault":
        if not args.path:
            raise InvalidInput("name the vault's folder")
        root = Path(args.path[0]).expanduser()
        name = args.name or root.resolve().name
        found = plan_.vault_files(root, name)
        return found, plan_.vault_folder(name), True, f"{len(found)} notes in {root}"
    # files
    if not args.path:
        raise InvalidInput("name the files to import")
    found = []
    for given in args.path:
        path = Path(given).expanduser()
        if not path.is_file():
            raise InvalidInput(f"{path} is not a file")
        found.append(plan_.on_disk(path, args.folder))
    return found, args.folder, False, f"{len(found)} files"


def _remote_files(client: Client, store: str, folder: str) -> list[RemoteFile]:
    return [
        RemoteFile(id=f.id, folder=f.folder, name=f.name, sha256=f.sha256)
        for f in client.pages("list_files", store=store, folder=folder, recursive=True)
    ]


def _send(client: Client, store: str, file: LocalFile) -> str:
    body: Any = file.body if file.body is not None else file.path
    uploaded = client.upload_file(store, file.name, body, folder=file.folder)
    return str(uploaded.id)


def _ingest(args: argparse.Namespace, client: Client, file_ids: list[str]) -> list[Any]:
    """One ingest job per batch, each followed to its end; the jobs as they ended."""
    jobs = []
    printer = ProgressPrinter(quiet=args.json)
    for start in range(0, len(file_ids), INGEST_BATCH):
        job = client.ingest_files(store=args.store, file_ids=file_ids[start : start + INGEST_BATCH])
        if args.no_wait:
            jobs.append(job)
            continue
        jobs.append(client.wait_job(job.id, on_progress=printer))
    return jobs


def _undo(client: Client, store: str, file_ids: list[str]) -> None:
    for file_id in file_ids:
        try:
            client.delete_file(store=store, file_id=file_id, delete_raw=True)
        except EngramError as error:
            print(f"could not take back {file_id}: {error}", file=sys.stderr)


def _apply(args: argparse.Namespace, client: Client, plan: SyncPlan) -> list[str]:
    """Delete what is replaced or gone, then send what is new or changed; the sent ids."""
    for _, old in plan.replace:
        client.delete_file(store=args.store, file_id=old.id, delete_raw=True)
    for gone in plan.remove:
        client.delete_file(store=args.store, file_id=gone.id, delete_raw=True)
    sent = []
    redraw = sys.stderr.isatty() and not args.json
    for number, file in enumerate(plan.to_send, 1):
        sent.append(_send(client, args.store, file))
        line = f"sent {number}/{len(plan.to_send)}: {file.key}"
        if redraw:  # one line, redrawn: a folder of thousands of sessions stays readable
            end = "\n" if number == len(plan.to_send) else ""
            print(f"\r\x1b[2K{line}", end=end, file=sys.stderr, flush=True)
        else:
            _say(args, line)
    return sent


def _import_files(args: argparse.Namespace, client: Client) -> int:
    local, folder, mirror, described = _local_files(args)
    remote = _remote_files(client, args.store, folder)
    if not mirror:  # only the files named or found are compared
        keys = {f.key for f in local}
        remote = [r for r in remote if r.key in keys]
    plan = plan_.plan_sync(local, remote, mirror=mirror)
    _say(args, f"{args.kind}: {described}: {plan.summary()}")
    whole = args.kind in ("chatgpt", "claude")
    sent = _apply(args, client, plan)
    jobs = _ingest(args, client, sent) if sent else []
    failed = [
        job
        for job in jobs
        if job.state != common_pb2.JOB_STATE_DONE or job.errors_total
    ] if not args.no_wait else []  # fmt: skip
    if failed and whole:
        _undo(client, args.store, sent)
    result = {
        "kind": args.kind,
        "store": args.store,
        "new": len(plan.upload),
        "changed": len(plan.replace),
        "unchanged": plan.unchanged,
        "removed": len(plan.remove),
        "jobs": [job.id for job in jobs],
        "chunks": sum(job.ingest.chunks for job in jobs),
        "failed": [
            {"file_id": e.item_id, "message": e.message} for job in failed for e in job.errors
        ],
        "taken_back": bool(failed and whole),
    }
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print(
            f"{args.store}: {result['new']} new, {result['changed']} changed, "
            f"{result['removed']} removed, {result['unchanged']} unchanged; "
            f"{result['chunks']} chunks"
            + (" (ingest queued: engram jobs --follow)" if args.no_wait else "")
        )
        for failure in result["failed"]:
            print(f"  ✗ {failure['file_id']}: {failure['message']}")
        if result["taken_back"]:
            print("  the export's files were taken back: nothing of it is stored")
    return EXIT_REFUSED if failed else EXIT_OK


def _import_drawers(args: argparse.Namespace, client: Client) -> int:
    if not args.path:
        raise InvalidInput("name the JSONL file of drawers")
    body = Path(args.path[0]).expanduser().read_bytes()
    answer = client.import_drawers(args.store, body, replace_existing=args.replace)
    if args.json:
        print(json.dumps({"store": args.store, "imported": answer.imported}))
    else:
        print(f"{args.store}: {answer.imported} drawers imported")
    return EXIT_OK


def _run(args: argparse.Namespace, client: Client) -> int:
    try:
        if args.kind == "drawers":
            return _import_drawers(args, client)
        if not args.watch:
            return _import_files(args, client)
        return _watch(args, client)
    except InvalidInput as error:
        print(f"engram import: {error.message}", file=sys.stderr)
        return EXIT_REFUSED


def _watch(args: argparse.Namespace, client: Client) -> int:
    """Keep the store in step: the same import again every `--watch` seconds (each round sends
    only what changed), until interrupted or `--rounds` are done."""
    status = EXIT_OK
    rounds = 0
    while True:
        status = max(status, _import_files(args, client))
        rounds += 1
        if args.rounds and rounds >= args.rounds:
            return status
        time.sleep(args.watch)


def add_import_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    imports = sub.add_parser(
        "import",
        help="bring in ChatGPT/Claude exports, Claude Code/Codex sessions, a Markdown vault, "
        "files or drawers",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    imports.add_argument("store")
    imports.add_argument("kind", choices=KINDS)
    imports.add_argument("path", nargs="*", help="what to import (see the kinds above)")
    imports.add_argument("--folder", default="imports", help="catalog folder for `files`")
    imports.add_argument("--name", help="the vault's name in the catalog (default: its folder)")
    imports.add_argument("--replace", action="store_true", help="drawers: overwrite same ids")
    imports.add_argument("--no-wait", action="store_true", help="queue the ingest, do not follow")
    imports.add_argument(
        "--watch",
        type=float,
        metavar="SECONDS",
        help="keep in step: import again every SECONDS (only changes are sent) until Ctrl-C",
    )
    imports.add_argument("--rounds", type=int, default=0, help="with --watch: stop after N")
    add_connection_arguments(imports)
    imports.set_defaults(
        func=lambda a: run_command("import", a, lambda c: _run(a, c), stream_timeout_s=3600)
    )
