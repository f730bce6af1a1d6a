"""`engram doctor [STORE ...] [--repair]`: ask a running stack to compare each store's engines
with each other (the public CheckStore operation, `POST /v1/stores/{store}:check`, through the
client library), and say what it found in plain words.

Exit status: 0 when every store is clean (or every finding was repaired), 1 when drift is
left, 2 when the stack could not be asked.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from engram.client import Client, EngramError
from engram.v1 import gateway_pb2

DEFAULT_URL = "http://127.0.0.1:8080"
# A check reads every drawer, chunk and keyword row of a store: minutes on a very large one.
TIMEOUT_S = 600.0


def render(report: gateway_pb2.StoreDoctorReport, *, repair: bool) -> str:
    """One store's findings, for a person at a terminal."""
    lines = []
    for check in report.checks:
        lines.append(
            f"{report.store} · {check.tier}: {check.items_checked} items compared across "
            f"{len(check.parts)} parts"
        )
        for drift in check.drift:
            examples = f" (e.g. {', '.join(drift.examples)})" if drift.examples else ""
            done = "repaired" if drift.repaired else ("NOT repaired" if repair else "to repair")
            lines.append(f"  ✗ {drift.part}: {drift.count} {drift.problem}{examples}")
            lines.append(f"    {done}: {drift.remedy}")
        if not check.drift:
            lines.append("  ✓ every part agrees")
    if report.drift == 0:
        verdict = "no drift"
    elif report.repaired == report.drift:
        verdict = f"{report.drift} items out of step, all repaired; run again to confirm"
    elif repair:
        verdict = (
            f"{report.drift} items out of step, {report.repaired} repaired; "
            "the rest need the action their line says"
        )
    else:
        verdict = f"{report.drift} items out of step: `engram doctor --repair` mends them"
    lines.append(f"{report.store}: {verdict}")
    return "\n".join(lines)


def left_over(report: gateway_pb2.StoreDoctorReport) -> int:
    """Items found out of step that this call did not mend."""
    return int(report.drift - report.repaired)


Check = Callable[[str, bool], gateway_pb2.StoreDoctorReport]


def check_stores(
    stores: Sequence[str], repair: bool, check: Check, out: Callable[[str], None]
) -> int:
    """Check each store in turn through `check` (store, repair); the exit status."""
    status = 0
    for store in stores:
        try:
            report = check(store, repair)
        except EngramError as error:
            out(f"{store}: the stack refused the check: {error}")
            status = 2
            continue
        out(render(report, repair=repair))
        if left_over(report):
            status = max(status, 1)
    return status


def run_doctor(args: argparse.Namespace, token: str) -> int:
    url = args.url or os.environ.get("ENGRAM_URL", DEFAULT_URL)
    try:
        with Client(rest=url, token=token, timeout_s=TIMEOUT_S) as client:
            stores = list(args.store)
            if not stores:
                listed = client.list_stores()
                stores = [info.spec.name for info in listed.stores if info.open]
                if not stores:
                    print("no open store to check (this token sees none)")
                    return 0

            def check(store: str, repair: bool) -> gateway_pb2.StoreDoctorReport:
                return client.check_store(store=store, repair=repair)

            return check_stores(stores, args.repair, check, print)
    except EngramError as error:
        print(f"engram doctor: cannot ask the stack at {url}: {error}", file=sys.stderr)
        return 2


def add_doctor_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], token_of: Callable[[str], str]
) -> None:
    doctor = sub.add_parser(
        "doctor",
        help="compare each store's vectors, keyword rows, mirror, links and catalog; --repair",
    )
    doctor.add_argument("store", nargs="*", help="stores to check (default: every open store)")
    doctor.add_argument("--repair", action="store_true", help="mend what is found")
    doctor.add_argument("--url", help=f"gateway base URL (ENGRAM_URL, default {DEFAULT_URL})")
    doctor.add_argument(
        "--token", help="admin bearer token (ENGRAM_TOKEN; else `make run`'s data/run/dev-token)"
    )

    def run(args: argparse.Namespace) -> int:
        token = token_of(args.token or "")
        if not token:
            print(
                "engram doctor needs an admin token: --token, ENGRAM_TOKEN, or the development "
                "token `make run` keeps in data/run/dev-token",
                file=sys.stderr,
            )
            return 2
        return run_doctor(args, token)

    doctor.set_defaults(func=run)
