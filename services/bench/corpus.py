"""Corpus ingest throughput: markdown notes and Claude Code transcripts uploaded through gRPC and
ingested end to end through the Redis job queue by real embedder and corpus processes, next to
the embedding model's raw throughput on the very same chunk texts.

The embedder should be the bottleneck, so the target is ingest ≥ 80% of raw (batches of 64 in
file order). Beside it: the same comparison on CPU seconds, which the neighbours' load on a
shared machine barely moves; the model's ceiling on length-sorted batches; and `ingest_file`
(the job's per-file step) replayed in this process against the same embedder process with its
stages timed, to say where the time goes. Figures are printed, never asserted.
"""

from __future__ import annotations

import asyncio
import inspect
import io
import json
import os
import random
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from subprocess import Popen
from typing import Any

import redis
from engram.v1 import common_pb2, corpus_pb2, corpus_pb2_grpc

from services.bench.embedder import _free_port
from services.bench.report import markdown_table
from services.corpus import files
from services.corpus.core import ChunkOptions, SizeTierPolicy, chunk_file, detect_type
from services.corpus.ingest import ingest_file
from services.corpus.settings import CorpusSettings
from services.corpus.store import CorpusStore
from services.embedder.client import EmbedderClient
from services.embedder.core import EmbeddingModel, load_model, resolve_model_path
from services.launcher.supervisor import spawn_tier, stop_process_group, wait_until_serving
from services.launcher.tiers import TIERS
from services.runtime.grpc_client import ClientPolicy, create_channel
from services.runtime.jobs import JobQueue, is_terminal
from services.runtime.settings import StorageSettings

STORE = common_pb2.StoreContext(name="bench-corpus")
TARGET_RATIO = 0.8
RAW_BATCH = 64
TORCH_THREADS = 1
UPLOAD_PIECE = 64 * 1024
JOB_POLL_S = 0.05  # the client-side figure is late by at most this much
MB = 1_000_000


@dataclass(frozen=True)
class Plan:
    """How much to generate: `quick` is a smoke run of the same code paths."""

    markdown_files: int
    markdown_bytes: int  # per file, roughly
    transcripts: int
    turns: int  # user prompts per transcript, each answered (often through a tool call)
    replay_share: float  # of each corpus's files: the stage replay and the sorted ceiling
    job_timeout_s: float

    @classmethod
    def of(cls, quick: bool) -> Plan:
        if quick:
            return cls(20, 10_000, 10, 40, replay_share=1.0, job_timeout_s=600)
        return cls(100, 20_000, 50, 80, replay_share=0.2, job_timeout_s=3600)


# ---------------------------------------------------------------- deterministic corpora

_SUBJECTS = [
    "The retrieval tier", "Our on-call rotation", "The nightly backup job", "Kyle",
    "The migration script", "The ingest worker", "The staging cluster", "Marco",
    "The design review", "The embedding cache", "A flaky integration test", "The billing service",
]  # fmt: skip
_VERBS = [
    "now depends on", "was slowed down by", "should not block", "replaced", "keeps a copy of",
    "reads", "was rewritten around", "sometimes times out waiting for", "documents",
    "no longer needs",
]  # fmt: skip
_OBJECTS = [
    "the Redis job queue", "the FTS5 sidecar of every store", "a 64 KiB upload buffer",
    "the quarterly compliance export", "the shard placement map", "the Postgres read replica",
    "the feature flag for hybrid search", "the incident runbook", "the snapshot retention policy",
    "the customer import pipeline", "the HNSW index parameters", "the deploy checklist",
]  # fmt: skip
_CLAUSES = [
    "", "", " because the old path retried forever", " after the March outage",
    " until the vendor ships a fix", " so that nobody is paged twice for one alert",
    " which nobody had measured before", " as agreed in the Tuesday review",
    " when more than {n} files arrive at once", " for stores larger than {n} GB",
    " in roughly {n} percent of the runs",
]  # fmt: skip
_SECTIONS = [
    "Background", "Decision", "Open questions", "Rollout plan", "Measurements", "Risks",
    "Alternatives considered", "Timeline", "Runbook", "Follow-ups", "Context", "Consequences",
]  # fmt: skip
_PROJECTS = ["Atlas", "Beacon", "Cobalt", "Driftwood", "Ember", "Fjord", "Granite", "Harbor"]
_COMMANDS = [
    "pytest -q tests/services/corpus", "ruff check services", "git diff --stat",
    "make lint", "engram bench --only corpus --quick", "redis-cli --scan --pattern 'engram:*'",
]  # fmt: skip
_PATHS = [
    "services/corpus/ingest.py", "services/retrieval/pool/pool.py", "services/runtime/jobs.py",
    "gateway/routes/files.py", "docs/decisions/0004-embedder-cpu-threads.md",
]  # fmt: skip


