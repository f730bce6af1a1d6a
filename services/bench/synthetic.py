"""Deterministic synthetic drawers and queries for the retrieval benchmark, and a disk cache of
their embeddings.

Drawers read like real ones: 1-3 third-person sentences (15-60 words) about one of 20
engineering topics, framed by their memory type ("Priya decided that ...", "A regression
appeared on Monday: ..."), spread over wings and rooms, pin statuses, authors, a year of
creation dates and salience 0.2-0.9. Real embeddings of them cluster by topic and room the
way a real store does, so filters and ranking do realistic work. Queries are new sentences
(questions, never a drawer's text) about the same topics, each with the intent it was
written for and a plausible room and type filter.

Generation is a single seeded stream: the first k drawers of `synthetic_drawers(n)` are
`synthetic_drawers(k)` for every k <= n, so a 10k store is the first tenth of a 100k one and
the embedding cache (chunked by position) serves both.
"""

from __future__ import annotations

import hashlib
import random
import string
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt
from engram.v1 import common_pb2

from services.vocabulary import V2_TYPES

MIN_WORDS = 15
MAX_WORDS = 60
DEFAULT_CACHE_DIR = Path("bench/results/cache")
# Every drawer's dates fall in the year before this moment, so runs are reproducible.
ANCHOR = datetime(2026, 6, 30, tzinfo=UTC)

# ---------------------------------------------------------------- vocabulary

