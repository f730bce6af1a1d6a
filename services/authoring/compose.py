"""Composing drawers from raw sessions: the compose job, the dry run, and the walkback.

One session at a time: its chunks are read from the corpus tier, the store's invoker is run
with the active prompt, its output goes through `finished_output` (`parse_output`'s
all-or-nothing structure, then the post-processing every invoker's drafts share: stage
directions out, relative times dated, the speaker of the cited chunks), every proposal
through `validate_draft`, and the valid ones are written through the retrieval
tier with `derived_from` arcs to the chunks they cite, a session descriptor, and provenance
(prompt version, invoker, model, job). A session whose output is malformed fails alone and
writes nothing; the job goes on with the others.

Drawer ids are derived from the session and the normalised content, so a job that runs again
(a worker died half-way, or the same compose is submitted twice) writes the same drawers, not
copies. With `replace_existing` (re-authoring), drawers derived from the session that the new
run did not produce are deleted afterwards: the session ends with exactly the new set.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from engram.v1 import authoring_pb2, common_pb2, corpus_pb2, retrieval_pb2

from services.authoring import writes
from services.authoring.convert import mode_of, tier_of
from services.authoring.core import (
    ComposeChunk,
    ComposeInput,
    DraftProposal,
    ExtractiveInvoker,
    Invoker,
    finished_output,
    normalise_space,
)
from services.authoring.deps import WING_SAMPLE, AuthoringDeps
from services.authoring.invokers import ProviderSpec, build_invoker
from services.authoring.state import Prompt
from services.runtime.errors import (
    EngramError,
    InvalidInput,
    Overloaded,
    PermissionDenied,
    Unavailable,
)
from services.runtime.grpc_client import call
from services.runtime.job_proto import job_payload, read_payload
from services.runtime.jobs import JobContext
from services.vocabulary import MAX_EXCERPT_CHARS, MAX_EXCERPTS_CHARS
from services.vocabulary.enums import PIN_VALUES

logger = logging.getLogger(__name__)

COMPOSE_KIND = "compose_drawers"
PAGE = 500


@dataclass
class SessionDrafts:
    """What one session's invoker run proposed: drawers ready to write, and the rejected."""

    session_id: str
    drawers: list[common_pb2.Drawer] = field(default_factory=list)
    rejected: list[authoring_pb2.RejectedDraft] = field(default_factory=list)
    new_wings: set[str] = field(default_factory=set)


# ---------------------------------------------------------------- reading the corpus


async def page_all(rpc: Any, request: Any, items: str) -> list[Any]:
    out: list[Any] = []
    token = ""
    while True:
        request.page.CopyFrom(common_pb2.PageRequest(page_size=PAGE, page_token=token))
        answer = await call(rpc, request)
        out.extend(getattr(answer, items))
        token = answer.page.next_page_token
        if not token:
            return out


async def sessions_of_files(
    deps: AuthoringDeps, store: common_pb2.StoreContext, file_ids: Sequence[str]
) -> dict[str, str]:
    """session id → file id for every session of these files (unknown files: NotFound)."""
    found: dict[str, str] = {}
    for file_id in file_ids:
        await call(deps.corpus.GetFile, corpus_pb2.GetFileRequest(store=store, file_id=file_id))
        sessions = await page_all(
            deps.corpus.ListSessions,
            corpus_pb2.ListSessionsRequest(store=store, file_id=file_id),
            "sessions",
        )
        for summary in sessions:
            found[summary.descriptor.session_id] = file_id
    return found


async def session_chunks(
    deps: AuthoringDeps, store: common_pb2.StoreContext, session_id: str
) -> list[common_pb2.RawChunk]:
    answer = await call(
        deps.corpus.GetSessionChunks,
        corpus_pb2.GetSessionChunksRequest(store=store, session_id=session_id),
    )
    return sorted(answer.chunks, key=lambda c: c.ordinal)


async def derived_drawers(
    deps: AuthoringDeps, store: common_pb2.StoreContext, session_id: str
) -> list[common_pb2.Drawer]:
    """Every drawer of the pool derived from one raw session."""
    return await page_all(
        deps.retrieval.ListDrawers,
        retrieval_pb2.ListDrawersRequest(
            store=store, filter=retrieval_pb2.DrawerFilter(derived_from_session=session_id)
        ),
        "drawers",
    )


# ---------------------------------------------------------------- running the invoker