def _sentence(rng: random.Random) -> str:
    clause = rng.choice(_CLAUSES).format(n=rng.randint(2, 90))
    return f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}{clause}."


def _paragraph(rng: random.Random, low: int = 3, high: int = 6) -> str:
    return " ".join(_sentence(rng) for _ in range(rng.randint(low, high)))


def _extra_block(rng: random.Random) -> str:
    """A list or a code block now and then, as real notes have."""
    roll = rng.random()
    if roll < 0.25:
        return "\n".join(f"- {_sentence(rng)}" for _ in range(rng.randint(2, 5)))
    if roll < 0.35:
        lines = "\n".join(f"$ {rng.choice(_COMMANDS)}" for _ in range(rng.randint(1, 4)))
        return f"```bash\n{lines}\n```"
    return ""


def markdown_document(index: int, target_bytes: int, rng: random.Random) -> str:
    """A note of nested sections (#, ##, ###, sometimes ####) of about `target_bytes`."""
    project = rng.choice(_PROJECTS)
    blocks = [f"# {project} design notes {index}", _paragraph(rng)]
    size = sum(len(b) + 2 for b in blocks)
    while size < target_bytes:
        section = [f"## {rng.choice(_SECTIONS)}: {rng.choice(_OBJECTS)}", _paragraph(rng)]
        for sub in range(rng.randint(0, 3)):
            section += [f"### {rng.choice(_SECTIONS)} {sub + 1}", _paragraph(rng, 2, 5)]
            if rng.random() < 0.2:
                section += [f"#### Detail {sub + 1}.1", _paragraph(rng, 1, 3)]
            section.append(_extra_block(rng))
        section = [block for block in section if block]
        blocks += section
        size += sum(len(b) + 2 for b in section)
    return "\n\n".join(blocks) + "\n"


def _tool_call(rng: random.Random, tool_id: str) -> tuple[dict[str, Any], str, bool]:
    """A Claude Code tool_use block, the output it produced, and whether it failed."""
    kind = rng.choice(["Bash", "Read", "Grep", "Edit"])
    path = rng.choice(_PATHS)
    if kind == "Bash":
        tool_input: dict[str, Any] = {"command": rng.choice(_COMMANDS)}
    elif kind == "Grep":
        tool_input = {"pattern": rng.choice(["ingest_file", "JobQueue", "TODO"]), "path": path}
    elif kind == "Read":
        tool_input = {"file_path": f"/home/dev/engram/{path}"}
    else:
        tool_input = {"file_path": f"/home/dev/engram/{path}", "old_string": "a", "new_string": "b"}
    lines = [f"{path}:{rng.randint(1, 400)}: {_sentence(rng)}" for _ in range(rng.randint(3, 30))]
    block = {"type": "tool_use", "id": tool_id, "name": kind, "input": tool_input}
    return block, "\n".join(lines), rng.random() < 0.1


