"""Consolidation as a job of the authoring tier: propose (a dry run, the default) or apply
merges of a room's near-duplicate drawers, and undo one (decision 0019).

The proposals come from `core.consolidation` (pure) over the live drawers of each room in
scope, embedded here. Each mergeable proposal's text comes from the store's invoker: the
offline extractive one merges deterministically; a model is asked once per proposal and its
answer kept in the state (`merge_drafts`), held by `read_merge` to the same guarantees, so
applying writes exactly what a dry run showed. Applying a proposal:

1. writes the consolidated drawer through the authoring rules (the store's library, wing and
   room checks, the write policy) with an id derived from the proposal, so a replayed job
   writes the same drawer and an undone one stays deleted (the retrieval tier's tombstones);
2. links it to each source with `supersedes` (search then returns it in their place);
3. deprecates each source, keeping the pin status it had;
4. records all of it, so that undo deletes the drawer and the links and restores each
   source's pin status: the drawers, links and search results that were there before.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections import defaultdict
from datetime import UTC, datetime
from typing import Any, Final

import numpy as np
from engram.v1 import authoring_pb2, common_pb2, retrieval_pb2

from services.authoring import writes
from services.authoring.compose import invoker_for, page_all
from services.authoring.convert import draft_input, mode_of, tier_of
from services.authoring.core import EXTRACTIVE_NAME, Invoker
from services.authoring.core.consolidation import (
    DEFAULT_MIN_SIMILARITY,
    LEAST_MIN_SIMILARITY,
    Member,
    MergedText,
    Proposal,
    extractive_merge,
    merge_request,
    propose,
    read_merge,
)
from services.authoring.core.prompts import merge_prompt
from services.authoring.deps import AuthoringDeps
from services.authoring.state import ConsolidationRecord
from services.runtime.errors import EngramError, InvalidInput, NotFound, PermissionDenied
from services.runtime.grpc_client import call
from services.runtime.job_proto import job_payload, read_payload
from services.runtime.jobs import JobContext
from services.vocabulary.enums import PIN_NAMES, PIN_VALUES

CONSOLIDATE_KIND: Final = "consolidate"
MAX_PROPOSAL_IDS: Final = 500
EMBED_BATCH: Final = 256
ACTOR: Final = "consolidation"


def _check_writer(store: common_pb2.StoreContext, policy_writers: frozenset[str], act: str) -> None:
    tier = tier_of(store)
    if tier not in policy_writers:
        raise PermissionDenied(
            f"the {tier} tier may not {act} in this store: use a write token",
            field="store.caller_tier",
        )


async def plan(deps: AuthoringDeps, request: authoring_pb2.ConsolidateRequest) -> dict[str, Any]:
    """Check a consolidation request and turn it into the job's payload."""
    state = await deps.state(request.store)
    policy = await asyncio.to_thread(state.policy)
    _check_writer(request.store, policy.writers, "consolidate drawers")
    similarity = (
        request.min_similarity if request.HasField("min_similarity") else DEFAULT_MIN_SIMILARITY
    )
    if not LEAST_MIN_SIMILARITY <= similarity <= 1.0:
        raise InvalidInput(
            f"min_similarity must be between {LEAST_MIN_SIMILARITY} and 1.0, got {similarity}: "
            "below that, two drawers are not reliably the same memory",
            field="min_similarity",
        )
    if request.proposal_ids and not request.apply:
        raise InvalidInput(
            "proposal_ids choose what to apply: set apply, or leave them out for a dry run",
            field="proposal_ids",
        )
    if len(request.proposal_ids) > MAX_PROPOSAL_IDS:
        raise InvalidInput(f"at most {MAX_PROPOSAL_IDS} proposal_ids", field="proposal_ids")
    writes.check_reason(request.reason)
    # The queued job is the request itself, its defaults resolved.
    queued = authoring_pb2.ConsolidateRequest()
    queued.CopyFrom(request)
    queued.min_similarity = similarity
    del queued.proposal_ids[:]
    queued.proposal_ids.extend(dict.fromkeys(request.proposal_ids))
    return job_payload(queued)