# Each topic: the first line lists its components ({c}, ";"-separated); every further line is
# a clause template. Clauses are sentence middles: a memory-type frame wraps them.
_TOPIC_TEXT: dict[str, str] = {
    "search ranking": """
        ranking formula; keyword boost; intent classifier; dampening step; result cut-off
        the {c} gives pinned decisions a higher weight than fresh observations
        the {c} pushed deprecated drawers below the ones that replaced them
        results from the {c} looked stale for queries about the {team} roadmap
        the {c} needs a min score of {ratio} before a hit is shown to an agent
        the {c} treats a keyword match as a small additive bonus, never a filter
        changing the {c} moved the top result for {pct} of the evaluation queries
        the {c} should explain every factor so a ranking can be audited later
        the {c} ignores authority unless the store turns legacy authority on
        two candidates tied in the {c} and the older one won because of salience
        the {c} was tuned on {n} hand-labelled queries from the {team} team
    """,
    "embeddings": """
        embedder; MiniLM model; query vector cache; batching queue; tokenizer
        the {c} truncates texts longer than {n} tokens and marks them as truncated
        the {c} runs on the GPU in production and on the CPU only by explicit opt-in
        the {c} returned vectors that were not unit length after the {version} upgrade
        the {c} coalesces concurrent requests into a single model call
        warming the {c} at startup removes the slow first request after deploys
        the {c} takes about {ms} per sentence with one torch thread
        the {c} must never download weights at runtime in a locked-down cluster
        re-embedding every drawer with a new {c} takes roughly {n} minutes per store
        the {c} answered with the wrong dimension when the model folder was swapped
        the {c} keeps the last {n} query vectors because agents repeat questions
    """,
    "vector storage": """
        Qdrant shard; embedded Qdrant; HNSW index; payload index; segment optimizer
        the {c} is opened by one process only and refuses a second opener
        the {c} searches exactly below twenty thousand points and by HNSW above that
        building the {c} at one hundred thousand points blocks the process for {n} seconds
        the {c} keeps the full drawer as payload so it stays the source of truth
        filtered searches on the {c} slow down when a room holds very few drawers
        the {c} grew to {n} gigabytes after a bulk import without compaction
        a crash during the {c} rebuild left a half-written folder that is cleaned on open
        the {c} needs a keyword index on room and memory type for fast filters
        copying the {c} for a snapshot pauses writes but never reads
        the {c} returned cosine scores slightly above one for duplicated vectors
    """,
    "keyword index": """
        FTS5 sidecar; BM25 scorer; keyword table; porter tokenizer; trigger set
        the {c} is rebuilt from the vector payloads whenever the two disagree
        the {c} matches exact error codes that embeddings tend to blur
        quoting user input before it reaches the {c} stopped the syntax errors
        the {c} adds about {ms} to every search with a room filter
        the {c} is written in the same transaction as the vector upsert
        the {c} ranked a long changelog above the short decision it mentioned
        the {c} ignores stop words, so a query made only of them returns nothing
        optimizing the {c} every night keeps its size near {n} megabytes
        the {c} should index the signature and topic as well as the content
        a migration of the {c} dropped {n} rows that the next reconcile restored
    """,
    "authentication": """
        token service; login flow; session store; admin token; OAuth callback
        the {c} rejects tokens older than {n} days without a refresh
        the {c} leaked a stack trace to the browser when the issuer was down
        the {c} must refuse the default admin token outside development
        rotating the {c} secret logged every agent out on {day}
        the {c} maps each token to a tier that decides write scope and budget
        the {c} counts failed attempts per address and locks after {n} tries
        the {c} returned a server error instead of a forbidden status for read tokens
        moving the {c} behind the gateway removed a duplicate permission check
        the {c} stores only hashes of tokens, never the tokens themselves
        the {c} broke for users whose clocks drifted by more than {n} minutes
    """,
    "billing": """
        invoice job; pricing table; usage meter; payment webhook; refund flow
        the {c} charged {money} twice when the webhook was retried
        the {c} rounds usage up to the next thousand requests each month
        the {c} must be idempotent because the provider retries for {n} hours
        the {c} sends invoices on the first business day of every month
        the {c} ignored discounts for customers on the annual plan
        the {c} reports revenue in the currency of the customer, not in dollars
        a bug in the {c} gave {pct} of customers a free month in {month}
        the {c} keeps a ledger row for every change so disputes can be traced
        the {c} should pause for accounts that the {team} team marks as under review
        the {c} took {n} minutes on the last day of the quarter
    """,
    "deployment": """
        Helm chart; Kubernetes manifest; rollout plan; canary release; readiness probe
        the {c} runs every tier as non-root with a read-only root filesystem
        the {c} waits for the gRPC health check before sending traffic
        the {c} rolled back automatically when error rates passed {pct}
        the {c} pins the embedder to nodes with a GPU and refuses CPU nodes
        the {c} sets memory limits of {n} gigabytes for the retrieval tier
        the {c} failed on {day} because an image tag pointed at a deleted build
        the {c} should keep one replica of each tier per availability zone
        the {c} takes about {n} minutes from merge to production
        the {c} mounts the model from a volume so pods start without downloads
        the {c} drains connections for {n} seconds before a pod is stopped
    """,
    "ci pipeline": """
        CI pipeline; test matrix; lint stage; build cache; nightly job
        the {c} runs the whole suite in about {n} minutes on two cores
        the {c} fails when generated protobuf code drifts from the sources
        the {c} was flaky because a test slept instead of polling with a bound
        the {c} caches the virtual environment keyed by the lock file
        the {c} should run the type checker in strict mode on every package
        the {c} skipped the GPU tests silently until {person} added a marker
        the {c} publishes benchmark results but never asserts on them
        the {c} broke after the {version} runner image removed an old compiler
        the {c} retries network tests once and reports the retry
        the {c} spends most of its time downloading the same wheels
    """,
    "mobile app": """
        mobile app; offline mode; push handler; settings screen; sync engine
        the {c} drains the battery when sync runs every {n} seconds
        the {c} crashed on older phones after the {version} release
        the {c} must work for a full day without a network connection
        the {c} shows stale data until the user pulls to refresh
        the {c} uploads photos only on wifi unless the user opts in
        the {c} keeps a local queue of edits and replays them in order
        the {c} lost edits when two devices changed the same note
        the {c} needs larger touch targets for the accessibility review
        the {c} takes {ms} to open on a mid-range phone
        the {c} asks for notification permission only after the first success
    """,
    "web frontend": """
        web console; drawer list view; search page; upload form; design system
        the {c} renders ten thousand rows without freezing by virtualizing the list
        the {c} rejected uploads over fifty megabytes before sending any bytes
        the {c} lost the scroll position after every search
        the {c} should show why a drawer ranked where it did
        the {c} shipped with a contrast ratio below the accessibility minimum
        the {c} loads in {ms} on a cold cache over a slow connection
        the {c} keeps filters in the address bar so searches can be shared
        the {c} broke in one browser because of an unsupported date input
        the {c} uses the same error shape as the REST API everywhere
        the {c} needs a keyboard shortcut for pinning a drawer
    """,
    "data pipeline": """
        ingest job; chunker; transcript parser; import queue; dedup step
        the {c} splits long transcripts into chunks of about {n} tokens
        the {c} dropped the last chunk of files that did not end with a newline
        the {c} keeps byte offsets so every chunk can be cited back to its file
        the {c} processed {n} sessions per minute on the staging cluster
        the {c} retries a failed file three times and then marks it as failed
        the {c} must be resumable after a crash without duplicating chunks
        the {c} treats markdown headings as section boundaries
        the {c} was slow because it parsed every PDF page twice
        the {c} marks near-duplicate drawers instead of deleting them
        the {c} writes progress every {n} items so the console can show it
    """,
    "observability": """
        metrics endpoint; trace exporter; structured logger; alert rule; dashboard
        the {c} shows search latency by stage for every store
        the {c} fired at three in the morning because of a threshold of {pct}
        the {c} writes JSON lines with the request id on every entry
        the {c} missed the outage because it only sampled {pct} of requests
        the {c} should page only when users are affected for {n} minutes
        the {c} counts errors by domain code rather than by gRPC status
        the {c} became expensive once every tier exported histograms
        the {c} helped {person} find a slow query in under ten minutes
        the {c} keeps {n} days of data before it is rolled up
        the {c} never logs drawer contents, only their ids
    """,
    "caching": """
        Redis cache; query result cache; CDN cache; session cache; warm-up job
        the {c} keeps entries for {n} minutes before they expire
        the hit rate of the {c} fell to {pct} after the {version} release
        the {c} must be flushed whenever the stored payload format changes
        evictions in the {c} spike every {day} when the batch import runs
        the {c} doubled memory use because keys were not namespaced per store
        the {c} is warmed on deploy so the first requests stay fast
        the {c} served another store's results until keys included the store name
        the {c} hides slow queries in benchmarks unless each query is distinct
        the {c} saves about {ms} per repeated search
        the {c} needs an upper bound on entries so it cannot grow without limit
    """,
    "database migrations": """
        schema migration; backfill script; migration runner; rollback plan; index change
        the {c} locked the drawers table for {n} minutes in staging
        the {c} must be reversible before it is allowed near production
        the {c} ran twice because two pods started at the same moment
        the {c} backfills content hashes in batches of {n} rows
        the {c} should be tested against a copy of the largest store
        the {c} left the new column empty for drawers written during the run
        the {c} finished in {n} seconds once the index was created first
        the {c} writes a marker so a restart continues where it stopped
        the {c} failed silently when the disk was almost full
        the {c} needs a dry run that prints what would change
    """,
    "security": """
        secret store; dependency audit; network policy; encryption key; access review
        the {c} found {n} outdated packages with known vulnerabilities
        the {c} blocks every connection between tiers that is not listed
        the {c} rotates keys every {n} days without downtime
        the {c} showed that read tokens could list other stores
        the {c} must run before every release, not only once a quarter
        the {c} keeps secrets out of environment dumps and crash reports
        the {c} flagged a container running as root in the {team} namespace
        the {c} requires two people to approve any change to production access
        the {c} missed a token committed to a test fixture
        the {c} encrypts backups with a key that lives outside the cluster
    """,
    "notifications": """
        notification service; email digest; webhook sender; alert inbox; reminder job
        the {c} sent the same digest {n} times after a retry storm
        the {c} batches reminders so nobody gets more than one per hour
        the {c} must respect quiet hours in the recipient's time zone
        the {c} dropped webhooks when the receiver answered slower than {ms}
        the {c} lets each agent mute a room for {n} days
        the {c} signs every webhook so receivers can verify the sender
        the {c} queued {n} thousand messages during the outage on {day}
        the {c} should link straight to the drawer that triggered it
        the {c} retries with exponential backoff up to {n} times
        the {c} was noisy until low-salience updates were left out
    """,
    "documentation": """
        README; decision log; API reference; onboarding guide; runbook
        the {c} lists every setting with its variable and default
        the {c} explains why the embedder refuses to run on the CPU by default
        the {c} was out of date after the {version} release renamed two settings
        the {c} should show a full example of a context pack request
        the {c} helped a new engineer bring the stack up in {n} minutes
        the {c} records the context, the decision and its consequences
        the {c} had no section on restoring a store from a backup
        the {c} is generated from the proto comments on every build
        the {c} needs a troubleshooting page for the most common errors
        the {c} moved into the repository so it is reviewed with the code
    """,
    "performance": """
        latency budget; load test; profiler run; connection pool; thread pool
        the {c} showed that search spends most of its time embedding the query
        the {c} targets a median of {ms} end to end for a search
        the {c} found a lock held across a slow network call
        the {c} reached {n} requests per second on two cores before saturating
        the {c} showed the CPU pinned by the JSON encoder
        the {c} should run on the same machine class as production
        the {c} improved by {pct} after moving the filter into the vector store
        the {c} revealed that the mirror scan grows linearly with the store
        the {c} needs at least {n} distinct queries so caches do not flatter it
        the {c} regressed after the {version} release added a second query
    """,
    "backups": """
        nightly backup; restore drill; export stream; snapshot job; retention policy
        the {c} exports every store as JSON lines that import cleanly
        the {c} took {n} minutes for the largest store last month
        the {c} must be tested by restoring into an empty cluster
        the {c} keeps daily copies for {n} days and monthly copies for a year
        the {c} skipped a store whose name contained a dot
        the {c} runs after the compaction so the copy is smaller
        the {c} restored everything except the retrieval log
        the {c} should refuse to overwrite a store that has newer drawers
        the {c} writes a checksum next to every file it produces
        the {c} failed on {day} because the bucket quota was reached
    """,
    "api gateway": """
        API gateway; rate limiter; REST layer; MCP server; request validator
        the {c} maps every domain error to one HTTP status in one place
        the {c} allows {n} requests per minute per token by default
        the {c} returned a server error for malformed JSON instead of a bad request
        the {c} adds the store context to every call it forwards to a tier
        the {c} should stream large exports instead of buffering them
        the {c} times out calls to a tier after {n} seconds
        the {c} rejected valid store names that contained a dot
        the {c} exposes the same tools to agents as the console uses
        the {c} logged bearer tokens until {person} masked them
        the {c} needs a health route that checks every tier behind it
    """,
}