@asynccontextmanager
async def invoker_for(
    deps: AuthoringDeps, store: common_pb2.StoreContext
) -> AsyncIterator[Invoker]:
    """The store's configured invoker (the offline extractive one by default), closed after
    use: an SDK invoker holds an HTTP client."""
    state = await deps.state(store)
    provider = await asyncio.to_thread(state.provider)
    if provider.invoker in ("", "extractive"):
        yield ExtractiveInvoker(deps.embedder.embed, rules=deps.rules)
        return
    spec = ProviderSpec(
        invoker=provider.invoker,
        model=provider.model,
        reasoning_effort=provider.reasoning_effort,
        base_url=provider.base_url,
        timeout_s=deps.settings.invoker_timeout_s,
    )
    invoker = build_invoker(spec, deps.keys, embed=deps.embedder.embed)
    try:
        yield invoker
    finally:
        close = getattr(invoker, "aclose", None)
        if close is not None:
            await close()


def _descriptor(
    session_id: str, chunks: Sequence[common_pb2.RawChunk]
) -> common_pb2.SessionDescriptor:
    descriptor = common_pb2.SessionDescriptor(
        session_id=session_id,
        raw_chunk_count=len(chunks),
        origin_kind=chunks[0].origin_kind if chunks else "",
    )
    stamps = [c.occurred_at if c.HasField("occurred_at") else c.created_at for c in chunks]
    stamps = [s for s in stamps if s.seconds or s.nanos]
    if stamps:
        descriptor.span_start.CopyFrom(min(stamps, key=lambda s: (s.seconds, s.nanos)))
        descriptor.span_end.CopyFrom(max(stamps, key=lambda s: (s.seconds, s.nanos)))
    return descriptor


def source_excerpts(texts: Sequence[str]) -> list[str]:
    """The excerpts a composed drawer's arcs carry of the chunks it cites: each chunk's text
    up to `MAX_EXCERPT_CHARS` (cut at a word), and nothing past `MAX_EXCERPTS_CHARS` in all."""
    excerpts: list[str] = []
    left = MAX_EXCERPTS_CHARS
    for text in texts:
        text = normalise_space(text)
        limit = min(MAX_EXCERPT_CHARS, left)
        if len(text) > limit:
            text = text[:limit].rsplit(" ", 1)[0] if limit else ""
        excerpts.append(text)
        left -= len(text)
    return excerpts


def composed_id(session_id: str, content: str) -> str:
    """The same session and content always make the same drawer id (idempotent jobs)."""
    digest = hashlib.sha256(f"{session_id}\x00{normalise_space(content)}".encode()).hexdigest()
    return f"d_{digest[:32]}"


def _draft_proto(proposal: DraftProposal) -> authoring_pb2.DrawerDraft:
    draft = authoring_pb2.DrawerDraft(
        content=proposal.content,
        memory_type=proposal.memory_type,
        pin_status=PIN_VALUES.get(proposal.pin_status, common_pb2.PIN_STATUS_ACTIVE),
        wing=proposal.wing,
        room=proposal.room,
        topic=proposal.topic,
    )
    if proposal.confidence is not None:
        draft.confidence = proposal.confidence
    return draft


def proposal_preview(proposal: DraftProposal) -> authoring_pb2.DrawerDraft:
    """A proposal as an invoker made it, shown as a draft: its signature and speaker too."""
    draft = _draft_proto(proposal)
    if proposal.signature:
        draft.signature = proposal.signature
    if proposal.speaker:
        draft.attributes["speaker"] = proposal.speaker
    return draft


