"""`engram gateway-state copy --to redis|local`: move the gateway's tokens, store registry and
audit log between its two backends (gateway.core.state_copy says what is copied and when a
copy is refused).

Both ends come from the gateway's own settings: the files under `<ENGRAM_DATA_DIR>/gateway`
and the Redis of `ENGRAM_GATEWAY_REDIS_URL` under `ENGRAM_GATEWAY_STATE_KEY_PREFIX`. Stop the
gateway(s) first; then switch `ENGRAM_GATEWAY_STATE_BACKEND` and start them again.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from gateway.core.state import LocalState, RedisState
from gateway.core.state_copy import copy_state
from gateway.settings import GatewaySettings
from services.runtime.errors import EngramError


def run_copy(args: argparse.Namespace) -> int:
    settings = GatewaySettings(data_dir=args.data_dir) if args.data_dir else GatewaySettings()
    local = LocalState(settings.state_dir)
    shared = RedisState(settings.redis_url, settings.state_key_prefix, settings.audit_max_events)
    where_local = f"local state in {settings.state_dir}"
    where_redis = f"Redis state at {settings.redis_url} (prefix {settings.state_key_prefix!r})"
    try:
        # Local files must be idle: holding their gateway lock proves no gateway uses them.
        local.claim("engram gateway-state copy", 0)
        shared.claim("", 0)
        if args.to == "redis":
            print(f"copying {where_local} to {where_redis}")
            copied = copy_state(local, shared, target_name="Redis")
        else:
            print(
                f"copying {where_redis} to {where_local} (stop every gateway on that Redis "
                "first: writes made during the copy may be missed)"
            )
            copied = copy_state(shared, local, target_name="local")
    except EngramError as error:
        print(f"engram gateway-state copy: {error.message}")
        return 1
    finally:
        local.release()
        shared.release()
    print(copied.summary())
    print(
        f"now set ENGRAM_GATEWAY_STATE_BACKEND={args.to} for every gateway and start them "
        "again; the copied-from state is left as it was"
    )
    return 0


def add_gateway_state_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    state = sub.add_parser(
        "gateway-state", help="copy the gateway's tokens, stores and audit log between backends"
    )
    actions = state.add_subparsers(dest="state_command", required=True)
    copy = actions.add_parser(
        "copy",
        help="copy local state to Redis (scaling out to several gateways) or back",
    )
    copy.add_argument("--to", required=True, choices=["redis", "local"], help="the target")
    copy.add_argument(
        "--data-dir", type=Path, help="root of the local state (ENGRAM_DATA_DIR by default)"
    )
    copy.set_defaults(func=run_copy)