# Memory-type frames: each wraps one clause into a third-person sentence.
_FRAMES: dict[str, tuple[str, ...]] = {
    "architecture": (
        "{Who} documented the architecture: {clause}.",
        "In the current design, {clause}.",
        "{Who} explained that, by design, {clause}.",
        "The architecture notes for {room_name} say that {clause}.",
    ),
    "workflow": (
        "Before every release {who} checks that {clause}.",
        "The usual workflow of the {team} team assumes that {clause}.",
        "{Who} always confirms that {clause} before merging.",
        "As a routine step, {who} verifies that {clause}.",
    ),
    "implementation": (
        "{Who} implemented the change so that {clause}.",
        "After the refactor by {who}, {clause}.",
        "The code in {room_name} now ensures that {clause}.",
        "{Who} wrote the patch in which {clause}.",
    ),
    "decision": (
        "{Who} decided that {clause}.",
        "The team agreed on {day} that {clause}.",
        "After a long discussion, {who} chose a design in which {clause}.",
        "It was decided in {month} that {clause}.",
    ),
    "bug": (
        "{Who} found a bug: {clause}.",
        "{Who} reported that {clause} under load.",
        "A regression appeared on {day}: {clause}.",
        "{Who} traced an incident to the fact that {clause}.",
    ),
    "spike": (
        "{Who} ran a spike and learned that {clause}.",
        "A two-day experiment by {who} showed that {clause}.",
        "{Who} prototyped an alternative and found that {clause}.",
    ),
    "retrospective": (
        "In the {month} retrospective, the team noted that {clause}.",
        "{Who} said in the retro that {clause}.",
        "Looking back on the quarter, {who} admitted that {clause}.",
    ),
    "acceptance": (
        "The feature counts as done only when {clause}.",
        "{Who} wrote the acceptance criterion that {clause}.",
        "Sign-off for {room_name} requires that {clause}.",
    ),
    "directive": (
        "{Who} asked every agent to make sure that {clause}.",
        "Standing rule from {who}: {clause}.",
        "{Who} insisted that from now on {clause}.",
    ),
    "observation": (
        "{Who} observed that {clause}.",
        "{Who} noticed on {day} that {clause}.",
        "While testing, {who} saw that {clause}.",
    ),
}