async def draft_session(
    deps: AuthoringDeps,
    store: common_pb2.StoreContext,
    invoker: Invoker,
    prompt: Prompt,
    session_id: str,
    *,
    allow_new_wing: bool = False,
    job_id: str = "",
) -> SessionDrafts:
    """Run the invoker over one session and validate what it proposes; writes nothing.

    Raises MalformedOutput (the whole session fails) or NotFound (no such session).
    """
    chunks = await session_chunks(deps, store, session_id)
    if not chunks:
        raise InvalidInput(f"raw session {session_id!r} has no chunks", field="session_ids")
    wings, rooms = await deps.places(store)
    mode = mode_of(store)
    request = ComposeInput(
        session_id=session_id,
        chunks=[
            ComposeChunk(
                c.id,
                c.speaker,
                c.content,
                c.occurred_at.ToDatetime() if c.HasField("occurred_at") else None,
                c.role,
            )
            for c in chunks
        ],
        prompt_text=prompt.text,
        mode=mode,
        wings=wings[:WING_SAMPLE],
        rooms=rooms[:WING_SAMPLE],
    )
    text = await invoker.compose(request)
    by_id = {c.id: c for c in chunks}
    parsed = finished_output(text, mode=mode, chunks=request.chunks)
    out = SessionDrafts(session_id)
    for problem in parsed.problems:
        out.rejected.append(authoring_pb2.RejectedDraft(reason=problem))
    descriptor = _descriptor(session_id, chunks)
    added_by = store.caller_id or f"{invoker.name}"
    for proposal in parsed.drafts:
        draft = _draft_proto(proposal)
        try:
            validation = await writes.validate(
                deps,
                store,
                proposal.to_input(added_by=added_by),
                signed=proposal.signed,
                signature=proposal.signature,
                allow_new_wing=allow_new_wing,
            )
        except (InvalidInput, PermissionDenied) as error:
            out.rejected.append(authoring_pb2.RejectedDraft(drawer=draft, reason=error.message))
            continue
        if validation.new_wing:
            out.new_wings.add(proposal.wing)
        drawer = writes.drawer_from(draft, proposal.to_input(added_by=added_by), proposal.signature)
        drawer.id = composed_id(session_id, proposal.content)
        drawer.derived_from.extend(
            common_pb2.DerivedFromArc(
                raw_chunk_id=cid,
                session_id=session_id,
                ordinal=by_id[cid].ordinal,
                excerpt=excerpt,
            )
            for cid, excerpt in zip(
                proposal.derived_from,
                source_excerpts([by_id[cid].content for cid in proposal.derived_from]),
                strict=True,
            )
        )
        drawer.sessions.append(descriptor)
        drawer.attributes.update(
            {
                "write": "canonical" if proposal.signed else "ambient",
                "prompt_version": prompt.version,
                "invoker": invoker.name,
                "model": invoker.model,
                **({"compose_job": job_id} if job_id else {}),
                **({"speaker": proposal.speaker} if proposal.speaker else {}),
            }
        )
        out.drawers.append(drawer)
    return out


# ---------------------------------------------------------------- writing


async def write_session(
    deps: AuthoringDeps,
    store: common_pb2.StoreContext,
    drafts: SessionDrafts,
    *,
    replace_existing: bool,
    reason: str,
) -> tuple[int, int, int]:
    """Write a session's drafts (duplicates and drawers an earlier run wrote skipped); with
    `replace_existing` rewrite those and delete the session's earlier drawers the new run did
    not produce. Drafts whose drawer was deleted
    since an earlier run are not written again (the retrieval tier's tombstones): a replayed
    or repeated compose never brings back what someone deleted. Returns (written, deleted,
    forgotten)."""
    earlier = {d.id for d in await derived_drawers(deps, store, drafts.session_id)}
    fresh: list[common_pb2.Drawer] = []
    for drawer in drafts.drawers:
        if drawer.id in earlier and not replace_existing:
            # An earlier run of this session wrote it (a replay or a repeat): it stays as it
            # is now, with whatever an operator did to it since (a pin, a deprecation).
            continue
        duplicate = (await writes.find_duplicate(deps, store, drawer)).duplicate
        if duplicate is None or (replace_existing and duplicate.id in earlier):
            fresh.append(drawer)
    written = await writes.index(deps, store, fresh) if fresh else []
    state = await deps.state(store)
    for drawer in written:
        action = "updated" if drawer.id in earlier else "created"
        await asyncio.to_thread(
            state.record,
            drawer.id,
            actor=store.caller_id or drawer.attributes.get("invoker", "compose"),
            action=action,
            reason=reason,
            changes={
                "prompt_version": drawer.attributes.get("prompt_version", ""),
                "invoker": drawer.attributes.get("invoker", ""),
                "model": drawer.attributes.get("model", ""),
                "session": drafts.session_id,
            },
        )
    deleted = 0
    if replace_existing:
        stale = sorted(earlier - {d.id for d in drafts.drawers})
        deleted = await writes.delete_many(
            deps, store, stale, reason=f"re-authored session {drafts.session_id}"
        )
    return len(written), deleted, len(fresh) - len(written)


async def mark_files(
    deps: AuthoringDeps, store: common_pb2.StoreContext, sessions_by_file: dict[str, list[str]]
) -> None:
    """Tell the corpus tier how many drawers now derive from each file."""
    counts: dict[str, int] = {}
    for file_id, session_ids in sessions_by_file.items():
        counts[file_id] = 0
        for session_id in session_ids:
            counts[file_id] += len(await derived_drawers(deps, store, session_id))
    if counts:
        await call(
            deps.corpus.MarkFilesAuthored,
            corpus_pb2.MarkFilesAuthoredRequest(store=store, derived_drawers_by_file=counts),
        )


# ---------------------------------------------------------------- the job


