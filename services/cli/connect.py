"""How the CLI's commands reach a running stack: the client library (`engram.client`) made from
`--grpc`/`--url`/`--token` (or ENGRAM_GRPC_ADDR, ENGRAM_URL, ENGRAM_TOKEN, then `make run`'s
development token), and what each outcome means as an exit status.

Exit status, for every command that talks to a stack:

- 0: done.
- 1: the stack refused (bad input, unknown store, not allowed) or a job it ran failed; the
  message says which.
- 2: the command line was wrong, or the stack could not be reached at all.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable
from typing import Any, Final

from engram.client import Client, EngramError
from google.protobuf import json_format
from google.protobuf.message import Message

DEFAULT_URL: Final = "http://127.0.0.1:8080"
DEFAULT_GRPC: Final = "127.0.0.1:50050"
EXIT_OK: Final = 0
EXIT_REFUSED: Final = 1
EXIT_UNREACHABLE: Final = 2


def dev_token() -> str:
    """The development admin token `engram up` keeps beside its logs, if there is one."""
    from services.launcher.dev_token import saved_dev_token
    from services.launcher.settings import LauncherSettings

    return saved_dev_token(LauncherSettings().run_dir) or ""


def token_of(given: str) -> str:
    """The token a command uses: given, else ENGRAM_TOKEN, else the development token."""
    return given or os.environ.get("ENGRAM_TOKEN", "") or dev_token()


def add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url", help=f"gateway REST URL (ENGRAM_URL; default {DEFAULT_URL} when no --grpc)"
    )
    parser.add_argument(
        "--grpc",
        metavar="HOST:PORT",
        help=f"gateway gRPC address (ENGRAM_GRPC_ADDR; default {DEFAULT_GRPC} when no --url)",
    )
    parser.add_argument("--token", help="bearer token (ENGRAM_TOKEN; else the dev token)")
    parser.add_argument("--json", action="store_true", help="print JSON (one object per line)")


def client_for(args: argparse.Namespace, **options: Any) -> Client:
    """The client a command talks through: gRPC first, REST the fallback, when neither address
    is given (the stack `make run` brings up serves both); only what was asked for otherwise."""
    grpc = args.grpc or os.environ.get("ENGRAM_GRPC_ADDR") or None
    rest = args.url or os.environ.get("ENGRAM_URL") or None
    if not grpc and not rest:
        grpc, rest = DEFAULT_GRPC, DEFAULT_URL
    return Client(grpc=grpc, rest=rest, token=token_of(args.token or ""), **options)


def as_json(message: Message) -> dict[str, Any]:
    """A message as the REST face writes it (proto field names, enums by name)."""
    data: dict[str, Any] = json_format.MessageToDict(message, preserving_proto_field_name=True)
    return data


def emit(args: argparse.Namespace, message: Message, text: Callable[[], str]) -> None:
    """Print a result: its JSON with --json, else the text a person reads."""
    if getattr(args, "json", False):
        print(json.dumps(as_json(message), ensure_ascii=False))
    else:
        print(text())


def run_command(
    name: str, args: argparse.Namespace, body: Callable[[Client], int], **options: Any
) -> int:
    """Run a command's body with a client; turn what went wrong into a message and a status."""
    try:
        with client_for(args, **options) as client:
            return body(client)
    except EngramError as error:
        if error.code in ("unavailable", "deadline_exceeded") and error.unreachable:
            print(f"engram {name}: cannot reach the stack: {error.message}", file=sys.stderr)
            return EXIT_UNREACHABLE
        print(f"engram {name}: {error}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        print(f"engram {name}: interrupted", file=sys.stderr)
        return 130
