"""`engram backup STORE [DIR]` and `engram restore FILE [--as NAME]`: a running stack's store to
one archive file and back (the public BackupStore / RestoreStore operations,
`GET /v1/stores/{store}:backup` and `POST /v1/stores/{name}:restore`).

Exit status: 0 done, 1 refused by the stack (it says why), 2 the stack could not be asked.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx

from services.cli.doctor import DEFAULT_URL

# A backup of a large store takes a while to gather before the first byte comes.
TIMEOUT_S = 3600.0
PIECE_BYTES = 1 << 20
ARCHIVE_SUFFIX = ".engram.tar"


def _client(args: argparse.Namespace, token: str) -> httpx.Client:
    url = args.url or os.environ.get("ENGRAM_URL", DEFAULT_URL)
    return httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT_S
    )


def _refused(answer: httpx.Response) -> str:
    try:
        return str(answer.json()["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return answer.text[:500]


def run_backup(args: argparse.Namespace, token: str) -> int:
    folder: Path = args.dir
    folder.mkdir(parents=True, exist_ok=True)
    try:
        with (
            _client(args, token) as client,
            client.stream("GET", f"/v1/stores/{args.store}:backup") as answer,
        ):
            if answer.status_code != 200:
                answer.read()
                print(f"engram backup: {args.store}: {_refused(answer)}", file=sys.stderr)
                return 1
            disposition = answer.headers.get("content-disposition", "")
            named = re.search(r'filename="([^"/\\]+)"', disposition)
            target = folder / (named.group(1) if named else f"{args.store}{ARCHIVE_SUFFIX}")
            partial = target.with_name(target.name + ".partial")
            with partial.open("wb") as out:
                for piece in answer.iter_bytes(PIECE_BYTES):
                    out.write(piece)
            partial.replace(target)  # a download cut short never looks like a backup
    except httpx.HTTPError as error:
        print(f"engram backup: cannot reach the stack: {error}", file=sys.stderr)
        return 2
    print(f"{args.store} → {target} ({target.stat().st_size / 1e6:.1f} MB)")
    return 0


def _pieces(path: Path) -> Iterator[bytes]:
    with path.open("rb") as body:
        while piece := body.read(PIECE_BYTES):
            yield piece


def run_restore(args: argparse.Namespace, token: str) -> int:
    archive: Path = args.file
    if not archive.is_file():
        print(f"engram restore: no such file: {archive}", file=sys.stderr)
        return 2
    name = args.as_name or archive.name.split(ARCHIVE_SUFFIX)[0].rsplit("-", 1)[0]
    try:
        with _client(args, token) as client:
            answer = client.post(
                f"/v1/stores/{name}:restore",
                content=_pieces(archive),
                headers={"content-type": "application/x-tar"},
            )
    except httpx.HTTPError as error:
        print(f"engram restore: cannot reach the stack: {error}", file=sys.stderr)
        return 2
    if answer.status_code != 201:
        print(f"engram restore: {name}: {_refused(answer)}", file=sys.stderr)
        return 1
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
