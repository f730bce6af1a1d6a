"""`engram` — the operator CLI: `engram up`, `engram bench`, ..."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from services.cli.connect import token_of


def _up(args: argparse.Namespace) -> int:
    from services.launcher.settings import LauncherSettings
    from services.launcher.up import run_up

    overrides = {"data_dir": args.data_dir} if args.data_dir else {}
    return run_up(LauncherSettings(**overrides))


def _drawer_counts(text: str) -> tuple[int, ...]:
    """`--sizes`: comma-separated positive drawer counts."""
    try:
        counts = tuple(int(part.replace("_", "")) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of drawer counts") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give one or more counts of at least 1")
    return counts


def _bench(args: argparse.Namespace) -> int:
    from services.bench.run import run_bench

    return run_bench(quick=args.quick, only=args.only, sizes=tuple(args.sizes))


def _eval(args: argparse.Namespace) -> int:
    import asyncio
    import os

    from services.evaluation.run import SETS, EvalOptions, default_data_dir, run_eval
    from services.evaluation.target import ClientTarget, EvalTarget

    sets = tuple(s.strip() for s in args.sets.split(",") if s.strip()) if args.sets else SETS
    options = EvalOptions(
        sets=sets,
        quick=args.quick,
        data_dir=args.data or default_data_dir(),
        thesis_files=tuple(args.thesis),
        out_root=args.out,
        compare_with=args.compare,
        concurrency=args.concurrency,
        scifact_queries=args.scifact_queries,
        locomo_conversations=args.locomo_conversations,
        locomo_authored=not args.in_process,
    )

    token = ""
    if not args.in_process:
        token = token_of(args.token or "")
    if not token and not args.in_process:
        print(
            "engram eval needs an admin token: --token, ENGRAM_TOKEN, or the development "
            "token `make run` keeps in data/run/dev-token",
            file=sys.stderr,
        )
        return 2

    async def run() -> int:
        target: EvalTarget
        if args.in_process:
            from services.evaluation.inprocess import InProcessTarget

            target = await InProcessTarget().start()
        elif args.grpc:
            target = ClientTarget.grpc(args.grpc_addr, token)
        else:
            url = args.url or os.environ.get("ENGRAM_URL", "http://127.0.0.1:8080")
            target = ClientTarget.rest(url, token)
        try:
            _, report = await run_eval(target, options)
        finally:
            await target.aclose()
        print(f"report: {report}")
        return 0

    return asyncio.run(run())


def _soak(args: argparse.Namespace) -> int:
    import os

    from services.bench.soak import SoakOptions, run_soak

    token = token_of(args.token or "")
    if not token:
        print(
            "engram soak needs an admin token: --token, ENGRAM_TOKEN, or the development "
            "token `make run` keeps in data/run/dev-token",
            file=sys.stderr,
        )
        return 2
    options = SoakOptions(
        url=args.url or os.environ.get("ENGRAM_URL", "http://127.0.0.1:8080"),
        token=token,
        clients=args.clients,
        seconds=args.seconds,
        keep=args.keep,
        timeout_s=args.timeout,
        shared_raw_session=args.shared_raw_session,
    )
    return run_soak(options)


def _probe(args: argparse.Namespace) -> int:
    """One readiness check, as `engram up` makes it (TLS from ENGRAM_TLS_*): for probes that
    must speak TLS (Kubernetes' own gRPC probe does not)."""
    import os

    from services.launcher.probes import GrpcHealth, HttpReady, Probe

    if args.server_name:  # this one-shot process's TLS check names the tier's Service
        os.environ["ENGRAM_TLS_SERVER_NAME"] = args.server_name
    host, _, port = args.address.rpartition(":")
    probe: Probe = HttpReady(args.http_path) if args.http_path else GrpcHealth(args.service)
    ready = probe.ready(host.strip("[]") or "127.0.0.1", int(port))
    if not ready:
        print(f"{args.address} is not {probe.ready_word}", file=sys.stderr)
    return 0 if ready else 1


def _classifier_model(args: argparse.Namespace) -> int:
    """train or check one of the shipped text classifiers (intent or sentence type)."""
    import numpy as np
    import numpy.typing as npt

    from services.embedder.core import load_model, resolve_model_path
    from services.embedder.settings import EmbedderSettings
    from services.runtime import textclass_training as training

    trainer: Any
    load: Callable[[str], Any]
    if args.command == "intent-model":
        from services.retrieval import intent_training as trainer
        from services.retrieval.core.intent import load_intent_model, model_path

        load, path_of, rows_of = load_intent_model, model_path, trainer.load_queries
    else:
        from services.authoring import type_training as trainer
        from services.authoring.core.sentence_types import load_type_model, type_model_path

        load, path_of, rows_of = load_type_model, type_model_path, trainer.load_sentences

    # The model the embedder serves (ENGRAM_EMBEDDER_MODEL; empty: the bundled one), so a
    # retrain after a model change learns the vectors searches will give it.
    served = EmbedderSettings().model
    model = load_model(resolve_model_path(served), device="cpu", fp16=False, torch_threads=2)

    def embed(texts: list[str]) -> npt.NDArray[np.float32]:
        return model.encode(texts, batch_size=64)

    status = 0
    for library in args.library or ("default", "companion"):
        if args.action == "train":
            trained = trainer.train(library, embed, fingerprint=model.fingerprint)
            training.write_model(trained.to_json(), path_of(library))
            print(
                f"{library}: {trained.metadata['train_rows']} training rows, "
                f"{len(trained.vocabulary)} terms, validation accuracy "
                f"{trained.metadata['validation_accuracy']:.3f} → {path_of(library)}"
            )
            continue
        shipped = load(library)
        unfit = shipped.unfit_for(model.dimension, model.fingerprint)
        validation = [r for r in rows_of(library) if r.split == "validation"]
        figure = training.validation_accuracy(shipped, validation, None if unfit else embed)
        files = trainer.data_files(library)
        stale = [
            why
            for why, holds in (
                ("the labelled data changed since training", shipped.metadata.get("data_sha256")
                 != training.data_digest(files)),
                (f"{unfit}: it reads the words alone", bool(unfit)),
            )
            if holds
        ]  # fmt: skip
        print(
            f"{library}: validation accuracy {figure:.3f} on {len(validation)} rows"
            + "".join(f"; STALE: {why}" for why in stale)
        )
        status = status or (1 if stale else 0)
    return status


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
    bench.add_argument(
        "--sizes",
        type=_drawer_counts,
        default=(),
        help="store sizes the retrieval section measures, e.g. 10000,100000 (default: "
        "10k, 100k and 1M; --quick: 2k)",
    )
    bench.set_defaults(func=_bench)
    ev = sub.add_parser("eval", help="retrieval quality on the standard sets → eval/results/")
    ev.add_argument(
        "--sets",
        help="comma-separated: thesis,supersession,updates,scifact,locomo,composer (default: all)",
    )
    ev.add_argument("--quick", action="store_true", help="CI-sized subsets (not comparable)")
    ev.add_argument("--url", help="gateway base URL (ENGRAM_URL, default http://127.0.0.1:8080)")
    ev.add_argument(
        "--token", help="admin bearer token (ENGRAM_TOKEN; else `make run`'s data/run/dev-token)"
    )
    ev.add_argument(
        "--grpc", action="store_true", help="use the gateway's public gRPC API instead of REST"
    )
    ev.add_argument("--grpc-addr", default="127.0.0.1:50050", help="with --grpc")
    ev.add_argument(
        "--in-process",
        action="store_true",
        help="start the embedder, retrieval and corpus tiers in this process (no stack, no "
        "token; LoCoMo's authored mode is skipped)",
    )
    ev.add_argument("--data", type=Path, help="evaluation data (ENGRAM_EVAL_DATA, ../shared/eval)")
    ev.add_argument(
        "--thesis",
        type=Path,
        action="append",
        default=[],
        help="a thesis-schema file (repeat; default: the shared dev sets and eval/sets/thesis)",
    )
    ev.add_argument("--out", type=Path, default=Path("eval/results"), help="results root")
    ev.add_argument("--compare", type=Path, help="a previous results.json: print the deltas")
    ev.add_argument("--concurrency", type=int, default=4, help="searches in flight")
    ev.add_argument("--scifact-queries", type=int, help="only the first N SciFact test queries")
    ev.add_argument("--locomo-conversations", type=int, help="only the first N conversations")
    ev.set_defaults(func=_eval)
    soak = sub.add_parser(
        "soak",
        help="bounded load test against a running stack: a mix of reads and writes from many "
        "clients, then a check that every acknowledged write is there once",
    )
    soak.add_argument("--url", help="gateway base URL (ENGRAM_URL, default http://127.0.0.1:8080)")
    soak.add_argument(
        "--token", help="admin bearer token (ENGRAM_TOKEN; else `make run`'s data/run/dev-token)"
    )
    soak.add_argument("--clients", type=int, default=64, help="concurrent simulated clients")
    soak.add_argument("--seconds", type=float, default=60.0, help="length of the load window")
    soak.add_argument(
        "--timeout",
        type=float,
        default=45.0,
        help="per-request timeout in seconds (a request past it counts as an error)",
    )
    soak.add_argument("--keep", action="store_true", help="keep the soak store afterwards")
    soak.add_argument(
        "--shared-raw-session",
        action="store_true",
        help="every client adds its raw memories to one session (default: one each)",
    )
    soak.set_defaults(func=_soak)
    intent = sub.add_parser(
        "intent-model", help="train or check the intent classifiers (eval/sets/intent)"
    )
    intent.add_argument("action", choices=("train", "check"))
    intent.add_argument(
        "--library", action="append", choices=("default", "companion"), help="(repeatable)"
    )
    intent.set_defaults(func=_classifier_model)
    types = sub.add_parser(
        "type-model",
        help="train or check the composer's sentence type classifiers (eval/sets/types)",
    )
    types.add_argument("action", choices=("train", "check"))
    types.add_argument(
        "--library", action="append", choices=("default", "companion"), help="(repeatable)"
    )
    types.set_defaults(func=_classifier_model)
    probe = sub.add_parser(
        "probe", help="exit 0 when a tier's gRPC health says SERVING (or --http PATH answers 200)"
    )
    probe.add_argument("address", help="host:port")
    probe.add_argument("service", nargs="?", default="", help="gRPC service name ('' = overall)")
    probe.add_argument("--http", dest="http_path", help="an HTTP path to GET instead, e.g. /readyz")
    probe.add_argument(
        "--server-name", default="", help="the name its TLS certificate carries (ENGRAM_TLS_*)"
    )
    probe.set_defaults(func=_probe)
    config = sub.add_parser("config", help="print every setting, its variable and default")
    config.add_argument("--write-readme", type=Path, help="rewrite the table in this README")
    config.set_defaults(func=_config)

    from services.cli.backup import add_backup_parsers
    from services.cli.doctor import add_doctor_parser
    from services.cli.gateway_state import add_gateway_state_parser
    from services.cli.imports import add_import_parser
    from services.cli.memory import add_memory_parsers
    from services.cli.tokens import add_token_parser

    add_memory_parsers(sub)
    add_import_parser(sub)
    add_token_parser(sub)
    add_gateway_state_parser(sub)
    add_doctor_parser(sub, token_of)
    add_backup_parsers(sub, token_of)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    sys.exit(args.func(args))


if __name__ == "__main__":
    main()
