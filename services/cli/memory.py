"""The CLI's everyday commands over the client library: `engram stores`, `engram search`,
`engram add`, `engram export`, `engram jobs`. Each prints what a person reads, or with
`--json` one JSON object per line (the REST face's form of the answer) for scripts; exit
statuses are `services.cli.connect`'s."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engram.client import Client
from engram.v1 import authoring_pb2, common_pb2, corpus_pb2, gateway_pb2, retrieval_pb2

from services.cli.connect import (
    EXIT_OK,
    EXIT_REFUSED,
    add_connection_arguments,
    emit,
    run_command,
)
from services.cli.progress import ProgressPrinter, progress_line, state_name

JOB_ENDED_WELL = common_pb2.JOB_STATE_DONE


# A move copies every tier's snapshot of a store: give it as long as a backup.
MOVE_DEADLINE_S = 3600.0


def _moves(args: argparse.Namespace, client: Client) -> int:
    """`--move NAME [--to tier=replica ...]` or `--rebalance`: each store that must move is
    moved (drained, copied, the old copy dropped), one after another; says what moved."""
    to: dict[str, str] = {}
    for pair in args.to or []:
        tier, sep, replica = pair.partition("=")
        if not sep or not tier or not replica:
            print(f"engram stores: --to takes tier=replica, got {pair!r}", file=sys.stderr)
            return EXIT_REFUSED
        to[tier] = replica
    names = [args.move] if args.move else [i.spec.name for i in client.list_stores().stores]
    for name in names:
        answer = client.move_store(name=name, to=to, deadline_s=MOVE_DEADLINE_S)

        def text(answer: gateway_pb2.MoveStoreResponse = answer, name: str = name) -> str:
            if not answer.moved:
                return f"{name}: in place"
            return f"{name}: " + ", ".join(
                f"{m.tier} {m.from_replica} -> {m.to_replica} ({m.bytes / 1e6:.1f} MB)"
                for m in answer.moved
            )

        emit(args, answer, text)
    return EXIT_OK


def _stores(args: argparse.Namespace, client: Client) -> int:
    if args.move or args.rebalance:
        return _moves(args, client)
    if args.create:
        spec = gateway_pb2.StoreSpec(name=args.create, description=args.description or "")
        if args.mode == "companion":
            spec.deployment_mode = common_pb2.DEPLOYMENT_MODE_COMPANION
        created = client.create_store(spec=spec)
        emit(args, created, lambda: f"created {created.spec.name} ({args.mode} mode)")
        return EXIT_OK
    answer = client.list_stores()
    if args.json:
        for info in answer.stores:
            emit(args, info, str)
        return EXIT_OK
    if not answer.stores:
        print("no store this token sees")
    for info in answer.stores:
        spec = info.spec
        state = "open" if info.open else "closed"
        companion = spec.deployment_mode == common_pb2.DEPLOYMENT_MODE_COMPANION
        mode = "companion" if companion else "default"
        note = f" · {info.attention}" if info.attention else ""
        print(f"{spec.name}\t{mode}\t{info.drawer_count} drawers\t{state}{note}")
    return EXIT_OK


def _indented(text: str) -> str:
    return "\n".join("   " + line for line in text.splitlines())


def _hit_text(hit: retrieval_pb2.SearchHit) -> str:
    header = hit.header or f"[{hit.drawer.memory_type} · {hit.drawer.room}]"
    return f"{hit.rank or ''}. {header} ({hit.score:.3f})\n{_indented(hit.drawer.content)}"


def _raw_hit_text(number: int, hit: corpus_pb2.RawHit) -> str:
    chunk = hit.chunk
    place = chunk.attributes.get("conversation_title", "") or " › ".join(chunk.heading_path)
    if chunk.line_start:
        place += f" (lines {chunk.line_start}–{chunk.line_end})"
    where = f"{chunk.session_id} #{chunk.ordinal}" + (f" · {place.strip()}" if place else "")
    head = f"{number}. [{chunk.origin_kind} · {where}] ({hit.score:.3f})"
    return f"{head}\n{_indented(chunk.content)}"


def _search(args: argparse.Namespace, client: Client) -> int:
    if args.raw:
        raw = corpus_pb2.SearchRawRequest(query=args.query, hybrid=True)
        if args.n:
            raw.n_results = args.n
        answer_raw = client.search_raw(raw, store=args.store)
        emit(
            args,
            answer_raw,
            lambda: (
                "\n".join(_raw_hit_text(n, h) for n, h in enumerate(answer_raw.results, 1))
                or "nothing stored matches"
            ),
        )
        return EXIT_OK
    request = retrieval_pb2.SearchRequest(query=args.query, intent=args.intent or "")
    if args.n:
        request.n_results = args.n
    if args.min_score is not None:
        request.min_score = args.min_score
    if args.room:
        request.room = args.room
    answer = client.search(request, store=args.store)

    def text() -> str:
        how = "inferred" if answer.intent_inferred else "given"
        lines = [f"intent: {answer.intent} ({how})"]
        if answer.notice:
            lines.append(f"note: {answer.notice}")
        lines += [_hit_text(hit) for hit in answer.results]
        if not answer.results:
            lines.append("nothing stored answers this above the store's floor")
        return "\n".join(lines)

    emit(args, answer, text)
    return EXIT_OK


def _add(args: argparse.Namespace, client: Client) -> int:
    content = sys.stdin.read() if args.content == "-" else args.content
    draft = authoring_pb2.DrawerDraft(
        content=content.strip(),
        memory_type=args.type,
        wing=args.room.split("/", 1)[0],
        room=args.room,
        added_by=args.by,
    )
    answer: authoring_pb2.WriteDrawerResponse
    if args.signature:
        answer = client.add_drawer_signed(
            store=args.store, drawer=draft, signature=args.signature, allow_new_wing=True
        )
    else:
        answer = client.add_drawer(store=args.store, drawer=draft, allow_new_wing=True)

    def text() -> str:
        verb = "already stored as" if answer.duplicate else "stored"
        lines = [f"{verb} {answer.drawer.id}"]
        lines += [f"note: {warning}" for warning in answer.warnings]
        return "\n".join(lines)

    emit(args, answer, text)
    return EXIT_OK


def _export(args: argparse.Namespace, client: Client) -> int:
    out = args.output.open("wb") if args.output else sys.stdout.buffer
    lines = 0
    try:
        for piece in client.export_drawers(args.store):
            out.write(piece)
            lines += piece.count(b"\n")
    finally:
        if args.output:
            out.close()
    if args.output:
        print(f"{lines} drawers → {args.output}", file=sys.stderr)
    return EXIT_OK


def follow_job(args: argparse.Namespace, client: Client, job_id: str) -> int:
    """Follow a job to its end with a progress line; its final state decides the status."""
    printer = ProgressPrinter(quiet=args.json)
    job = client.wait_job(job_id, on_progress=printer)
    emit(args, job, lambda: job_summary(job))
    return EXIT_OK if job.state == JOB_ENDED_WELL and not job.errors_total else EXIT_REFUSED


def job_summary(job: common_pb2.Job) -> str:
    lines = [progress_line(job)]
    if job.error:
        lines.append(f"why: {job.error}")
    for error in job.errors:
        lines.append(f"  ✗ {error.item_id}: {error.message}")
    if job.errors_total > len(job.errors):
        lines.append(f"  … and {job.errors_total - len(job.errors)} more")
    return "\n".join(lines)


def _jobs(args: argparse.Namespace, client: Client) -> int:
    if args.cancel:
        job = client.cancel_job(id=args.cancel)
        emit(args, job, lambda: f"{job.id}: cancel requested ({state_name(job.state)})")
        return EXIT_OK
    if args.job:
        if args.follow:
            return follow_job(args, client, args.job)
        job = client.get_job(id=args.job)
        emit(args, job, lambda: job_summary(job))
        return EXIT_OK
    answer = client.list_jobs(store=args.store or "", limit=args.limit)
    if args.json:
        for job in answer.jobs:
            emit(args, job, str)
    else:
        for job in answer.jobs:
            print(f"{progress_line(job)} · {job.store}")
        if not answer.jobs:
            print("no jobs")
    return EXIT_OK


def add_memory_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    stores = sub.add_parser("stores", help="list the stores this token sees; --create one")
    stores.add_argument("--create", metavar="NAME", help="create a store (admin token)")
    stores.add_argument("--mode", choices=("default", "companion"), default="default")
    stores.add_argument("--description", help="what the new store holds")
    stores.add_argument(
        "--move",
        metavar="NAME",
        help="move a store to the tier replicas rendezvous hashing now picks, or --to (admin)",
    )
    stores.add_argument(
        "--to",
        action="append",
        metavar="TIER=REPLICA",
        help="with --move: the replica a tier's data goes to (repeatable)",
    )
    stores.add_argument(
        "--rebalance",
        action="store_true",
        help="move every store that is not where rendezvous hashing now puts it (after "
        "replicas were added, or to empty the draining ones); says what moved",
    )
    add_connection_arguments(stores)
    stores.set_defaults(func=lambda a: run_command("stores", a, lambda c: _stores(a, c)))

    search = sub.add_parser("search", help="search a store's drawers (--raw: its raw memories)")
    search.add_argument("store")
    search.add_argument("query")
    search.add_argument("-n", type=int, help="results wanted (default: the store's)")
    search.add_argument("--intent", help="the query's intent (default: inferred)")
    search.add_argument("--min-score", type=float, help="the floor (default: the store's)")
    search.add_argument("--room", help="only this room (wing/name)")
    search.add_argument("--raw", action="store_true", help="search raw sessions and files")
    add_connection_arguments(search)
    search.set_defaults(func=lambda a: run_command("search", a, lambda c: _search(a, c)))

    add = sub.add_parser("add", help="write one drawer (signed with --signature)")
    add.add_argument("store")
    add.add_argument("content", help="the memory, third person; - reads it from stdin")
    add.add_argument("--type", required=True, help="memory type, e.g. decision, observation")
    add.add_argument("--room", required=True, help="wing/name, e.g. projects/engram")
    add.add_argument("--by", required=True, help="who said or decided it")
    add.add_argument("--signature", help="a verbatim phrase of the content: a canonical write")
    add_connection_arguments(add)
    add.set_defaults(func=lambda a: run_command("add", a, lambda c: _add(a, c)))

    export = sub.add_parser("export", help="a store's drawers as JSONL (stdout or --output)")
    export.add_argument("store")
    export.add_argument("--output", "-o", type=Path, help="write here instead of stdout")
    add_connection_arguments(export)
    export.set_defaults(
        func=lambda a: run_command("export", a, lambda c: _export(a, c), stream_timeout_s=3600)
    )

    jobs = sub.add_parser("jobs", help="list jobs, show one, follow one (--follow), cancel one")
    jobs.add_argument("job", nargs="?", help="a job id")
    jobs.add_argument("--follow", "-f", action="store_true", help="follow it with a progress bar")
    jobs.add_argument("--cancel", metavar="JOB", help="ask a job to stop")
    jobs.add_argument("--store", help="only this store's jobs")
    jobs.add_argument("--limit", type=int, default=20)
    add_connection_arguments(jobs)
    jobs.set_defaults(func=lambda a: run_command("jobs", a, lambda c: _jobs(a, c)))