async def plan(deps: AuthoringDeps, request: authoring_pb2.ComposeRequest) -> dict[str, Any]:
    """Check a compose request and turn it into the job's payload (sessions resolved)."""
    store = request.store
    tier = tier_of(store)
    state = await deps.state(store)
    policy = await asyncio.to_thread(state.policy)
    if tier not in policy.writers:
        raise PermissionDenied(
            f"the {tier} tier may not compose drawers in this store: use a write token",
            field="store.caller_tier",
        )
    if not request.session_ids and not request.file_ids:
        raise InvalidInput("name session_ids or file_ids to compose from", field="session_ids")
    by_file = await sessions_of_files(deps, store, list(dict.fromkeys(request.file_ids)))
    sessions = list(dict.fromkeys([*request.session_ids, *by_file]))
    if not sessions:
        raise InvalidInput(
            "the files have no raw sessions yet: ingest them first", field="file_ids"
        )
    if len(sessions) > deps.settings.max_sessions_per_job:
        raise InvalidInput(
            f"{len(sessions)} sessions in one compose; the limit is "
            f"{deps.settings.max_sessions_per_job}",
            field="session_ids",
        )
    for session_id in request.session_ids:
        if not session_id.strip() or len(session_id) > 256:
            raise InvalidInput("a session id is 1-256 characters", field="session_ids")
    payload = authoring_pb2.ComposeJobPayload(
        store=store,
        sessions=sessions,
        replace_existing=request.replace_existing,
        allow_new_wing=request.allow_new_wing,
    )
    for session_id, file_id in by_file.items():
        payload.sessions_by_file[file_id].ids.append(session_id)
    return job_payload(payload)


def compose_payload(queued: dict[str, Any]) -> authoring_pb2.ComposeJobPayload:
    """The queued payload; one queued by an earlier version (the store as base64 bytes, files
    as a plain map) is read too, so an upgrade never strands a queued job."""
    if not isinstance(queued.get("store"), str):
        return read_payload(queued, authoring_pb2.ComposeJobPayload)
    payload = authoring_pb2.ComposeJobPayload(
        store=common_pb2.StoreContext.FromString(base64.b64decode(queued["store"])),
        sessions=queued.get("sessions", []),
        replace_existing=bool(queued.get("replace_existing")),
        allow_new_wing=bool(queued.get("allow_new_wing")),
    )
    for file_id, sessions in (queued.get("files") or {}).items():
        payload.sessions_by_file[file_id].ids.extend(sessions)
    return payload


def compose_handler(deps: AuthoringDeps) -> Any:
    """The `compose_drawers` job: each session in turn, progress per session, errors per
    session (a malformed model answer fails that session only)."""

    async def handle(ctx: JobContext, queued: dict[str, Any]) -> common_pb2.ComposeResult:
        payload = compose_payload(queued)
        state = await deps.state(payload.store)
        prompt = await asyncio.to_thread(state.prompt, mode_of(payload.store), "")
        async with invoker_for(deps, payload.store) as invoker:
            return await _run_sessions(deps, ctx, invoker, prompt, payload)

    return handle


async def _run_sessions(
    deps: AuthoringDeps,
    ctx: JobContext,
    invoker: Invoker,
    prompt: Prompt,
    payload: authoring_pb2.ComposeJobPayload,
) -> common_pb2.ComposeResult:
    """Each session in turn: draft, write, report; a failing session is an item error."""
    store, sessions = payload.store, list(payload.sessions)
    written = deleted = rejected = failed = forgotten = 0
    await ctx.report(items_done=0, items_total=len(sessions), units_done=0, unit="drawers")
    for done, session_id in enumerate(sessions, start=1):
        try:
            drafts = await draft_session(
                deps,
                store,
                invoker,
                prompt,
                session_id,
                allow_new_wing=payload.allow_new_wing,
                job_id=ctx.job_id,
            )
            rejected += len(drafts.rejected)
            added, removed, skipped = await writes_for(
                deps, store, drafts, payload.replace_existing, ctx
            )
            written += added
            deleted += removed
            forgotten += skipped
        except (Unavailable, Overloaded):
            raise  # passing: the job is retried later, and skips what this attempt wrote
        except EngramError as error:
            failed += 1
            logger.info("compose: session %s failed: %s", session_id, error.message)
            await ctx.item_error(session_id, error.code, error.message)
        await ctx.report(
            items_done=done,
            items_total=len(sessions),
            units_done=written,
            unit="drawers",
            message=f"{done}/{len(sessions)} sessions",
        )
    await mark_files(
        deps,
        store,
        {file_id: list(listed.ids) for file_id, listed in payload.sessions_by_file.items()},
    )
    return common_pb2.ComposeResult(
        sessions=len(sessions),
        failed_sessions=failed,
        drawers_written=written,
        drawers_replaced=deleted,
        drafts_rejected=rejected,
        drawers_forgotten=forgotten,
        prompt_version=prompt.version,
        invoker=invoker.name,
        model=invoker.model,
    )