def transcript(index: int, turns: int, rng: random.Random) -> str:
    """A Claude Code session (one JSON record a line): prompts, answers, tool calls, results."""
    session = str(uuid.UUID(int=rng.getrandbits(128)))
    clock = datetime(2025, 3, 1, 9, 0, tzinfo=UTC) + timedelta(days=index)
    parent: str | None = None
    lines: list[str] = []

    def record(kind: str, content: str | list[dict[str, Any]]) -> None:
        nonlocal parent, clock
        clock += timedelta(seconds=rng.randint(5, 90))
        me = str(uuid.UUID(int=rng.getrandbits(128)))
        line = {
            "type": kind,
            "sessionId": session,
            "uuid": me,
            "parentUuid": parent,
            "timestamp": clock.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "cwd": "/home/dev/engram",
            "message": {"role": kind, "content": content},
        }
        lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
        parent = me

    for _ in range(turns):
        record("user", f"Can you check why {rng.choice(_OBJECTS)} misbehaves? {_sentence(rng)}")
        answer: list[dict[str, Any]] = [{"type": "text", "text": _paragraph(rng, 2, 5)}]
        if rng.random() < 0.7:
            tool_id = f"toolu_{rng.getrandbits(64):016x}"
            block, output, failed = _tool_call(rng, tool_id)
            record("assistant", [*answer, block])
            result = {
                "type": "tool_result",
                "tool_use_id": tool_id,
                "content": output,
                "is_error": failed,
            }
            record("user", [result])
            record("assistant", [{"type": "text", "text": _paragraph(rng, 1, 3)}])
        else:
            record("assistant", answer)
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Corpus:
    """Files of one kind, written under a folder of the run's temp dir."""

    name: str
    paths: tuple[Path, ...]

    @property
    def size_bytes(self) -> int:
        return sum(path.stat().st_size for path in self.paths)


def write_corpora(root: Path, plan: Plan) -> list[Corpus]:
    """The markdown and transcript corpora of `plan`, the same bytes on every run."""
    rng = random.Random(20250301)
    markdown_dir, jsonl_dir = root / "markdown", root / "transcripts"
    markdown_dir.mkdir(parents=True)
    jsonl_dir.mkdir(parents=True)
    notes = []
    for i in range(plan.markdown_files):
        path = markdown_dir / f"note-{i:03d}.md"
        path.write_text(markdown_document(i, plan.markdown_bytes, rng), encoding="utf-8")
        notes.append(path)
    sessions = []
    for i in range(plan.transcripts):
        path = jsonl_dir / f"session-{i:03d}.jsonl"
        path.write_text(transcript(i, plan.turns, rng), encoding="utf-8")
        sessions.append(path)
    return [Corpus("markdown", tuple(notes)), Corpus("jsonl transcripts", tuple(sessions))]


def chunk_texts(corpus: Corpus, options: ChunkOptions) -> list[str]:
    """The texts the ingest embeds, by the tier's own chunker (every file is in the FULL tier)."""
    texts: list[str] = []
    for path in corpus.paths:
        data = path.read_bytes()
        result = chunk_file(detect_type(path.name, data[:8192]), io.BytesIO(data), options=options)
        texts += [draft.content for draft in result.chunks]
    return texts


# ---------------------------------------------------------------- the real processes


@dataclass(frozen=True)
class Stack:
    """The running tier processes and where to reach them."""

    embedder_target: str
    corpus_target: str
    embedder_pid: int
    corpus_pid: int
    redis_url: str
    queue: str


