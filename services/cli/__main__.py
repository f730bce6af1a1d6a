"""`engram` — the operator CLI: `engram up`, `engram bench`, ..."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def _up(args: argparse.Namespace) -> int:
    from services.launcher.settings import LauncherSettings
    from services.launcher.up import run_up

    overrides = {"data_dir": args.data_dir} if args.data_dir else {}
    return run_up(LauncherSettings(**overrides))


def _bench(args: argparse.Namespace) -> int:
    from services.bench.run import run_bench

    return run_bench(quick=args.quick, only=args.only)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="engram", description="Engram operator CLI")
    sub = parser.add_subparsers(dest="command", required=True)

    up = sub.add_parser("up", help="bring the whole stack up on this machine (Ctrl-C stops it)")
    up.add_argument("--data-dir", type=Path, help="root of local state (ENGRAM_DATA_DIR)")
    up.set_defaults(func=_up)

    bench = sub.add_parser("bench", help="print benchmark figures (never asserted by tests)")
    bench.add_argument("--quick", action="store_true", help="CI-sized smoke run")
    bench.add_argument("--only", action="append", default=[], help="run only these sections")
    bench.set_defaults(func=_bench)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    sys.exit(args.func(args))


if __name__ == "__main__":
    main()
