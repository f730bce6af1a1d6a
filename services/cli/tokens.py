"""`engram token create|list|revoke`: the gateway's token table, wherever the gateway's settings
keep it (`ENGRAM_GATEWAY_STATE_BACKEND`): SQLite under a data directory, or Redis.

Works whether or not the gateway runs (SQLite in WAL mode, or the Redis every gateway replica
reads); a revoked token stops working at each running gateway's next request.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gateway.core.principal import Tier
from gateway.core.state import GatewayState, open_state
from gateway.core.tokens import TokenRecord, TokenStore
from gateway.settings import GatewaySettings
from services.runtime.errors import EngramError


def _state(data_dir: Path | None) -> GatewayState:
    """The gateway's state as its settings name it (no lock: the CLI may run beside it)."""
    settings = GatewaySettings(data_dir=data_dir) if data_dir else GatewaySettings()
    return open_state(settings)


def _row(record: TokenRecord) -> dict[str, object]:
    return {
        "id": record.id,
        "tier": record.tier.label,
        "stores": list(record.stores) if record.stores is not None else "all",
        "label": record.label,
        "created_at": record.created_at.isoformat(timespec="seconds"),
        "last_used_at": (
            record.last_used_at.isoformat(timespec="seconds") if record.last_used_at else None
        ),
    }


def run_token(args: argparse.Namespace) -> int:
    """Run one token subcommand; prints what it did, returns the exit code."""
    state = _state(args.data_dir)
    try:
        tokens = state.tokens()
        try:
            _run(args, tokens)
        finally:
            tokens.close()
    except EngramError as error:
        print(f"engram token: {error.message}")
        return 1
    finally:
        state.release()
    return 0


def _run(args: argparse.Namespace, tokens: TokenStore) -> None:
    if args.token_command == "create":
        record, token = tokens.create(Tier.parse(args.tier), args.store or None, args.label)
        scope = ", ".join(record.stores) if record.stores else "every store"
        print(f"created {record.id} ({record.tier.label}, {scope}). The token, shown once:")
        print(token)
    elif args.token_command == "list":
        for record in tokens.list():
            print(json.dumps(_row(record)))
    else:
        tokens.revoke(args.id)
        print(f"revoked {args.id}")


def add_token_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    token = sub.add_parser("token", help="create, list or revoke gateway tokens")
    token.add_argument(
        "--data-dir", type=Path, help="root of local state (ENGRAM_DATA_DIR; local state only)"
    )
    actions = token.add_subparsers(dest="token_command", required=True)
    create = actions.add_parser("create", help="create a token (printed once)")
    create.add_argument("--tier", required=True, choices=["read", "write", "admin"])
    create.add_argument(
        "--store", action="append", default=[], help="scope to this store (repeat); none: all"
    )
    create.add_argument("--label", default="", help="what the token is for")
    actions.add_parser("list", help="list tokens (never the tokens themselves)")
    revoke = actions.add_parser("revoke", help="revoke a token by id")
    revoke.add_argument("id")
    token.set_defaults(func=run_token)