# Second and third sentences: context that real notes add after the main point.
_FOLLOW_UPS: tuple[str, ...] = (
    "{Who} plans to revisit this in {month}.",
    "The {team} team was told and agreed to follow up.",
    "The numbers come from the {tool} dashboards of the last {n} days.",
    "{Who} linked the discussion in the {team} channel for reference.",
    "This also affects the {c2}, which depends on it.",
    "Nobody has measured the impact on the {c2} yet.",
    "{Who} thinks the same applies to the {c2}.",
    "The change shipped in {version} after review by {person}.",
    "It came up again during the {month} planning session.",
    "{Person} disagreed at first but accepted it after seeing the data.",
    "A follow-up ticket tracks the remaining work for the {team} team.",
    "The old behaviour stays available behind a flag until {month}.",
    "It cost the team about {n} hours to confirm.",
    "{Who} will check again after the next release.",
)


def _split(words: str) -> tuple[str, ...]:
    return tuple(words.split())


_VOCAB: dict[str, tuple[str, ...]] = {
    "person": _split(
        "Alice Priya Chen Marta Jonas Aisha Diego Yuki Omar Sofia Kwame Ingrid Ravi Leila Nadia"
    ),
    "team": _split("platform search payments mobile infrastructure data growth security"),
    "day": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "the weekend", "release day"),
    "month": _split(
        "January February March April May June July August September October November December"
    ),
    "n": _split("2 3 5 8 10 12 15 20 30 45 60 90 120 500"),
    "pct": ("3%", "5%", "8%", "12%", "20%", "25%", "40%", "60%"),
    "ms": ("15 ms", "25 ms", "40 ms", "80 ms", "120 ms", "300 ms", "2 seconds"),
    "money": ("$40", "$120", "$499", "$1,200", "$7,500"),
    "ratio": ("0.2", "0.3", "0.35", "0.5"),
    "version": ("v2.3", "v2.4", "v3.0", "v3.1", "2026.2", "2026.4"),
    "tool": ("Grafana", "Sentry", "load generator", "profiler", "tracing", "CI"),
}

