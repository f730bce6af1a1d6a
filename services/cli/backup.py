"""`engram backup STORE [DIR]` and `engram restore FILE [--as NAME]`: a running stack's store to
one archive file and back, through the client library (the public BackupStore / RestoreStore
operations, `GET /v1/stores/{store}:backup` and `POST /v1/stores/{name}:restore`).

Exit status: 0 done, 1 refused by the stack (it says why), 2 the stack could not be asked.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from engram.client import Client, EngramError

from services.cli.doctor import DEFAULT_URL

# A backup of a large store takes a while to gather before the first byte comes.
TIMEOUT_S = 3600.0
ARCHIVE_SUFFIX = ".engram.tar"


def _client(args: argparse.Namespace, token: str) -> Client:
    url = args.url or os.environ.get("ENGRAM_URL", DEFAULT_URL)
    return Client(rest=url, token=token, timeout_s=TIMEOUT_S, stream_timeout_s=TIMEOUT_S)


def archive_name(store: str, at: datetime | None = None) -> str:
    """`<store>-<UTC time>.engram.tar`, the name the gateway's REST download gives too."""
    stamp = (at or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    return f"{store}-{stamp}{ARCHIVE_SUFFIX}"


def run_backup(args: argparse.Namespace, token: str) -> int:
    folder: Path = args.dir
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / archive_name(args.store)
    partial = target.with_name(target.name + ".partial")
    try:
        with _client(args, token) as client, partial.open("wb") as out:
            for piece in client.backup_store(args.store):
                out.write(piece)
    except EngramError as error:
        partial.unlink(missing_ok=True)
        reached = not error.unreachable
        what = f"{args.store}: {error}" if reached else f"cannot reach the stack: {error}"
        print(f"engram backup: {what}", file=sys.stderr)
        return 1 if reached else 2
    partial.replace(target)  # a download cut short never looks like a backup
    print(f"{args.store} → {target} ({target.stat().st_size / 1e6:.1f} MB)")
    return 0


def run_restore(args: argparse.Namespace, token: str) -> int:
    archive: Path = args.file
    if not archive.is_file():
        print(f"engram restore: no such file: {archive}", file=sys.stderr)
        return 2
    name = args.as_name or archive.name.split(ARCHIVE_SUFFIX)[0].rsplit("-", 1)[0]
    try:
        with _client(args, token) as client:
            client.restore_store(name, archive)
    except EngramError as error:
        reached = not error.unreachable
        what = f"{name}: {error}" if reached else f"cannot reach the stack: {error}"
        print(f"engram restore: {what}", file=sys.stderr)
        return 1 if reached else 2
    print(f"restored {archive} as store {name}")
    return 0


def add_backup_parsers(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], token_of: Callable[[str], str]
) -> None:
    def with_token(run: Callable[[argparse.Namespace, str], int]) -> Callable[..., int]:
        def call(args: argparse.Namespace) -> int:
            token = token_of(args.token or "")
            if not token:
                print(
                    "an admin token is needed: --token, ENGRAM_TOKEN, or the development "
                    "token `make run` keeps in data/run/dev-token",
                    file=sys.stderr,
                )
                return 2
            return run(args, token)

        return call

    backup = sub.add_parser("backup", help="write one store of a running stack to an archive")
    backup.add_argument("store")
    backup.add_argument("dir", nargs="?", type=Path, default=Path("."), help="(default: here)")
    restore = sub.add_parser("restore", help="a new store from an archive `engram backup` wrote")
    restore.add_argument("file", type=Path)
    restore.add_argument(
        "--as", dest="as_name", help="the new store's name (default: the one in the file name)"
    )
    for parser, run in ((backup, run_backup), (restore, run_restore)):
        parser.add_argument("--url", help=f"gateway base URL (ENGRAM_URL, default {DEFAULT_URL})")
        parser.add_argument("--token", help="admin bearer token (ENGRAM_TOKEN; else the dev token)")
        parser.set_defaults(func=with_token(run))