def start_stack(root: Path, redis_url: str, queue: str, started: list[Popen[bytes]]) -> Stack:
    """Start an embedder and a corpus process. Each is appended to `started` as soon as it
    exists, so the caller's cleanup stops it even when a later start fails."""
    embedder_port, corpus_port = _free_port(), _free_port()
    embedder_target = f"127.0.0.1:{embedder_port}"
    env = dict(os.environ)
    env.update(
        ENGRAM_EMBEDDER_HOST="127.0.0.1",
        ENGRAM_EMBEDDER_PORT=str(embedder_port),
        ENGRAM_EMBEDDER_ALLOW_CPU="1",
        ENGRAM_EMBEDDER_TORCH_THREADS=str(TORCH_THREADS),
        ENGRAM_EMBEDDER_METRICS_PORT="0",
        ENGRAM_EMBEDDER_LOG_FORMAT="text",
        ENGRAM_CORPUS_HOST="127.0.0.1",
        ENGRAM_CORPUS_PORT=str(corpus_port),
        ENGRAM_CORPUS_DATA_DIR=str(root / "corpus-data"),
        ENGRAM_CORPUS_REDIS_URL=redis_url,
        ENGRAM_CORPUS_JOB_QUEUE=queue,
        ENGRAM_CORPUS_EMBEDDER_ADDR=embedder_target,
        ENGRAM_CORPUS_METRICS_PORT="0",
        ENGRAM_CORPUS_LOG_FORMAT="text",
        ENGRAM_VECTOR_BACKEND="edge",  # the embedded store the figures are about
    )
    for name, port in (("embedder", embedder_port), ("corpus", corpus_port)):
        spec, log = next(t for t in TIERS if t.name == name), root / f"{name}.log"
        started.append(spawn_tier(spec, env, log))
        wait_until_serving(started[-1], spec, "127.0.0.1", port, log, 180)
    return Stack(
        embedder_target,
        f"127.0.0.1:{corpus_port}",
        started[0].pid,
        started[1].pid,
        redis_url,
        queue,
    )