AGENTS: tuple[str, ...] = ("scout", "forge", "ledger", "quill", "relay", "sentinel")
PROJECTS: tuple[str, ...] = ("atlas", "beacon", "cobalt", "delta", "ember", "fjord", "granite")
TEAMS: tuple[str, ...] = ("platform", "search", "payments", "mobile", "infra", "data", "security")
ROOMS: tuple[str, ...] = (
    tuple(f"projects/{p}" for p in PROJECTS)
    + tuple(f"work/{t}" for t in TEAMS)
    + tuple(f"diary/{a}" for a in AGENTS)
)

# What a query of each intent would plausibly filter on.
INTENT_TYPES: dict[str, tuple[str, ...]] = {
    "debugging": ("bug", "observation"),
    "planning": ("decision", "directive"),
    "design": ("architecture", "decision"),
    "review": ("retrospective", "acceptance"),
    "history": ("decision", "retrospective"),
    "general": ("implementation", "workflow"),
}

# Question frames per intent. No drawer frame starts like these, so a query is never a
# drawer's text, though it shares the drawers' topics and clauses.
_QUESTIONS: dict[str, tuple[str, ...]] = {
    "debugging": (
        "Why is the {c} failing for the {team} team?",
        "What was the fix when the {c} broke after the {version} release?",
        "Why does the {c} throw errors on {day}?",
        "Is there a known bug where {clause}?",
        "What causes the crash in the {c}?",
    ),
    "planning": (
        "What is the plan for the {c} next quarter?",
        "Should we change the {c} before the {month} milestone?",
        "What are we going to do about the {c} now that {clause}?",
        "Which work on the {c} is the next priority?",
    ),
    "design": (
        "How should the {c} be designed so that {clause}?",
        "What is the architecture of the {c}?",
        "What trade-offs did {person} weigh for the {c} interface?",
        "How should the {c} be structured for the {team} team?",
    ),
    "review": (
        "How did the {c} rollout go in {month}?",
        "What went well with the {c}, and what were the lessons learned?",
        "Review what we know since {clause}.",
        "How did {person} assess the {c} after the {version} release?",
    ),
    "history": (
        "When did the {c} change, and why?",
        "What happened to the {c} back in {month}?",
        "Originally, how did the {c} behave before {clause}?",
        "What did the {c} look like previously?",
    ),
    "general": (
        "What do we know about the {c}?",
        "Anything recorded about whether {clause}?",
        "Notes on the {c} for the {team} team?",
        "Tell me about the {c} in {room_name}.",
    ),
}

