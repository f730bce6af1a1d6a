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


def _config(args: argparse.Namespace) -> int:
    from services.cli.config import markdown, write_readme_table

    if args.write_readme:
        args.write_readme.write_text(write_readme_table(args.write_readme.read_text()))
        print(f"updated the configuration table in {args.write_readme}")
    else:
        print(markdown())
    return 0


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
    config = sub.add_parser("config", help="print every setting, its variable and default")
    config.add_argument("--write-readme", type=Path, help="rewrite the table in this README")
    config.set_defaults(func=_config)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    sys.exit(args.func(args))


if __name__ == "__main__":
    main()