def consolidate_handler(deps: AuthoringDeps) -> Any:
    async def handle(ctx: JobContext, queued: dict[str, Any]) -> common_pb2.ConsolidateResult:
        payload = read_payload(queued, authoring_pb2.ConsolidateRequest)
        async with invoker_for(deps, payload.store) as invoker:
            return await run(deps, ctx, payload, invoker)

    return handle


async def merged_text(
    deps: AuthoringDeps,
    store: common_pb2.StoreContext,
    invoker: Invoker,
    proposal: Proposal,
    base: common_pb2.Drawer,
) -> MergedText:
    """The text `proposal` writes: the deterministic merge for the extractive invoker; a
    model's answer (asked once, kept) held to the merge's guarantees otherwise. A model that
    cannot be reached leaves the deterministic merge with a note, and is asked again next
    time."""
    if invoker.name == EXTRACTIVE_NAME:
        return extractive_merge(proposal)
    who = f"{invoker.name}:{invoker.model}"
    state = await deps.state(store)
    kept = await asyncio.to_thread(state.merge_draft, proposal.id, who)
    if kept is not None:
        return kept
    rules = deps.rules
    mode = mode_of(store)
    request = merge_request(
        proposal, mode=mode, wing=base.wing, room=base.room, prompt_text=merge_prompt(rules)
    )
    try:
        answer = await invoker.compose(request)
    except EngramError as error:
        return extractive_merge(proposal, notes=[f"{who} could not be asked: {error.message}"])
    merged = read_merge(
        answer, proposal, mode=mode, merged_by=who, max_chars=rules.max_content_chars
    )
    await asyncio.to_thread(state.keep_merge_draft, proposal.id, who, merged)
    return merged


async def _live_drawers(
    deps: AuthoringDeps, payload: authoring_pb2.ConsolidateRequest
) -> list[common_pb2.Drawer]:
    """Drawers that may be merged: in scope, neither pinned nor deprecated."""
    drawers: list[common_pb2.Drawer] = await page_all(
        deps.retrieval.ListDrawers,
        retrieval_pb2.ListDrawersRequest(
            store=payload.store,
            filter=retrieval_pb2.DrawerFilter(wing=payload.wing, room=payload.room),
        ),
        "drawers",
    )
    skipped = {common_pb2.PIN_STATUS_PINNED, common_pb2.PIN_STATUS_DEPRECATED}
    return [d for d in drawers if d.pin_status not in skipped]


def _member(drawer: common_pb2.Drawer) -> Member:
    return Member(
        id=drawer.id,
        content=drawer.content,
        memory_type=drawer.memory_type,
        signature=drawer.signature if drawer.HasField("signature") else None,
        created_at=drawer.created_at.seconds + drawer.created_at.nanos / 1e9,
    )


async def run(
    deps: AuthoringDeps,
    ctx: JobContext,
    payload: authoring_pb2.ConsolidateRequest,
    invoker: Invoker,
) -> common_pb2.ConsolidateResult:
    drawers = await _live_drawers(deps, payload)
    by_room: dict[str, list[common_pb2.Drawer]] = defaultdict(list)
    for drawer in drawers:
        by_room[drawer.room].append(drawer)
    rooms = sorted(by_room)
    result = common_pb2.ConsolidateResult(
        dry_run=not payload.apply, drawers_considered=len(drawers)
    )
    wanted = set(payload.proposal_ids)
    await ctx.report(items_done=0, items_total=len(rooms), units_done=0, unit="proposals")
    for done, room in enumerate(rooms, start=1):
        members = [_member(d) for d in by_room[room]]
        vectors = np.concatenate(
            [
                await deps.embedder.embed([m.content for m in members[i : i + EMBED_BATCH]])
                for i in range(0, len(members), EMBED_BATCH)
            ]
        )
        by_id = {d.id: d for d in by_room[room]}
        for proposal in propose(members, vectors, payload.min_similarity):
            if not proposal.mergeable:
                result.flagged += 1
                result.proposals.append(_proposal_proto(proposal, room, None))
                continue
            chosen = payload.apply and (not wanted or proposal.id in wanted)
            if not payload.apply or chosen:
                text = await merged_text(
                    deps, payload.store, invoker, proposal, by_id[proposal.base.id]
                )
            else:
                text = extractive_merge(proposal)  # not asked for: no model call for it
            shown = _proposal_proto(proposal, room, text)
            if chosen:
                try:
                    record = await apply(deps, payload, proposal, text, by_id, job_id=ctx.job_id)
                except EngramError as error:
                    await ctx.item_error(proposal.id, error.code, error.message)
                else:
                    shown.consolidation_id = record.id
                    if record.job_id == ctx.job_id and record.undone_at is None:
                        result.applied += 1
            result.proposals.append(shown)
        await ctx.report(
            items_done=done,
            items_total=len(rooms),
            units_done=len(result.proposals),
            unit="proposals",
            message=f"{done}/{len(rooms)} rooms",
        )
    if payload.apply:
        proposed = {p.id for p in result.proposals}
        for missing in sorted(wanted - proposed):
            await ctx.item_error(
                missing,
                "not_found",
                "no such proposal in this run: the drawers changed since it was proposed "
                "(run a dry run again for the current ids)",
            )
    return result