_PIN_STATUSES = (
    common_pb2.PIN_STATUS_ACTIVE,
    common_pb2.PIN_STATUS_PINNED,
    common_pb2.PIN_STATUS_DEPRECATED,
)
_PIN_WEIGHTS = (0.85, 0.10, 0.05)
# Diaries hold mostly observations and retrospectives; shared rooms hold everything.
_DIARY_TYPE_WEIGHTS = {t: 4.0 if t in ("observation", "retrospective") else 1.0 for t in V2_TYPES}
_ROOM_TYPE_WEIGHTS = {
    t: 2.0 if t in ("implementation", "decision", "bug") else 1.0 for t in V2_TYPES
}
_FORMATTER = string.Formatter()


@dataclass(frozen=True)
class _Topic:
    name: str
    components: tuple[str, ...]
    clauses: tuple[str, ...]


def _parse_topics() -> dict[str, _Topic]:
    topics = {}
    for name, text in _TOPIC_TEXT.items():
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        components = tuple(part.strip() for part in lines[0].split(";"))
        topics[name] = _Topic(name, components, tuple(lines[1:]))
    return topics


TOPICS: dict[str, _Topic] = _parse_topics()
TOPIC_NAMES: tuple[str, ...] = tuple(TOPICS)


def room_topics(room: str) -> tuple[str, ...]:
    """The four topics a room mostly talks about (rooms overlap, as real ones do)."""
    index = ROOMS.index(room)
    return tuple(TOPIC_NAMES[(index * 3 + k) % len(TOPIC_NAMES)] for k in range(4))


# ---------------------------------------------------------------- drawers


@dataclass(frozen=True)
class SyntheticQuery:
    """A search the benchmark sends: the text, the intent it was written for, and the room and
    memory types a caller with that question would plausibly filter on."""

    text: str
    intent: str
    topic: str
    room: str
    memory_types: tuple[str, ...]


def synthetic_drawers(n: int, *, seed: int = 0) -> list[common_pb2.Drawer]:
    """`n` synthetic drawers with unique ids and unique contents; deterministic per seed, and
    the first k of `synthetic_drawers(n)` are `synthetic_drawers(k)`."""
    stream = _drawer_stream(seed)
    return [next(stream) for _ in range(n)]


def _drawer_stream(seed: int) -> Iterator[common_pb2.Drawer]:
    rng = random.Random(seed)
    seen: set[str] = set()
    index = 0
    while True:
        room = rng.choice(ROOMS)
        wing, room_name = room.split("/", 1)
        diary = wing == "diary"
        weights = _DIARY_TYPE_WEIGHTS if diary else _ROOM_TYPE_WEIGHTS
        memory_type = rng.choices(list(weights), list(weights.values()))[0]
        preferred = room_topics(room)
        topic = TOPICS[rng.choice(preferred) if rng.random() < 0.75 else rng.choice(TOPIC_NAMES)]
        author = room_name if diary else rng.choice(_VOCAB["person"] + AGENTS)
        content = _content(rng, topic, memory_type, room_name, author)
        if content in seen:  # identical texts embed identically: keep every drawer distinct
            continue
        seen.add(content)
        yield _drawer(rng, f"syn{seed}-{index:06d}", content, memory_type, room, topic, author)
        index += 1