async def writes_for(
    deps: AuthoringDeps,
    store: common_pb2.StoreContext,
    drafts: SessionDrafts,
    replace_existing: bool,
    ctx: JobContext,
) -> tuple[int, int, int]:
    for reason in drafts.rejected:
        await ctx.item_error(drafts.session_id, "rejected_draft", reason.reason)
    return await write_session(
        deps,
        store,
        drafts,
        replace_existing=replace_existing,
        reason=f"composed by job {ctx.job_id}",
    )


# ---------------------------------------------------------------- dry run, walkback


def _preview(drawer: common_pb2.Drawer) -> authoring_pb2.DrawerDraft:
    """A drawer compose would write, as the draft a dry run shows (its signature included)."""
    draft = authoring_pb2.DrawerDraft(
        content=drawer.content,
        memory_type=drawer.memory_type,
        pin_status=drawer.pin_status,
        wing=drawer.wing,
        room=drawer.room,
        topic=drawer.topic,
        added_by=drawer.added_by,
        derived_from=list(drawer.derived_from),
        attributes=dict(drawer.attributes),
    )
    if drawer.HasField("confidence"):
        draft.confidence = drawer.confidence
    if drawer.HasField("signature"):
        draft.signature = drawer.signature
    return draft


async def dry_run(
    deps: AuthoringDeps, request: authoring_pb2.DryRunRequest
) -> authoring_pb2.DryRunResponse:
    """The drawers one session would produce with the live config; writes nothing."""
    store = request.store
    if not request.session_id:
        raise InvalidInput("session_id is empty", field="session_id")
    state = await deps.state(store)
    prompt = await asyncio.to_thread(state.prompt, mode_of(store), request.prompt_version)
    async with invoker_for(deps, store) as invoker:
        drafts = await draft_session(
            deps, store, invoker, prompt, request.session_id, allow_new_wing=request.allow_new_wing
        )
    return authoring_pb2.DryRunResponse(
        drawers=[_preview(d) for d in drafts.drawers],
        rejected=drafts.rejected,
        prompt_version=prompt.version,
        invoker=invoker.name,
        model=invoker.model,
    )


async def walkback(
    deps: AuthoringDeps, request: authoring_pb2.WalkbackRequest
) -> authoring_pb2.WalkbackResponse:
    """Delete everything downstream of files or sessions: their derived drawers, and with
    `delete_raw` the raw chunks too (and, for files, the files). Leaves no orphans."""
    store = request.store
    tier = tier_of(store)
    state = await deps.state(store)
    policy = await asyncio.to_thread(state.policy)
    if tier not in policy.writers:
        raise PermissionDenied(
            f"the {tier} tier may not walk back drawers in this store", field="store.caller_tier"
        )
    if not request.session_ids and not request.file_ids:
        raise InvalidInput("name session_ids or file_ids to walk back", field="session_ids")
    file_ids = list(dict.fromkeys(request.file_ids))
    by_file = await sessions_of_files(deps, store, file_ids)
    sessions = list(dict.fromkeys([*request.session_ids, *by_file]))
    drawers = 0
    for session_id in sessions:
        ids = [d.id for d in await derived_drawers(deps, store, session_id)]
        drawers += await writes.delete_many(
            deps, store, ids, reason=f"walkback of session {session_id}"
        )
    raw = 0
    if request.delete_raw:
        for file_id in file_ids:
            answer = await call(
                deps.corpus.DeleteFile,
                corpus_pb2.DeleteFileRequest(store=store, file_id=file_id, delete_raw=True),
            )
            raw += answer.raw_chunks_deleted
        direct = [s for s in request.session_ids if s not in by_file]
        if direct:
            gone = await call(
                deps.corpus.DeleteRawSessions,
                corpus_pb2.DeleteRawSessionsRequest(store=store, session_ids=direct),
            )
            raw += gone.raw_chunks_deleted
    elif file_ids:
        await call(
            deps.corpus.MarkFilesAuthored,
            corpus_pb2.MarkFilesAuthoredRequest(
                store=store, derived_drawers_by_file=dict.fromkeys(file_ids, 0)
            ),
        )
    return authoring_pb2.WalkbackResponse(drawers_deleted=drawers, raw_chunks_deleted=raw)