def _proposal_proto(
    proposal: Proposal, room: str, text: MergedText | None
) -> common_pb2.ConsolidationProposal:
    """A proposal as shown; a flagged one (`text` None) shows the deterministic merge."""
    text = text or extractive_merge(proposal)
    shown = common_pb2.ConsolidationProposal(
        id=proposal.id,
        room=room,
        memory_type=proposal.base.memory_type,
        source_ids=[m.id for m in proposal.members],
        merged_content=text.content,
        conflicts=list(proposal.conflicts),
        mergeable=proposal.mergeable,
        least_similarity=proposal.least_similarity,
        merged_by=text.merged_by,
        merge_notes=list(text.notes),
    )
    if text.signature is not None:
        shown.signature = text.signature
    return shown


def merged_id(proposal_id: str) -> str:
    """The consolidated drawer of a proposal: always the same id (replays, tombstones)."""
    return "d_" + hashlib.sha256(f"consolidated\x00{proposal_id}".encode()).hexdigest()[:32]


async def apply(
    deps: AuthoringDeps,
    payload: authoring_pb2.ConsolidateRequest,
    proposal: Proposal,
    text: MergedText,
    by_id: dict[str, common_pb2.Drawer],
    *,
    job_id: str,
) -> ConsolidationRecord:
    """Write the consolidated drawer, link and deprecate the sources, record it all. A replay
    of the job that applied it (even undone since) or a live application by another job
    returns that record and does nothing."""
    store = payload.store
    state = await deps.state(store)
    done = await asyncio.to_thread(state.applied_consolidation, proposal.id, job_id)
    if done is not None:
        return done
    base = by_id[proposal.base.id]
    draft = authoring_pb2.DrawerDraft(
        content=text.content,
        memory_type=base.memory_type,
        wing=base.wing,
        room=base.room,
        topic=base.topic,
        added_by=base.added_by,
    )
    if base.HasField("confidence"):
        draft.confidence = base.confidence
    draft.attributes.update(
        {
            "consolidated_from": ",".join(m.id for m in proposal.members),
            "merged_by": text.merged_by,
        }
    )
    checked = draft_input(draft, added_by=base.added_by or ACTOR)
    await writes.validate(
        deps,
        store,
        checked,
        signed=text.signature is not None,
        signature=text.signature,
        allow_new_wing=False,
    )
    drawer = writes.drawer_from(draft, checked, text.signature)
    drawer.id = merged_id(proposal.id)
    drawer.attributes["write"] = "consolidated"
    # A new application of a proposal undone before writes its drawer again on purpose.
    await writes.index(deps, store, [drawer], revive=True)
    reason = payload.reason or f"consolidated {len(proposal.members)} near-duplicates"
    link_ids = []
    for member in proposal.members:
        link = await call(
            deps.retrieval.CreateLink,
            retrieval_pb2.CreateLinkRequest(
                store=store,
                from_id=drawer.id,
                to_id=member.id,
                type=retrieval_pb2.LINK_TYPE_SUPERSEDES,
                reason=f"consolidation: {reason}",
            ),
        )
        link_ids.append(link.id)
    sources = {}
    for member in proposal.members:
        sources[member.id] = PIN_NAMES[by_id[member.id].pin_status]
        await call(
            deps.retrieval.UpdateDrawerMetadata,
            retrieval_pb2.UpdateDrawerMetadataRequest(
                store=store, id=member.id, pin_status=common_pb2.PIN_STATUS_DEPRECATED
            ),
        )
    record = ConsolidationRecord(
        id=f"cons_{uuid.uuid4().hex[:16]}",
        proposal_id=proposal.id,
        merged_id=drawer.id,
        sources=sources,
        link_ids=link_ids,
        applied_at=datetime.now(UTC),
        applied_by=store.caller_id or ACTOR,
        reason=reason,
        job_id=job_id,
    )
    await asyncio.to_thread(state.record_consolidation, record)
    actor = store.caller_id or ACTOR
    await asyncio.to_thread(
        state.record,
        drawer.id,
        actor=actor,
        action="created",
        reason=reason,
        changes={"consolidation": record.id, "sources": ",".join(sources)},
    )
    for source in sources:
        await asyncio.to_thread(
            state.record,
            source,
            actor=actor,
            action="consolidated",
            reason=reason,
            changes={"consolidation": record.id, "into": drawer.id},
        )
    return record