def _content(rng: random.Random, topic: _Topic, memory_type: str, room: str, author: str) -> str:
    """1-3 sentences, MIN_WORDS..MAX_WORDS words: a framed clause plus follow-ups."""
    while True:
        who = author if author[0].isupper() else f"the {author} agent"
        slots = {"who": who, "room_name": room}
        sentences = [_fill(rng.choice(_FRAMES[memory_type]), rng, topic, slots)]
        wanted = rng.choices((1, 2, 3), (0.35, 0.45, 0.2))[0]
        while len(sentences) < wanted or _words(sentences) < MIN_WORDS:
            sentences.append(_fill(rng.choice(_FOLLOW_UPS), rng, topic, slots))
        while _words(sentences) > MAX_WORDS and len(sentences) > 1:
            sentences.pop()
        if MIN_WORDS <= _words(sentences) <= MAX_WORDS:
            return " ".join(sentences)


def _drawer(
    rng: random.Random,
    drawer_id: str,
    content: str,
    memory_type: str,
    room: str,
    topic: _Topic,
    author: str,
) -> common_pb2.Drawer:
    created = ANCHOR - timedelta(seconds=rng.uniform(0, 365 * 86400))
    quiet_for = min(60 * 86400, (ANCHOR - created).total_seconds())
    active = created + timedelta(seconds=rng.uniform(0, quiet_for))
    drawer = common_pb2.Drawer(
        id=drawer_id,
        content=content,
        memory_type=memory_type,
        pin_status=rng.choices(_PIN_STATUSES, _PIN_WEIGHTS)[0],
        salience=round(rng.uniform(0.2, 0.9), 3),
        wing=room.split("/", 1)[0],
        room=room,
        topic=topic.name,
        added_by=author,
        attributes={"source": "synthetic"},
    )
    if rng.random() < 0.5:  # canonical writes carry a verbatim distinctive phrase
        # From the later part of the first sentence, where the clause (not the frame) is.
        words = content.split(".")[0].split()
        start = rng.randrange(len(words) // 3, max(len(words) // 3 + 1, len(words) - 5))
        drawer.signature = " ".join(words[start : start + 5]).strip(".,:;")
    if rng.random() < 0.4:
        drawer.confidence = round(rng.uniform(0.5, 1.0), 2)
    drawer.created_at.FromDatetime(created)
    drawer.last_activity_at.FromDatetime(active)
    drawer.updated_at.FromDatetime(active)
    return drawer


# ---------------------------------------------------------------- queries


def synthetic_queries(n: int, *, seed: int = 1) -> list[SyntheticQuery]:
    """`n` distinct questions over the drawers' topics, intents cycling through all six."""
    rng = random.Random(seed)
    intents = tuple(_QUESTIONS)
    seen: set[str] = set()
    queries: list[SyntheticQuery] = []
    while len(queries) < n:
        intent = intents[len(queries) % len(intents)]
        room = rng.choice(ROOMS)
        topic = TOPICS[rng.choice(room_topics(room))]
        slots = {"who": rng.choice(_VOCAB["person"]), "room_name": room.split("/", 1)[1]}
        text = _fill(rng.choice(_QUESTIONS[intent]), rng, topic, slots)
        if text in seen:
            continue
        seen.add(text)
        queries.append(SyntheticQuery(text, intent, topic.name, room, INTENT_TYPES[intent]))
    return queries


# ---------------------------------------------------------------- templates


def _fill(template: str, rng: random.Random, topic: _Topic, slots: dict[str, str]) -> str:
    """Fill a template's slots; `{clause}` is itself a filled clause of the topic, and a
    capitalised slot name capitalises its value (sentence starts)."""
    values: dict[str, str] = {}
    for _, slot, _, _ in _FORMATTER.parse(template):
        if not slot or slot in values:
            continue
        key = slot.lower()
        if key == "clause":
            value = _fill(rng.choice(topic.clauses), rng, topic, slots)
        elif key == "c":
            value = rng.choice(topic.components)
        elif key == "c2":
            value = rng.choice(TOPICS[rng.choice(TOPIC_NAMES)].components)
        elif key in slots:
            value = slots[key]
        else:
            value = rng.choice(_VOCAB[key])
        values[slot] = value[0].upper() + value[1:] if slot[0].isupper() else value
    return template.format(**values)


def _words(sentences: Sequence[str]) -> int:
    return sum(len(s.split()) for s in sentences)


# ---------------------------------------------------------------- embedding cache


def cached_vectors(
    texts: Sequence[str],
    cache_dir: Path = DEFAULT_CACHE_DIR,
    *,
    model_path: Path | None = None,
    chunk_size: int = 5000,
    torch_threads: int = 1,
    progress: Callable[[str], None] | None = None,
) -> npt.NDArray[np.float32]:
    """Unit-norm embeddings of `texts`, one row each, computed once and kept on disk.

    The texts are cached in chunks of `chunk_size` by position, each file keyed by a hash of
    its texts and the model, so a prefix of a longer list (10k of 100k) reuses its chunks and
    an interrupted run keeps what it finished. The model is loaded only on a cache miss.
    """
    from services.embedder.core import EmbeddingModel, load_model, resolve_model_path

    path = model_path or resolve_model_path("")
    model_key = f"{path.parent.name}/{path.name}"
    cache_dir.mkdir(parents=True, exist_ok=True)
    model: EmbeddingModel | None = None
    parts: list[npt.NDArray[np.float32]] = []
    for start in range(0, len(texts), chunk_size):
        chunk = list(texts[start : start + chunk_size])
        digest = hashlib.sha256("\x00".join([model_key, *chunk]).encode("utf-8")).hexdigest()
        file = cache_dir / f"vectors-{len(chunk)}-{digest[:32]}.npy"
        if file.is_file():
            parts.append(np.load(file).astype(np.float32, copy=False))
            continue
        if model is None:
            model = load_model(path, device="cpu", fp16=False, torch_threads=torch_threads)
        if progress is not None:
            progress(f"embedding texts {start}..{start + len(chunk)} of {len(texts)}")
        vectors = model.encode(chunk, batch_size=64)
        partial = file.with_suffix(".partial")
        with partial.open("wb") as handle:  # written then renamed: a killed run leaves no
            np.save(handle, vectors)  # truncated file that would read as a cache hit
        partial.replace(file)
        parts.append(vectors)
    if not parts:
        return np.zeros((0, 0), dtype=np.float32)
    return np.ascontiguousarray(np.vstack(parts), dtype=np.float32)


# Beyond this many drawers the model embeds no more texts (a million on a 2-core CPU would take
# most of an hour): the rest are neighbours of embedded ones (`scaled_vectors`).
EMBEDDED_AT_MOST = 100_000
# Noise per vector, relative to its unit length: a copy sits at cosine ~0.9 to its source,
# about where a paraphrase does, so the million keep the clustered shape of real embeddings.
NEIGHBOUR_NOISE = 0.48


def scaled_vectors(
    texts: Sequence[str],
    *,
    embedded: int = EMBEDDED_AT_MOST,
    progress: Callable[[str], None] | None = None,
    seed: int = 7,
) -> npt.NDArray[np.float32]:
    """Vectors for `texts`: the first `embedded` by the model (`cached_vectors`), each later
    one its source's vector (`i % embedded`) plus seeded Gaussian noise, renormalised.

    For timing, not for quality: the later vectors keep the distribution an index and a
    search see (clusters, norms, neighbour distances) without the hour of CPU embedding;
    search results over them are not meaningful and are not scored."""
    real = cached_vectors(texts[:embedded], progress=progress)
    if len(texts) <= embedded:
        return real
    out = np.empty((len(texts), real.shape[1]), dtype=np.float32)
    out[: len(real)] = real
    rng = np.random.default_rng(seed)
    scale = NEIGHBOUR_NOISE / np.sqrt(real.shape[1])
    for start in range(len(real), len(texts), embedded):
        stop = min(start + embedded, len(texts))
        block = real[: stop - start] + rng.normal(0.0, scale, (stop - start, real.shape[1]))
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[start:stop] = block.astype(np.float32)
    return out
