"""`engram soak`: a bounded load test against a running stack, over loopback REST.

`clients` simulated callers share one admin token and, for `seconds`, each sends one request
after another from a realistic mix: searches, context packs, ambient drawer writes and raw
memory adds, while one file is uploaded and ingested as a job. Everything goes to a fresh
store (`soak-<timestamp>`), dropped afterwards unless `keep`.

What it prints: throughput and p50/p99 latency per operation, errors by kind (HTTP status,
error code and a short reason; the token's deliberate 429s apart from everything else), and
an end-state check: every drawer write the gateway acknowledged is listed in the store exactly
once, every acknowledged raw memory is in its session, and the ingest job ended with its
file's chunks present once. It fails (`run_soak` returns 1) when an acknowledged write is
missing, listed twice or overwritten, the ingest did not end with its chunks there once, or
any request failed other than by the rate limit.

Decisions:

- One token for every client, as one busy agent host would have: the per-token rate limit
  (100/s, bursts of 400 by default) is part of what is exercised. A 429 is honoured (the
  client sleeps `Retry-After`, with jitter so the clients do not return in step) and counted
  apart; a write refused with 429 is not acknowledged and is never expected in the store.
- A request that gets no answer in `timeout_s` is an error like a 5xx, never hidden. The
  default (45 s) is above the gateway's own deadline to a tier (30 s), so a slow tier shows up
  as the gateway's answer naming it rather than as a client timeout.
- Kept-alive connections are dropped by the client after 2 s idle, below the gateway's
  (uvicorn's) 5 s keep-alive: with both at 5 s (httpx's default) a connection reused just as
  the server closes it fails with no answer (a reset, or "server disconnected") — about 1% of
  reuses after ~5 s idle under load, measured — which is a client artefact, not the stack's.
  A transport failure still names its connection (new or reused), so one shows what it was.
- Written content is templated but unique per write (names, numbers and an identifier drawn
  from the client and its sequence number), so the authoring tier's duplicate gate, which
  merges only the same claim, has nothing to merge. Should it answer `duplicate: true`
  anyway, the id it names is counted as acknowledged (it exists) and the count is printed.
- Each client adds its raw memories to a session of its own, in order, as one agent would;
  `shared_raw_session` sends every client's to one session instead (concurrent appends to the
  same session, as agents sharing a conversation would make).
- A write acknowledged as new under an id an earlier write was already given is a lost write
  (one overwrote the other), counted as such: comparing sets of ids alone would not see it.
- Only what the gateway answered is figured: the wall time runs from the first request until
  the last in-flight one has its answer, and the figures exclude the set-up and the check.

The pure parts (the mix, the content, the summaries, the end-state comparison, the verdict,
the rendering) come first and are unit tested; the I/O (`SoakApi`, the client loops, the
ingest, the check's listings) follows.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from services.bench.report import markdown_table, percentile

# ---------------------------------------------------------------- the mix

SEARCH, CONTEXT_PACK, DRAWER_WRITE, RAW_ADD = "search", "context pack", "drawer write", "raw add"
UPLOAD, INGEST, JOB_POLL = "file upload", "ingest start", "job poll"
# Reads dominate as they do for an agent host; a write is about one request in three.
MIX: Mapping[str, float] = {SEARCH: 0.45, CONTEXT_PACK: 0.20, DRAWER_WRITE: 0.20, RAW_ADD: 0.15}
OPERATIONS = (*MIX, UPLOAD, INGEST, JOB_POLL)  # the table's row order
WRITES = frozenset({DRAWER_WRITE, RAW_ADD, UPLOAD, INGEST})

WING = "soak"
SEED_DRAWERS = 16  # written before the clock starts, so the first searches find something
JOB_POLL_S = 2.0
JOB_WAIT_S = 600.0  # after the window, how long the check waits for the ingest job
KEEPALIVE_EXPIRY_S = 2.0  # below the gateway's 5 s keep-alive (see the decisions above)
TERMINAL_JOB_STATES = frozenset({"JOB_STATE_DONE", "JOB_STATE_FAILED", "JOB_STATE_CANCELLED"})
# Only the gateway's token bucket says this; a tier's own overload (also 429) is an error.
RATE_LIMIT_MARK = "over its rate limit"


def pick_operation(rng: random.Random, mix: Mapping[str, float] = MIX) -> str:
    """One operation of the mix, drawn by its weight."""
    return rng.choices(list(mix), weights=list(mix.values()))[0]


# ---------------------------------------------------------------- content

_PEOPLE = ("Amara", "Bjorn", "Chen", "Dalia", "Emeka", "Farah", "Goran", "Hana", "Ines",
           "Jonas", "Kavya", "Luis", "Mireille", "Noor", "Oskar", "Priya")  # fmt: skip
_SERVICES = ("billing", "search", "ingest", "payments", "auth", "reports", "notifications",
             "exports", "scheduler", "gateway")  # fmt: skip
_FACTS = (
    ("decision", "{person} decided that the {service} service keeps {n} days of audit "
     "history (ticket {ticket})."),
    ("architecture", "The {service} service runs {n} worker replicas behind the internal load "
     "balancer, as recorded in {ticket}."),
    ("workflow", "Releases of {service} need {small} approvals and {person} signs off the "
     "last one; the checklist is {ticket}."),
    ("bug", "{ticket}: {service} drops requests when its queue holds more than {n} messages, "
     "reported by {person}."),
    ("observation", "{person} measured a median latency of {n} ms on the {service} dashboard "
     "during load test {ticket}."),
    ("implementation", "The {service} client retries {small} times with jittered backoff since "
     "change {ticket} by {person}."),
)  # fmt: skip
_MEMORIES = (
    "{person} said in the stand-up that the {service} backlog holds {n} open items ({ticket}).",
    "Reminder from {person}: rotate the {service} signing key before day {n} ({ticket}).",
    "{person} asked whether {service} could cache {n} results per tenant; see {ticket}.",
    "The on-call handover notes {n} pages for {service} this week, {person} has the details "
    "({ticket}).",
)
_QUERIES = (
    "how many days of audit history does {service} keep",
    "how many replicas does the {service} service run",
    "who signs off {service} releases",
    "why does {service} drop requests",
    "what latency did {person} measure on {service}",
    "how does the {service} client retry failed calls",
    "what did {person} decide about {service}",
    "{service} backlog and open items",
)


def _slots(client: int, seq: int) -> dict[str, str | int]:
    """A person, a service and numbers for the `seq`-th text of `client`: the number and the
    ticket are unique per (client, seq), so no two texts make the same claim."""
    rng = random.Random(client * 1_000_003 + seq)
    return {
        "person": rng.choice(_PEOPLE),
        "service": rng.choice(_SERVICES),
        "n": 100 + client * 100_000 + seq,
        "small": 2 + (client + seq) % 7,
        "ticket": f"SOAK-{client:02d}-{seq:05d}",
    }


def _fill(template: str, client: int, seq: int) -> str:
    return template.format(**_slots(client, seq))


@dataclass(frozen=True)
class DrawerDraft:
    memory_type: str
    room: str
    content: str


def drawer_draft(client: int, seq: int) -> DrawerDraft:
    """The `seq`-th drawer of `client`: a templated fact whose claim no other write makes."""
    memory_type, template = _FACTS[(client + seq) % len(_FACTS)]
    slots = _slots(client, seq)
    return DrawerDraft(memory_type, f"{WING}/{slots['service']}", template.format(**slots))


def raw_memory(client: int, seq: int) -> str:
    """The `seq`-th raw memory of `client` (unique text)."""
    return _fill(_MEMORIES[(client + seq) % len(_MEMORIES)], client, seq)


def query(rng: random.Random) -> str:
    """A question about what the writes talk about; they repeat, as real questions do."""
    return rng.choice(_QUERIES).format(person=rng.choice(_PEOPLE), service=rng.choice(_SERVICES))


def ingest_document(sections: int = 24) -> bytes:
    """A markdown handbook of `sections` headed sections, for the one ingest job."""
    parts = ["# Soak handbook\n\nOperational notes written for the soak test.\n"]
    for index in range(sections):
        service = _SERVICES[index % len(_SERVICES)]
        facts = " ".join(_fill(t, 99, index * 8 + k) for k, (_, t) in enumerate(_FACTS))
        parts.append(f"\n## {service.title()} notes {index + 1}\n\n{facts}\n")
    return "".join(parts).encode()


def client_session(run: str, client: int, *, shared: bool = False) -> str:
    """The raw session `client` adds its memories to (with `shared`, the one every client
    adds to)."""
    return f"{run}-shared" if shared else f"{run}-client-{client:02d}"


# ---------------------------------------------------------------- outcomes and figures


@dataclass(frozen=True)
class Outcome:
    """One request as the client saw it."""

    op: str
    latency_ms: float
    status: int | None  # the HTTP status; None: no answer (timeout, connection)
    kind: str = ""  # empty when it succeeded; else "503 unavailable: …" or "timeout: …"
    retry_after_s: float = 0.0
    rate_limited: bool = False  # the token's bucket refused it (a deliberate 429)
    at_s: float = 0.0  # when it was sent, seconds into the window

    @property
    def ok(self) -> bool:
        return self.status is not None and 200 <= self.status < 300

    @property
    def error(self) -> bool:
        """A failure the soak counts against the stack: anything but success or the limit."""
        return not self.ok and not self.rate_limited


_DIGITS = re.compile(r"\d+(?:\.\d+)?")


def error_kind(status: int | None, body: str, exception: str = "") -> tuple[str, bool]:
    """(the error's kind, whether it is the token's deliberate 429) for a failed request.

    The kind is the status, the error code and the message's start with its numbers folded
    to `#`, so the same failure with different ids or seconds counts as one kind."""
    if status is None:
        return f"no answer: {exception}", False
    code, message = "", body.strip()
    try:
        parsed = json.loads(body)
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            code = str(parsed["error"].get("code", ""))
            message = str(parsed["error"].get("message", ""))
    except ValueError:
        pass
    deliberate = status == 429 and RATE_LIMIT_MARK in message
    short = _DIGITS.sub("#", " ".join(message.split()))
    short = short if len(short) <= 90 else short[:89] + "…"
    return f"{status} {code}: {short}".replace(" :", ":"), deliberate


@dataclass(frozen=True)
class OpFigures:
    op: str
    ok: int
    rate_limited: int
    errors: int
    per_s: float  # successful requests a second over the window
    p50_ms: float  # of the successful requests
    p99_ms: float


def summarise(outcomes: Sequence[Outcome], wall_s: float) -> list[OpFigures]:
    """Figures per operation (in OPERATIONS order, then any other), then `all` over every one."""
    by_op: dict[str, list[Outcome]] = {}
    for outcome in outcomes:
        by_op.setdefault(outcome.op, []).append(outcome)
    order = [op for op in OPERATIONS if op in by_op] + sorted(set(by_op) - set(OPERATIONS))
    groups = [(op, by_op[op]) for op in order] + [("all", list(outcomes))]

    def figures(op: str, group: Sequence[Outcome]) -> OpFigures:
        latencies = [o.latency_ms for o in group if o.ok]
        return OpFigures(
            op=op,
            ok=len(latencies),
            rate_limited=sum(o.rate_limited for o in group),
            errors=sum(o.error for o in group),
            per_s=len(latencies) / wall_s if wall_s > 0 else 0.0,
            p50_ms=percentile(latencies, 50),
            p99_ms=percentile(latencies, 99),
        )

    return [figures(op, group) for op, group in groups]


@dataclass(frozen=True)
class ErrorCount:
    """One kind of failure of one operation, and when in the window it happened (to find it
    in the stack's logs)."""

    op: str
    kind: str
    count: int
    first_s: float
    last_s: float


def errors_by_kind(outcomes: Iterable[Outcome]) -> list[ErrorCount]:
    """Every failure but the deliberate 429s, by operation and kind, most frequent first."""
    seen: dict[tuple[str, str], list[float]] = {}
    for o in outcomes:
        if o.error:
            seen.setdefault((o.op, o.kind), []).append(o.at_s)
    ordered = sorted(seen.items(), key=lambda item: (-len(item[1]), min(item[1])))
    return [ErrorCount(op, kind, len(at), min(at), max(at)) for (op, kind), at in ordered]


def rate_limited_by_op(outcomes: Iterable[Outcome]) -> dict[str, int]:
    return dict(Counter(o.op for o in outcomes if o.rate_limited))


# ---------------------------------------------------------------- the ledger and the end state


@dataclass
class Ledger:
    """What the stack acknowledged, and how many writes it may hold without having said so."""

    drawers: Counter[str] = field(default_factory=Counter)  # id → acknowledgements
    new_drawers: int = 0  # writes answered with a new drawer
    duplicate_answers: int = 0  # writes answered `duplicate: true` with an existing drawer
    duplicates_of_others: int = 0  # … naming a drawer no write of this run was given
    raw: dict[str, str] = field(default_factory=dict)  # raw chunk id → its session
    unanswered_writes: Counter[str] = field(default_factory=Counter)  # op → no/5xx answers
    # op → writes acknowledged as new under an id already given to an earlier one: lost
    collisions: Counter[str] = field(default_factory=Counter)

    def drawer_written(self, drawer_id: str, *, duplicate: bool) -> None:
        if duplicate:
            self.duplicate_answers += 1
            if drawer_id not in self.drawers:
                self.duplicates_of_others += 1
        else:
            self.new_drawers += 1
            if drawer_id in self.drawers:
                self.collisions[DRAWER_WRITE] += 1
        self.drawers[drawer_id] += 1

    def raw_added(self, chunk_id: str, session_id: str) -> None:
        if chunk_id in self.raw:  # every raw add is a new memory: an id given twice lost one
            self.collisions[RAW_ADD] += 1
        self.raw[chunk_id] = session_id

    def outcome(self, outcome: Outcome) -> None:
        """Note a write that may have landed although it was not acknowledged."""
        if outcome.op in WRITES and outcome.error and (outcome.status or 500) >= 500:
            self.unanswered_writes[outcome.op] += 1


@dataclass(frozen=True)
class Comparison:
    """Acknowledged ids against what the store lists."""

    what: str
    acknowledged: int  # distinct ids
    listed: int  # entries listed (with repeats)
    missing: tuple[str, ...]  # acknowledged, not listed
    repeated: tuple[str, ...]  # listed more than once
    extra: tuple[str, ...]  # listed, never acknowledged
    may_exist: int = 0  # writes without an answer, which may have landed

    @property
    def unexplained_extra(self) -> int:
        return max(0, len(self.extra) - self.may_exist)

    @property
    def ok(self) -> bool:
        return not self.missing and not self.repeated and not self.unexplained_extra


def compare(
    what: str, acknowledged: Collection[str], listed: Sequence[str], may_exist: int = 0
) -> Comparison:
    """Every acknowledged id listed exactly once; extras beyond `may_exist` are unexplained."""
    counts = Counter(listed)
    wanted = set(acknowledged)
    return Comparison(
        what=what,
        acknowledged=len(wanted),
        listed=len(listed),
        missing=tuple(sorted(wanted - set(counts))),
        repeated=tuple(sorted(i for i, n in counts.items() if n > 1)),
        extra=tuple(sorted(set(counts) - wanted)),
        may_exist=may_exist,
    )


@dataclass(frozen=True)
class IngestCheck:
    """The one ingest job's end: its state, and its file's chunks present once."""

    job_state: str  # "" when the job never started
    job_error: str
    job_chunks: int  # what the job says it wrote
    file_state: str
    file_chunks: int  # the catalog's chunk_count
    chunk_ids: tuple[str, ...]  # the file's chunks as listed

    @property
    def problems(self) -> list[str]:
        found: list[str] = []
        if self.job_state != "JOB_STATE_DONE":
            why = f" ({self.job_error})" if self.job_error else ""
            found.append(f"ingest job ended {self.job_state or 'never started'}{why}")
            return found
        if self.file_state != "FILE_STATE_INGESTED":
            found.append(f"file is {self.file_state}, not FILE_STATE_INGESTED")
        distinct = len(set(self.chunk_ids))
        if distinct != len(self.chunk_ids):
            found.append(f"{len(self.chunk_ids) - distinct} chunk ids listed twice")
        if not (distinct == self.file_chunks == self.job_chunks) or distinct == 0:
            found.append(
                f"chunks: job wrote {self.job_chunks}, catalog says {self.file_chunks}, "
                f"{distinct} listed"
            )
        return found


@dataclass(frozen=True)
class SoakReport:
    url: str
    store: str
    clients: int
    seconds: float
    wall_s: float
    figures: list[OpFigures]
    errors: list[ErrorCount]
    rate_limited: dict[str, int]
    ledger: Ledger
    drawers: Comparison
    drawer_count: int  # the store's own count, after the run
    raw: Comparison
    ingest: IngestCheck


def failures(report: SoakReport) -> list[str]:
    """Why the soak failed; empty when it passed."""
    found: list[str] = []
    errors = sum(e.count for e in report.errors)
    if errors:
        found.append(f"{errors} requests failed other than by the rate limit")
    for check in (report.drawers, report.raw):
        if check.missing:
            found.append(f"{len(check.missing)} acknowledged {check.what} missing")
        if check.repeated:
            found.append(f"{len(check.repeated)} {check.what} listed more than once")
        if check.unexplained_extra:
            found.append(f"{check.unexplained_extra} {check.what} present that nothing wrote")
    for op, lost in sorted(report.ledger.collisions.items()):
        found.append(
            f"{lost} {op}s acknowledged as new under an id an earlier {op} was given "
            "(overwritten: lost)"
        )
    if report.drawer_count != report.drawers.listed:
        found.append(
            f"the store counts {report.drawer_count} drawers, its listing has "
            f"{report.drawers.listed}"
        )
    found.extend(report.ingest.problems)
    return found


def render(report: SoakReport) -> str:
    """The printed result: the figures, the errors, the end state and the verdict."""
    lines = [
        f"## Soak: {report.clients} clients, {report.seconds:g} s against {report.url} "
        f"(store {report.store}; wall {report.wall_s:.1f} s)",
        "",
        markdown_table(
            ("operation", "ok", "ok/s", "p50 ms", "p99 ms", "429 (limit)", "errors"),
            [
                (f.op, f.ok, f.per_s, f.p50_ms, f.p99_ms, f.rate_limited, f.errors)
                for f in report.figures
            ],
        ),
        "",
    ]
    if report.errors:
        lines += [
            "### Errors (429s from the rate limit not included)",
            "",
            markdown_table(
                ("operation", "kind", "count", "first at s", "last at s"),
                [(e.op, e.kind, e.count, e.first_s, e.last_s) for e in report.errors],
            ),
            "",
        ]
    else:
        lines += ["No errors other than the rate limit's 429s.", ""]
    ledger = report.ledger
    lines += [
        "### End state",
        "",
        markdown_table(
            ("what", "acknowledged", "listed", "missing", "listed twice", "unacknowledged"),
            [
                (c.what, c.acknowledged, c.listed, len(c.missing), len(c.repeated), len(c.extra))
                for c in (report.drawers, report.raw)
            ],
        ),
        "",
        f"- drawer writes: {ledger.new_drawers} new, {ledger.duplicate_answers} answered "
        f"`duplicate: true` ({ledger.duplicates_of_others} naming a drawer this run was not "
        f"given); the store counts {report.drawer_count} drawers",
        f"- writes with no answer or a 5xx (may or may not have landed): "
        f"{sum(ledger.unanswered_writes.values())}",
        f"- writes acknowledged as new under an id already given (overwritten): "
        f"{ledger.collisions[DRAWER_WRITE]} drawer, {ledger.collisions[RAW_ADD]} raw",
    ]
    ingest = report.ingest
    lines.append(
        f"- ingest job: {ingest.job_state or 'not started'}; job wrote {ingest.job_chunks} "
        f"chunks, catalog {ingest.file_chunks} ({ingest.file_state or '?'}), listed "
        f"{len(ingest.chunk_ids)} ({len(set(ingest.chunk_ids))} distinct)"
    )
    for check in (report.drawers, report.raw):
        if check.missing:
            lines.append(f"- missing {check.what}: {', '.join(check.missing[:10])}")
    reasons = failures(report)
    lines += ["", "FAIL: " + "; ".join(reasons) if reasons else "PASS"]
    return "\n".join(lines)


# ---------------------------------------------------------------- I/O: the API


class SoakError(RuntimeError):
    """Set-up or the check could not be done; the message says which request and why."""


class SoakApi:
    """The gateway's REST face through one shared client, with a pool wide enough that no
    simulated client waits for a connection. Every request becomes an `Outcome`."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        connections: int,
        timeout_s: float,
        transport: httpx.AsyncBaseTransport | None = None,  # tests: a MockTransport
    ) -> None:
        self.url = url.rstrip("/")
        self.started = time.monotonic()
        self._client = httpx.AsyncClient(
            base_url=self.url,
            headers={"Authorization": f"Bearer {token}"},
            timeout=httpx.Timeout(timeout_s),
            limits=httpx.Limits(
                max_connections=connections,
                max_keepalive_connections=connections,
                keepalive_expiry=KEEPALIVE_EXPIRY_S,
            ),
            transport=transport,
        )

    async def call(self, op: str, method: str, path: str, **kwargs: Any) -> tuple[Outcome, Any]:
        """One request: its outcome and, when it succeeded, the JSON answer."""
        connected = False

        async def trace(event: str, info: Mapping[str, Any]) -> None:
            nonlocal connected
            connected = connected or event.startswith("connection.connect_tcp")

        sent = time.monotonic()
        at = sent - self.started
        try:
            answer = await self._client.request(method, path, extensions={"trace": trace}, **kwargs)
        except httpx.HTTPError as error:
            # Which exception, its reason, and whether the connection was new or a kept-alive
            # one reused: a reset on a reused connection is not a failure of the request.
            latency = (time.monotonic() - sent) * 1000
            detail = f"{type(error).__name__}" + (f" ({error})" if str(error) else "")
            detail += " on a new connection" if connected else " on a reused connection"
            kind, _ = error_kind(None, "", detail)
            return Outcome(op, latency, None, kind, at_s=at), None
        latency = (time.monotonic() - sent) * 1000
        if answer.is_success:
            body = answer.json() if answer.content else {}
            return Outcome(op, latency, answer.status_code, at_s=at), body
        kind, deliberate = error_kind(answer.status_code, answer.text)
        retry = float(answer.headers.get("Retry-After", "0") or 0)
        return Outcome(op, latency, answer.status_code, kind, retry, deliberate, at), None

    async def must(self, what: str, method: str, path: str, **kwargs: Any) -> Any:
        """A set-up or check request: retried after a 429 as told, any other failure raised."""
        for _ in range(100):
            outcome, body = await self.call(what, method, path, **kwargs)
            if outcome.ok:
                return body
            if outcome.status != 429:
                raise SoakError(f"{what} ({method} {path}): {outcome.kind}")
            await asyncio.sleep(max(outcome.retry_after_s, 0.5))
        raise SoakError(f"{what} ({method} {path}): still rate limited after 100 tries")

    async def aclose(self) -> None:
        await self._client.aclose()


# ---------------------------------------------------------------- I/O: the load


@dataclass
class Run:
    """The state the clients share: where they write, until when, and what they saw."""

    api: SoakApi
    store: str
    deadline: float  # monotonic
    ledger: Ledger = field(default_factory=Ledger)
    outcomes: list[Outcome] = field(default_factory=list)

    def record(self, outcome: Outcome) -> None:
        self.outcomes.append(outcome)
        self.ledger.outcome(outcome)

    @property
    def left_s(self) -> float:
        return self.deadline - time.monotonic()


async def write_drawer(run: Run, op: str, client: int, seq: int) -> Outcome:
    draft = drawer_draft(client, seq)
    outcome, body = await run.api.call(
        op,
        "POST",
        f"/v1/stores/{run.store}/drawers",
        json={
            "drawer": {
                "content": draft.content,
                "memory_type": draft.memory_type,
                "wing": WING,
                "room": draft.room,
                "added_by": f"soak-client-{client:02d}",
            },
            "allow_new_wing": True,
            "reason": "soak test write",
        },
    )
    if outcome.ok:
        run.ledger.drawer_written(body["drawer"]["id"], duplicate=bool(body.get("duplicate")))
    return outcome


async def add_raw(run: Run, session: str, client: int, seq: int) -> Outcome:
    outcome, body = await run.api.call(
        RAW_ADD,
        "POST",
        f"/v1/stores/{run.store}/raw/memories",
        json={"content": raw_memory(client, seq), "session_id": session, "speaker": "agent"},
    )
    if outcome.ok:
        run.ledger.raw_added(body["id"], body.get("session_id", session))
    return outcome


async def client_loop(run: Run, client: int, session: str, rng: random.Random) -> None:
    """One simulated client: operations of the mix back to back until the deadline."""
    seq = 0
    while run.left_s > 0:
        op, seq = pick_operation(rng), seq + 1
        if op == SEARCH:
            body = {"query": query(rng), "n_results": 10}
            outcome, _ = await run.api.call(op, "POST", f"/v1/stores/{run.store}/search", json=body)
        elif op == CONTEXT_PACK:
            body = {"query": query(rng), "token_budget": 800}
            path = f"/v1/stores/{run.store}/context-pack"
            outcome, _ = await run.api.call(op, "POST", path, json=body)
        elif op == DRAWER_WRITE:
            outcome = await write_drawer(run, op, client, seq)
        else:
            outcome = await add_raw(run, session, client, seq)
        run.record(outcome)
        if outcome.rate_limited:
            # Honour Retry-After, jittered so the clients do not all come back at once.
            await asyncio.sleep(min(outcome.retry_after_s * (1 + rng.random()), run.left_s))


@dataclass
class IngestStart:
    file_id: str = ""
    job_id: str = ""
    job: dict[str, Any] = field(default_factory=dict)


async def ingest_loop(run: Run, started: IngestStart, rng: random.Random) -> None:
    """Upload one file, start its ingest job and poll it while the window lasts (each request
    figured; a 429 is honoured and the step retried)."""

    async def step(op: str, method: str, path: str, **kwargs: Any) -> Any:
        while run.left_s > 0:
            outcome, body = await run.api.call(op, method, path, **kwargs)
            run.record(outcome)
            if not outcome.rate_limited:
                return body
            await asyncio.sleep(min(outcome.retry_after_s * (1 + rng.random()), run.left_s))
        return None

    files = {"file": ("soak-handbook.md", ingest_document(), "text/markdown")}
    uploaded = await step(UPLOAD, "POST", f"/v1/stores/{run.store}/files", files=files)
    if not uploaded:
        return
    started.file_id = uploaded["id"]
    body = {"file_ids": [started.file_id]}
    job = await step(INGEST, "POST", f"/v1/stores/{run.store}/ingest", json=body)
    if not job:
        return
    started.job_id, started.job = job["id"], job
    while run.left_s > 0 and started.job.get("state") not in TERMINAL_JOB_STATES:
        await asyncio.sleep(min(JOB_POLL_S, max(run.left_s, 0)))
        polled = await step(JOB_POLL, "GET", f"/v1/jobs/{started.job_id}")
        if polled:
            started.job = polled


async def progress(run: Run, every_s: float, say: Callable[[str], None]) -> None:
    """A line every `every_s` seconds while the window lasts, so a long run shows life."""
    began = time.monotonic()
    while run.left_s > 0:
        await asyncio.sleep(min(every_s, run.left_s))
        done = list(run.outcomes)
        say(
            f"{time.monotonic() - began:5.0f} s: {len(done)} requests, "
            f"{sum(o.ok for o in done)} ok, {sum(o.rate_limited for o in done)} rate limited, "
            f"{sum(o.error for o in done)} errors"
        )


# ---------------------------------------------------------------- I/O: set-up and the check


async def seed(api: SoakApi, store: str, ledger: Ledger) -> None:
    """A few drawers before the clock starts (acknowledged like any other write)."""
    for seq in range(SEED_DRAWERS):
        draft = drawer_draft(99, 90_000 + seq)
        body = await api.must(
            "seed drawer",
            "POST",
            f"/v1/stores/{store}/drawers",
            json={
                "drawer": {
                    "content": draft.content,
                    "memory_type": draft.memory_type,
                    "wing": WING,
                    "room": draft.room,
                },
                "allow_new_wing": True,
                "reason": "soak test seed",
            },
        )
        ledger.drawer_written(body["drawer"]["id"], duplicate=bool(body.get("duplicate")))


async def listed_drawers(api: SoakApi, store: str) -> list[str]:
    """Every drawer id the store lists, page by page (repeats kept: they are what we check)."""
    ids: list[str] = []
    token = ""
    while True:
        params = {"page_size": "500", **({"page_token": token} if token else {})}
        page = await api.must("list drawers", "GET", f"/v1/stores/{store}/drawers", params=params)
        ids += [d["id"] for d in page.get("drawers", [])]
        token = page.get("page", {}).get("next_page_token", "")
        if not token:
            return ids


async def session_chunks(api: SoakApi, store: str, session: str) -> list[dict[str, Any]]:
    path = f"/v1/stores/{store}/raw/sessions/{session}/chunks"
    body = await api.must("session chunks", "GET", path)
    chunks: list[dict[str, Any]] = body.get("chunks", [])
    return chunks


async def listed_raw(api: SoakApi, store: str, sessions: Iterable[str]) -> list[str]:
    """The chunk ids of the clients' raw sessions."""
    ids: list[str] = []
    for session in sorted(set(sessions)):
        ids += [c["id"] for c in await session_chunks(api, store, session)]
    return ids


async def file_sessions(api: SoakApi, store: str, file_id: str) -> list[str]:
    sessions: list[str] = []
    token = ""
    while True:
        params = {"file_id": file_id, "page_size": "100"}
        if token:
            params["page_token"] = token
        path = f"/v1/stores/{store}/raw/sessions"
        page = await api.must("list sessions", "GET", path, params=params)
        sessions += [s["descriptor"]["session_id"] for s in page.get("sessions", [])]
        token = page.get("page", {}).get("next_page_token", "")
        if not token:
            return sessions


async def check_ingest(api: SoakApi, store: str, started: IngestStart) -> IngestCheck:
    """Wait (bounded) for the job to end, then read its file and the file's chunks."""
    if not started.job_id:
        return IngestCheck("", "", 0, "", 0, ())
    job = started.job
    waited_until = time.monotonic() + JOB_WAIT_S
    while job.get("state") not in TERMINAL_JOB_STATES and time.monotonic() < waited_until:
        await asyncio.sleep(JOB_POLL_S)
        job = await api.must("job poll", "GET", f"/v1/jobs/{started.job_id}")
    file = await api.must("get file", "GET", f"/v1/stores/{store}/files/{started.file_id}")
    ids: list[str] = []
    for session in await file_sessions(api, store, started.file_id):
        chunks = await session_chunks(api, store, session)
        ids += [c["id"] for c in chunks if c.get("file_id") == started.file_id]
    return IngestCheck(
        job_state=str(job.get("state", "")),
        job_error=str(job.get("error", "")),
        job_chunks=int(job.get("ingest", {}).get("chunks", 0)),
        file_state=str(file.get("state", "")),
        file_chunks=int(file.get("chunk_count", 0)),
        chunk_ids=tuple(ids),
    )


# ---------------------------------------------------------------- the whole run


@dataclass(frozen=True)
class SoakOptions:
    url: str
    token: str
    clients: int = 64
    seconds: float = 60.0
    keep: bool = False
    timeout_s: float = 45.0
    seed: int = 0
    shared_raw_session: bool = False


def _say(message: str) -> None:
    print(f"  [soak] {message}", flush=True)


async def soak(options: SoakOptions) -> SoakReport:
    """Create the store, seed it, run the window, check the end state, drop the store."""
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    store = f"soak-{stamp}"
    api = SoakApi(
        options.url, options.token, connections=options.clients + 8, timeout_s=options.timeout_s
    )
    try:
        await api.must("create store", "POST", "/v1/stores", json={"spec": {"name": store}})
        try:
            return await _run_in(api, store, stamp, options)
        finally:
            if options.keep:
                _say(f"kept store {store}")
            else:
                await api.must(
                    "delete store", "DELETE", f"/v1/stores/{store}", params={"confirm": "true"}
                )
                _say(f"deleted store {store}")
    finally:
        await api.aclose()


async def _run_in(api: SoakApi, store: str, stamp: str, options: SoakOptions) -> SoakReport:
    ledger = Ledger()
    _say(f"store {store}: seeding {SEED_DRAWERS} drawers")
    await seed(api, store, ledger)
    _say(f"{options.clients} clients for {options.seconds:g} s (timeout {options.timeout_s:g} s)")
    rng = random.Random(options.seed)
    run = Run(api, store, time.monotonic() + options.seconds, ledger=ledger)
    api.started = began = time.monotonic()
    started = IngestStart()
    sessions = {
        i: client_session(f"soak-{stamp}", i, shared=options.shared_raw_session)
        for i in range(options.clients)
    }
    tasks = [
        client_loop(run, i, sessions[i], random.Random(rng.random()))
        for i in range(options.clients)
    ]
    watcher = asyncio.create_task(progress(run, 10.0, _say))
    await asyncio.gather(ingest_loop(run, started, random.Random(rng.random())), *tasks)
    wall_s = time.monotonic() - began
    await watcher
    _say(f"window over after {wall_s:.1f} s; checking the end state")

    drawer_ids = await listed_drawers(api, store)
    info = await api.must("get store", "GET", f"/v1/stores/{store}")
    raw_ids = await listed_raw(api, store, set(ledger.raw.values()) | set(sessions.values()))
    ingest = await check_ingest(api, store, started)
    return SoakReport(
        url=api.url,
        store=store,
        clients=options.clients,
        seconds=options.seconds,
        wall_s=wall_s,
        figures=summarise(run.outcomes, wall_s),
        errors=errors_by_kind(run.outcomes),
        rate_limited=rate_limited_by_op(run.outcomes),
        ledger=ledger,
        drawers=compare(
            "drawers", ledger.drawers, drawer_ids, ledger.unanswered_writes[DRAWER_WRITE]
        ),
        drawer_count=int(info.get("drawer_count", 0)),
        raw=compare("raw memories", ledger.raw, raw_ids, ledger.unanswered_writes[RAW_ADD]),
        ingest=ingest,
    )


def run_soak(options: SoakOptions) -> int:
    """Run the soak and print its result; 0 when it passed, 1 when it failed, 2 when it could
    not be run (the stack refused the set-up or the check)."""
    try:
        report = asyncio.run(soak(options))
    except SoakError as error:
        print(f"engram soak: {error}", flush=True)
        return 2
    print(render(report), flush=True)
    return 1 if failures(report) else 0