async def undo(
    deps: AuthoringDeps, request: authoring_pb2.UndoConsolidationRequest
) -> authoring_pb2.Consolidation:
    """Delete the consolidated drawer and its links, give each source its pin status back."""
    store = request.store
    if tier_of(store) != "admin":
        raise PermissionDenied(
            "undoing a consolidation needs an admin token", field="store.caller_tier"
        )
    writes.check_reason(request.reason)
    state = await deps.state(store)
    record = await asyncio.to_thread(state.consolidation, request.id)
    if record.undone_at is not None:
        return consolidation_proto(record)
    for link_id in record.link_ids:
        await call(
            deps.retrieval.DeleteLink, retrieval_pb2.DeleteLinkRequest(store=store, id=link_id)
        )
    reason = request.reason or f"undo of {record.id}"
    await writes.delete_many(deps, store, [record.merged_id], reason=reason)
    for source, pin in record.sources.items():
        try:
            await call(
                deps.retrieval.UpdateDrawerMetadata,
                retrieval_pb2.UpdateDrawerMetadataRequest(
                    store=store, id=source, pin_status=PIN_VALUES[pin]
                ),
            )
        except NotFound:
            continue  # deleted since: nothing to give back
        await asyncio.to_thread(
            state.record,
            source,
            actor=store.caller_id or ACTOR,
            action="restored",
            reason=reason,
            changes={"consolidation": record.id, "pin_status": pin},
        )
    undone = await asyncio.to_thread(state.mark_undone, record.id, by=store.caller_id or "admin")
    return consolidation_proto(undone)


async def list_consolidations(
    deps: AuthoringDeps, request: authoring_pb2.ListConsolidationsRequest
) -> authoring_pb2.ListConsolidationsResponse:
    state = await deps.state(request.store)
    records = await asyncio.to_thread(state.consolidations)
    return authoring_pb2.ListConsolidationsResponse(
        consolidations=[consolidation_proto(r) for r in records]
    )


def consolidation_proto(record: ConsolidationRecord) -> authoring_pb2.Consolidation:
    shown = authoring_pb2.Consolidation(
        id=record.id,
        proposal_id=record.proposal_id,
        merged_id=record.merged_id,
        source_ids=list(record.sources),
        link_ids=record.link_ids,
        applied_by=record.applied_by,
        undone_by=record.undone_by,
        reason=record.reason,
    )
    shown.applied_at.FromDatetime(record.applied_at)
    if record.undone_at is not None:
        shown.undone_at.FromDatetime(record.undone_at)
    return shown