def delete_queue_keys(redis_url: str, queue: str) -> None:
    """Every key of the run's queue: job records, indexes, and arq's own keys."""
    client = redis.Redis.from_url(redis_url)
    try:
        keys = list(client.scan_iter(match=f"*{queue}*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


# ---------------------------------------------------------------- end to end


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a live process so far (Linux /proc; NaN elsewhere)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return float("nan")
    fields = stat.rpartition(")")[2].split()  # after "pid (comm)": fields 3 onwards
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class IngestFigures:
    corpus: str
    files: int
    size_bytes: int
    chunks: int
    upload_s: float
    queued_s: float  # enqueue → a worker took the job (the record's own timestamps)
    elapsed_s: float  # enqueue → done, as a client polling the job sees it
    embedder_cpu_s: float  # CPU the embedder process spent during `elapsed_s`
    corpus_cpu_s: float  # likewise the corpus process (job worker, chunking, stores)
    load_avg: float  # 1-minute load average when the job ended: the machine is shared

    @property
    def chunks_per_s(self) -> float:
        return self.chunks / self.elapsed_s

    @property
    def mb_per_s(self) -> float:
        return self.size_bytes / MB / self.elapsed_s


async def _upload_messages(path: Path) -> AsyncIterator[corpus_pb2.UploadFileChunk]:
    """An UploadFile stream: the header (the corpus folder, the declared size), then pieces."""
    data = await asyncio.to_thread(path.read_bytes)
    header = corpus_pb2.UploadFileHeader(
        store=STORE, name=path.name, folder=path.parent.name, declared_size=len(data)
    )
    yield corpus_pb2.UploadFileChunk(header=header)
    for start in range(0, len(data), UPLOAD_PIECE):
        yield corpus_pb2.UploadFileChunk(data=data[start : start + UPLOAD_PIECE])


async def _wait_done(jobs: JobQueue, job_id: str, timeout_s: float) -> common_pb2.Job:
    deadline = time.monotonic() + timeout_s
    while not is_terminal(record := await jobs.get(job_id)):
        if time.monotonic() > deadline:
            state = common_pb2.JobState.Name(record.state)
            raise TimeoutError(f"ingest job {job_id} still {state} after {timeout_s:.0f} s")
        await asyncio.sleep(JOB_POLL_S)
    return record


async def ingest_through_queue(stack: Stack, corpus: Corpus, timeout_s: float) -> IngestFigures:
    """Upload every file, then time one IngestFiles job from enqueue until it is done."""
    channel = create_channel(stack.corpus_target, ClientPolicy(deadline_s=120))
    stub = corpus_pb2_grpc.CorpusServiceStub(channel)
    try:
        async with JobQueue(stack.redis_url, queue_name=stack.queue) as jobs:
            started = time.perf_counter()
            ids = [(await stub.UploadFile(_upload_messages(path))).id for path in corpus.paths]
            upload_s = time.perf_counter() - started
            cpu_before = process_cpu_s(stack.embedder_pid), process_cpu_s(stack.corpus_pid)
            started = time.perf_counter()
            job = await stub.IngestFiles(corpus_pb2.IngestFilesRequest(store=STORE, file_ids=ids))
            record = await _wait_done(jobs, job.id, timeout_s)
            elapsed_s = time.perf_counter() - started
            cpu_after = process_cpu_s(stack.embedder_pid), process_cpu_s(stack.corpus_pid)
    finally:
        await channel.close()
    if record.state != common_pb2.JOB_STATE_DONE or record.ingest.failed:
        raise RuntimeError(
            f"ingest of the {corpus.name} corpus ended {common_pb2.JobState.Name(record.state)}: "
            f"{record.error or list(record.errors[:3])}"
        )
    queued_s = (
        (record.started_at.ToDatetime() - record.created_at.ToDatetime()).total_seconds()
        if record.HasField("started_at")
        else 0
    )
    return IngestFigures(
        corpus=corpus.name,
        files=len(ids),
        size_bytes=corpus.size_bytes,
        chunks=record.ingest.chunks,
        upload_s=upload_s,
        queued_s=queued_s,
        elapsed_s=elapsed_s,
        embedder_cpu_s=cpu_after[0] - cpu_before[0],
        corpus_cpu_s=cpu_after[1] - cpu_before[1],
        load_avg=os.getloadavg()[0],
    )


# ---------------------------------------------------------------- where the time goes


class Stopwatch:
    """Seconds spent inside chosen methods of live objects, by stage.

    The timed method shadows the class's as an instance attribute, so the tier's own code
    runs unchanged and nothing outside this probe's objects is touched.
    """

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)

    def wrap(self, owner: object, method: str, stage: str) -> None:
        original: Callable[..., Any] = getattr(owner, method)
        timed: Callable[..., Any]
        if inspect.iscoroutinefunction(original):

            async def timed_async(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return await original(*args, **kwargs)
                finally:
                    self.seconds[stage] += time.perf_counter() - started

            timed = timed_async
        else:

            def timed_sync(*args: Any, **kwargs: Any) -> Any:
                started = time.perf_counter()
                try:
                    return original(*args, **kwargs)
                finally:
                    self.seconds[stage] += time.perf_counter() - started

            timed = timed_sync
        setattr(owner, method, timed)


def chunk_options(settings: CorpusSettings) -> ChunkOptions:
    """The chunk sizes the corpus process uses (its defaults: the same environment)."""
    return ChunkOptions(
        window_chars=settings.text_window_chars,
        overlap_chars=settings.text_overlap_chars,
        max_chunk_chars=settings.max_chunk_chars,
    )


async def replay_stages(
    paths: tuple[Path, ...], embedder_target: str, root: Path, settings: CorpusSettings
) -> dict[str, float]:
    """Run `ingest_file` on `paths` in this process (a fresh store, the same embedder process,
    no job queue) and split its seconds into stages; "chunks" counts what was embedded."""
    embedder = EmbedderClient(embedder_target)
    dimension = (await embedder.info()).dimension
    store = CorpusStore.open(root, dimension)
    policy = SizeTierPolicy(full_max=settings.full_max_bytes, stream_max=settings.stream_max_bytes)
    watch = Stopwatch()
    chunks = 0
    try:
        ids = []
        for path in paths:
            messages = _upload_messages(path)
            first = await anext(messages)
            ids.append((await files.upload(store, policy, messages, first)).id)
        keywords = store.raw.collection.keywords
        assert keywords is not None, "raw chunks always have an FTS5 sidecar"
        watch.wrap(embedder, "embed", "embed RPC")
        watch.wrap(store.raw, "replace_file", "store write")
        watch.wrap(store.vectors, "upsert", "Qdrant Edge")
        watch.wrap(store.vectors, "delete", "Qdrant Edge")
        watch.wrap(keywords, "upsert", "FTS5")
        watch.wrap(keywords, "delete", "FTS5")
        watch.wrap(store.catalog, "update", "catalog")
        started = time.perf_counter()
        for file_id in ids:
            chunks += (await ingest_file(store, embedder, file_id, chunk_options(settings))).chunks
        total = time.perf_counter() - started
    finally:
        store.close()
        await embedder.close()
    stages = dict(watch.seconds)
    stages["total"] = total
    stages["chunks"] = chunks
    # Everything not timed on its own: blob read, chunking, RawChunk protos, thread hops.
    stages["chunking + protos"] = total - sum(
        stages.get(k, 0.0) for k in ("embed RPC", "store write", "catalog")
    )
    return stages


# ---------------------------------------------------------------- raw model, and the section


@dataclass(frozen=True)
class RawFigures:
    chunks_per_s: float  # file order, batches of RAW_BATCH: the yardstick of the target
    cpu_s: float  # CPU this process spent on that pass (torch runs TORCH_THREADS threads)
    # The replayed share sorted by length first: batches of like lengths pad least, so this
    # is the model's ceiling on these texts, above what any arrival order gets.
    sorted_chunks_per_s: float


def _encode_rate(model: EmbeddingModel, texts: list[str]) -> tuple[float, float]:
    """(texts/s, CPU seconds) of `model.encode` on `texts` in batches of `RAW_BATCH`."""
    model.encode(texts[:RAW_BATCH], batch_size=RAW_BATCH)  # warm these shapes
    cpu, started = time.process_time(), time.perf_counter()
    for offset in range(0, len(texts), RAW_BATCH):
        model.encode(texts[offset : offset + RAW_BATCH], batch_size=RAW_BATCH)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    return len(texts) / elapsed, cpu


def raw_throughput(model: EmbeddingModel, texts: list[str], share: list[str]) -> RawFigures:
    """The model in this process on every chunk text, then on `share` sorted by length."""
    rate, cpu_s = _encode_rate(model, texts)
    ceiling, _ = _encode_rate(model, sorted(share, key=len))
    return RawFigures(rate, cpu_s, ceiling)


def run(quick: bool) -> dict[str, Any]:
    """Per corpus: the raw model figure, then the ingest job, then the stage replay, adjacent
    in time so that the shared machine's changing load skews them alike."""
    plan = Plan.of(quick)
    settings = CorpusSettings()
    redis_url = StorageSettings().redis_url
    queue = f"bench:corpus:{uuid.uuid4().hex[:8]}"
    measured: list[tuple[IngestFigures, RawFigures, dict[str, float]]] = []
    model = load_model(
        resolve_model_path(""), device="cpu", fp16=False, torch_threads=TORCH_THREADS
    )
    with tempfile.TemporaryDirectory(prefix="engram-bench-corpus-") as temp:
        root = Path(temp)
        corpora = write_corpora(root / "corpora", plan)
        started: list[Popen[bytes]] = []
        try:
            stack = start_stack(root, redis_url, queue, started)
            for i, corpus in enumerate(corpora):
                # The share (a fifth in the full run) gives stage proportions and the ceiling.
                share = corpus.paths[: max(1, round(len(corpus.paths) * plan.replay_share))]
                texts = chunk_texts(corpus, chunk_options(settings))
                share_texts = chunk_texts(Corpus(corpus.name, share), chunk_options(settings))
                # The tiers are idle while the model runs here (a worker polls Redis twice a
                # second): the raw pass has the machine the job will have.
                raw = raw_throughput(model, texts, share_texts)
                figures = asyncio.run(ingest_through_queue(stack, corpus, plan.job_timeout_s))
                stages = asyncio.run(
                    replay_stages(share, stack.embedder_target, root / f"replay-{i}", settings)
                )
                measured.append((figures, raw, stages))
        finally:
            for process in reversed(started):
                stop_process_group(process, 10)
            delete_queue_keys(redis_url, queue)
    return _results(plan, measured)


_INGEST_HEADERS = (
    "corpus", "files", "MB", "chunks", "queued s", "elapsed s", "chunks/s", "MB/s",
    "raw chunks/s", "ingest / raw", "raw, length-sorted", "ingest / sorted raw",
)  # fmt: skip
_CPU_HEADERS = (
    "corpus", "raw model CPU s", "embedder process CPU s", "corpus process CPU s",
    "ingest / raw by CPU", "load avg (1 min)",
)  # fmt: skip
_STAGE_HEADERS = (
    "corpus", "chunks", "ingest_file total", "chunking + protos", "embed RPC", "store write",
    "of which Qdrant Edge", "of which FTS5", "catalog", "raw model, same chunks",
)  # fmt: skip
_STAGES = ("chunking + protos", "embed RPC", "store write", "Qdrant Edge", "FTS5", "catalog")


def _results(
    plan: Plan, measured: list[tuple[IngestFigures, RawFigures, dict[str, float]]]
) -> dict[str, Any]:
    rows: list[list[Any]] = []
    cpu_rows: list[list[Any]] = []
    stage_rows: list[list[Any]] = []
    results: dict[str, Any] = {"plan": asdict(plan)}
    for fig, raw, stages in measured:
        ratio = fig.chunks_per_s / raw.chunks_per_s
        # Same texts on both sides, so CPU seconds compare directly; unlike wall time they
        # barely move when other work on the machine takes turns on the cores.
        cpu_ratio = raw.cpu_s / (fig.embedder_cpu_s + fig.corpus_cpu_s)
        results[fig.corpus] = {
            **asdict(fig),
            "chunks_per_s": fig.chunks_per_s,
            "mb_per_s": fig.mb_per_s,
            "raw": asdict(raw),
            "ratio": ratio,
            "cpu_ratio": cpu_ratio,
            "stages_s": stages,
        }
        rows.append(
            [fig.corpus, fig.files, fig.size_bytes / MB, fig.chunks, fig.queued_s, fig.elapsed_s,
             fig.chunks_per_s, fig.mb_per_s, raw.chunks_per_s, f"{ratio:.0%}",
             raw.sorted_chunks_per_s, f"{fig.chunks_per_s / raw.sorted_chunks_per_s:.0%}"]
        )  # fmt: skip
        cpu_rows.append(
            [fig.corpus, raw.cpu_s, fig.embedder_cpu_s, fig.corpus_cpu_s, f"{cpu_ratio:.0%}",
             fig.load_avg]
        )  # fmt: skip
        stage_rows.append(
            [fig.corpus, int(stages["chunks"]), stages["total"],
             *(stages.get(stage, 0.0) for stage in _STAGES), stages["chunks"] / raw.chunks_per_s]
        )  # fmt: skip
    results["markdown"] = "\n\n".join(
        [
            f"### Corpus ingest, end to end through the job queue (CPU, torch threads = "
            f"{TORCH_THREADS})",
            f"Target: ingest ≥ {TARGET_RATIO:.0%} of raw. *Raw* is the model in this process on "
            f"the same chunk texts, batch {RAW_BATCH}, fp32, measured just before the job. "
            "*Elapsed*: IngestFiles called → job seen done (polled every "
            f"{JOB_POLL_S * 1000:.0f} ms); *queued* is the part before a worker took it. Upload "
            "time is excluded. MB = 10^6 bytes of uploaded files. *Length-sorted*: the replayed "
            "share's chunks sorted by length before batching, the model's ceiling (less "
            "padding). The machine is shared with other work: wall-clock figures move by tens "
            "of percent between runs.",
            markdown_table(_INGEST_HEADERS, rows),
            "#### The same on CPU time (less sensitive to the neighbours' load)",
            markdown_table(_CPU_HEADERS, cpu_rows),
            "#### Where an ingest's time goes (`ingest_file` replayed in this process against "
            "the same embedder, seconds)",
            markdown_table(_STAGE_HEADERS, stage_rows),
        ]
    )
    return results
