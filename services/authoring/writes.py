"""Direct drawer writes (HEAVY-SPLIT), updates and deletes, each logged to the provenance log.

Every write is validated here (`validate_draft`: the store's library, the caller's tier, wing
and room, signature) and then goes through the retrieval tier, which owns the pool. Before a
new drawer is written the retrieval tier is asked for near-duplicates (the same content hash,
or cosine ≥ `duplicate_similarity` in the same room and type). Only one that makes the same
claim (`core.claims`: no number, name, identifier or negation differs) is a duplicate: the
write answers with it and `duplicate: true`, and nothing is written. A near-copy whose claim
differs is kept beside the new drawer and named in `supersession_candidates` and a warning.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from engram.v1 import authoring_pb2, common_pb2, retrieval_pb2

from services.authoring.convert import draft_input, mode_of, tier_of
from services.authoring.core import DraftInput, Validation, validate_draft
from services.authoring.core.claims import ClaimDifference
from services.authoring.core.neighbours import Neighbour, classify
from services.authoring.core.rules import check_pinned_change, signing_hint
from services.authoring.deps import AuthoringDeps
from services.runtime.errors import InvalidInput, NotFound, PermissionDenied
from services.runtime.grpc_client import call
from services.vocabulary import new_drawer_id
from services.vocabulary.enums import PIN_NAMES, PIN_VALUES

MAX_REASON_CHARS = 500
MAX_ATTRIBUTES = 32
# Near-identical drawers read per write: the first with the same claim is the duplicate.
DUPLICATE_CANDIDATES = 5


def _actor(store: common_pb2.StoreContext, added_by: str = "") -> str:
    return store.caller_id or added_by or "unknown"


def check_reason(reason: str) -> None:
    if len(reason) > MAX_REASON_CHARS:
        raise InvalidInput(f"reason is longer than {MAX_REASON_CHARS} characters", field="reason")


def _check_extras(draft: authoring_pb2.DrawerDraft) -> None:
    if draft.HasField("confidence") and not (
        math.isfinite(draft.confidence) and 0.0 <= draft.confidence <= 1.0
    ):
        raise InvalidInput("confidence must be within 0..1", field="confidence")
    if len(draft.attributes) > MAX_ATTRIBUTES:
        raise InvalidInput(f"at most {MAX_ATTRIBUTES} attributes", field="attributes")
    for key, value in draft.attributes.items():
        if not key or len(key) > 64 or len(value) > 1024:
            raise InvalidInput(
                "attribute keys are 1-64 characters and values at most 1024", field="attributes"
            )


async def validate(
    deps: AuthoringDeps,
    store: common_pb2.StoreContext,
    draft: DraftInput,
    *,
    signed: bool,
    signature: str | None,
    allow_new_wing: bool,
) -> Validation:
    """The rules of a valid drawer for this store and caller (state read off-thread)."""
    state = await deps.state(store)
    policy = await asyncio.to_thread(state.policy)
    return validate_draft(
        draft,
        mode=mode_of(store),
        tier=tier_of(store),
        existing_wings=await deps.wings(store, draft.wing),
        allow_new_wing=allow_new_wing,
        signed=signed,
        signature=signature,
        policy=policy,
        rules=deps.rules,
    )


@dataclass(frozen=True, slots=True)
class DuplicateCheck:
    """What the room already holds that looks like a new drawer.

    `duplicate`: an existing drawer making the same claim (same content hash, or cosine at or
    above `duplicate_similarity` in the same room and type with the same claim words), which
    the write answers with instead of storing a copy. `differing`: near-identical drawers
    whose claim differs (a number, a name, a negation). `related`: other drawers of the room,
    of any type, at `related_similarity` or closer: a different wording of what the write may
    update or contradict. The new drawer is stored beside both kinds, and the caller is told
    (supersession candidates), since it may replace one of them.
    """

    duplicate: common_pb2.Drawer | None
    differing: tuple[tuple[common_pb2.Drawer, ClaimDifference], ...] = ()
    related: tuple[tuple[common_pb2.Drawer, float], ...] = ()

    @property
    def candidates(self) -> list[str]:
        """Drawers the write may supersede: near-copies first, then related drawers."""
        return [d.id for d, _ in self.differing] + [d.id for d, _ in self.related]

    def hint(self) -> list[str]:
        """One warning per candidate: which drawer, and why it is named."""
        near = [
            f"drawer {drawer.id} in this room says nearly the same with different details "
            f"({difference.describe()}); both are kept: if this one replaces it, name it in "
            "supersedes (or update that drawer)"
            for drawer, difference in self.differing
        ]
        close = [
            f"drawer {drawer.id} in this room ({drawer.memory_type}) is close to this one "
            f"(cosine {similarity:.2f}): if this one updates or contradicts it, name it in "
            f"supersedes or link the two; it says: {_excerpt(drawer.content)}"
            for drawer, similarity in self.related
        ]
        return near + close


def _excerpt(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return f'"{flat}"' if len(flat) <= limit else f'"{flat[: limit - 1]}…"'


# Related drawers named per write (the closest first).
MAX_RELATED = 3


async def find_duplicate(
    deps: AuthoringDeps, store: common_pb2.StoreContext, drawer: common_pb2.Drawer
) -> DuplicateCheck:
    """Whether the room already holds this drawer's claim, which near-copies differ, and which
    other drawers of the room are close enough to be what it updates (one lookup)."""
    settings = deps.settings
    answer = await call(
        deps.retrieval.FindSimilarDrawers,
        retrieval_pb2.FindSimilarDrawersRequest(
            store=store,
            content=drawer.content,
            room=drawer.room,
            min_similarity=min(settings.duplicate_similarity, settings.related_similarity),
            limit=DUPLICATE_CANDIDATES + MAX_RELATED,
        ),
    )
    found = classify(
        drawer.content,
        drawer.memory_type,
        [
            Neighbour(
                match.drawer,
                match.drawer.content,
                match.drawer.memory_type,
                match.similarity,
                same_hash=match.same_hash,
                deprecated=match.drawer.pin_status == common_pb2.PIN_STATUS_DEPRECATED,
            )
            for match in answer.matches
            if match.drawer.id != drawer.id
        ],
        duplicate=settings.duplicate_similarity,
        related=settings.related_similarity,
        max_related=MAX_RELATED,
    )
    return DuplicateCheck(found.duplicate, found.differing, found.related)


def drawer_from(
    draft: authoring_pb2.DrawerDraft, checked: DraftInput, signature: str | None
) -> common_pb2.Drawer:
    drawer = common_pb2.Drawer(
        content=checked.content,
        memory_type=checked.memory_type,
        pin_status=PIN_VALUES[checked.pin_status.strip().lower() or "active"],
        wing=checked.wing,
        room=checked.room,
        topic=checked.topic,
        added_by=checked.added_by,
        derived_from=list(draft.derived_from),
        attributes=dict(draft.attributes),
    )
    if draft.HasField("confidence"):
        drawer.confidence = draft.confidence
    if signature is not None:
        drawer.signature = signature.strip()
    return drawer


async def index(
    deps: AuthoringDeps,
    store: common_pb2.StoreContext,
    drawers: Sequence[common_pb2.Drawer],
    *,
    revive: bool = False,
) -> list[common_pb2.Drawer]:
    """Write drawers through the retrieval tier; returns them with the fields it filled. Ids
    deleted before are skipped (and not returned) unless `revive`."""
    answer = await call(
        deps.retrieval.IndexDrawers,
        retrieval_pb2.IndexDrawersRequest(store=store, drawers=list(drawers), revive=revive),
    )
    for drawer in answer.drawers:
        deps.note_wing(store.name, drawer.wing)
    return list(answer.drawers)


async def add_drawer(
    deps: AuthoringDeps,
    store: common_pb2.StoreContext,
    draft: authoring_pb2.DrawerDraft,
    *,
    signature: str | None,
    allow_new_wing: bool,
    reason: str,
    supersedes: Sequence[str] = (),
) -> authoring_pb2.WriteDrawerResponse:
    """add_drawer (signature None: ambient) or add_drawer_signed (canonical); with
    `supersedes`, the drawers it replaces are checked first and linked once it is written."""
    check_reason(reason)
    _check_extras(draft)
    replaced = await _replaced_drawers(deps, store, supersedes)
    if draft.HasField("signature"):
        raise InvalidInput(
            "drawer.signature is output only (a composed draft's phrase): write a canonical "
            "drawer with add_drawer_signed and its signature field",
            field="drawer.signature",
        )
    if draft.derived_from and tier_of(store) != "admin":
        # Derivation links are the compose job's; a direct write may cite raw only as admin.
        raise PermissionDenied(
            "derived_from is set by compose jobs; a direct write may not set it below admin",
            field="derived_from",
        )
    checked = draft_input(draft, added_by=_actor(store))
    validation = await validate(
        deps,
        store,
        checked,
        signed=signature is not None,
        signature=signature,
        allow_new_wing=allow_new_wing,
    )
    drawer = drawer_from(draft, checked, signature)
    drawer.attributes["write"] = "canonical" if signature is not None else "ambient"
    check = await find_duplicate(deps, store, drawer)
    if check.duplicate is not None:
        links = await _link_replaced(deps, store, check.duplicate.id, replaced, reason)
        return authoring_pb2.WriteDrawerResponse(
            drawer=check.duplicate, duplicate=True, warnings=validation.warnings, links=links
        )
    # Named here, not by the retrieval tier: a write retried after a lost answer (the channel
    # retries UNAVAILABLE) then upserts this drawer instead of adding a second one.
    drawer.id = new_drawer_id()
    (written,) = await index(deps, store, [drawer])
    state = await deps.state(store)
    changes = {"memory_type": written.memory_type, "room": written.room}
    if validation.new_wing:
        changes["wing"] = f"(new) {written.wing}"
    await asyncio.to_thread(
        state.record,
        written.id,
        actor=_actor(store, written.added_by),
        action="created",
        reason=reason,
        changes=changes,
    )
    links = await _link_replaced(deps, store, written.id, replaced, reason)
    hint = signing_hint(written.content, written.memory_type, signed=signature is not None)
    return authoring_pb2.WriteDrawerResponse(
        drawer=written,
        warnings=[*validation.warnings, *([hint] if hint else []), *check.hint()],
        supersession_candidates=[c for c in check.candidates if c not in replaced],
        links=links,
    )


# Drawers one write may say it replaces.
MAX_SUPERSEDED = 16


async def _replaced_drawers(
    deps: AuthoringDeps, store: common_pb2.StoreContext, ids: Sequence[str]
) -> list[str]:
    """The drawers a write replaces, each checked to exist before anything is written."""
    wanted = list(dict.fromkeys(i.strip() for i in ids))
    if len(wanted) > MAX_SUPERSEDED:
        raise InvalidInput(f"at most {MAX_SUPERSEDED} drawers in supersedes", field="supersedes")
    if any(not i for i in wanted):
        raise InvalidInput("supersedes names an empty drawer id", field="supersedes")
    for drawer_id in wanted:
        request = retrieval_pb2.GetDrawerRequest(store=store, id=drawer_id)
        try:
            await call(deps.retrieval.GetDrawer, request)
        except NotFound:
            raise NotFound(
                f"supersedes names drawer {drawer_id!r}, which does not exist in this store",
                field="supersedes",
            ) from None
    return wanted


async def _link_replaced(
    deps: AuthoringDeps,
    store: common_pb2.StoreContext,
    successor: str,
    replaced: Sequence[str],
    reason: str,
) -> list[str]:
    """`successor` supersedes each replaced drawer (a drawer never supersedes itself); each
    replaced drawer's provenance says by what."""
    links: list[str] = []
    state = await deps.state(store) if replaced else None
    for drawer_id in replaced:
        if drawer_id == successor:
            continue
        link = await call(
            deps.retrieval.CreateLink,
            retrieval_pb2.CreateLinkRequest(
                store=store,
                from_id=successor,
                to_id=drawer_id,
                type=retrieval_pb2.LINK_TYPE_SUPERSEDES,
                reason=reason or "written as its successor",
            ),
        )
        links.append(link.id)
        assert state is not None
        await asyncio.to_thread(
            state.record,
            drawer_id,
            actor=_actor(store),
            action="superseded",
            reason=reason,
            changes={"superseded_by": successor},
        )
    return links


def _changes(before: common_pb2.Drawer, after: common_pb2.Drawer) -> dict[str, str]:
    changed: dict[str, str] = {}
    for name in ("content", "wing", "room", "topic", "signature"):
        old, new = getattr(before, name), getattr(after, name)
        if old != new:
            changed[name] = f"{old} -> {new}"
    if before.pin_status != after.pin_status:
        changed["pin_status"] = f"{PIN_NAMES[before.pin_status]} -> {PIN_NAMES[after.pin_status]}"
    if before.HasField("confidence") != after.HasField("confidence") or (
        before.confidence != after.confidence
    ):
        changed["confidence"] = f"{before.confidence:g} -> {after.confidence:g}"
    return changed


def _action(changes: Mapping[str, str], after: common_pb2.Drawer) -> str:
    if "content" in changes:
        return "re-embedded"
    if "pin_status" in changes:
        return {
            common_pb2.PIN_STATUS_PINNED: "pinned",
            common_pb2.PIN_STATUS_DEPRECATED: "deprecated",
        }.get(after.pin_status, "unpinned")
    if "room" in changes or "wing" in changes:
        return "moved"
    return "updated"


def _pinned_action(after: common_pb2.Drawer) -> str:
    """What an update does to a pinned drawer, in the words a refusal uses."""
    if after.pin_status == common_pb2.PIN_STATUS_DEPRECATED:
        return "deprecate"
    if after.pin_status == common_pb2.PIN_STATUS_ACTIVE:
        return "unpin"
    return "change"


async def update_drawer(
    deps: AuthoringDeps, request: authoring_pb2.UpdateDrawerRequest
) -> authoring_pb2.WriteDrawerResponse:
    """Pin / unpin / deprecate, move, retag, or edit (re-embedded). The changed drawer must
    still be valid for this caller: a write token cannot edit a pinned or directive drawer."""
    store = request.store
    check_reason(request.reason)
    before = await call(
        deps.retrieval.GetDrawer, retrieval_pb2.GetDrawerRequest(store=store, id=request.id)
    )
    after = common_pb2.Drawer()
    after.CopyFrom(before)
    if request.HasField("content"):
        after.content = request.content
    if request.HasField("pin_status"):
        after.pin_status = PIN_VALUES[PIN_NAMES.get(request.pin_status, "active")]
        if request.pin_status not in PIN_NAMES:
            raise InvalidInput("pin_status is not a known value", field="pin_status")
    for name in ("wing", "room", "topic"):
        if request.HasField(name):
            setattr(after, name, getattr(request, name))
    if request.HasField("signature"):
        if request.signature:
            after.signature = request.signature.strip()
        else:
            after.ClearField("signature")
    if request.HasField("confidence"):
        if not (math.isfinite(request.confidence) and 0.0 <= request.confidence <= 1.0):
            raise InvalidInput("confidence must be within 0..1", field="confidence")
        after.confidence = request.confidence
    changes = _changes(before, after)
    if not changes:
        return authoring_pb2.WriteDrawerResponse(drawer=before)
    checked = DraftInput(
        content=after.content,
        memory_type=after.memory_type,
        wing=after.wing,
        room=after.room,
        pin_status=PIN_NAMES[after.pin_status],
        topic=after.topic,
        added_by=after.added_by,
    )
    if before.pin_status == common_pb2.PIN_STATUS_PINNED:
        policy = await asyncio.to_thread((await deps.state(store)).policy)
        check_pinned_change(tier_of(store), policy, before.id, _pinned_action(after))
        if checked.pin_status == "pinned":  # staying pinned: the pin was just checked
            checked = replace(checked, pin_status="active")
    signed = after.HasField("signature")
    validation = await validate(
        deps,
        store,
        checked,
        signed=signed,
        signature=after.signature if signed else None,
        allow_new_wing=request.allow_new_wing,
    )
    if "content" in changes:
        (written,) = await index(deps, store, [after])
    else:
        metadata = retrieval_pb2.UpdateDrawerMetadataRequest(
            store=store,
            id=after.id,
            pin_status=after.pin_status,
            wing=after.wing,
            room=after.room,
            topic=after.topic,
        )
        if after.HasField("confidence"):
            metadata.confidence = after.confidence
        written = await call(deps.retrieval.UpdateDrawerMetadata, metadata)
        if "signature" in changes:
            (written,) = await index(deps, store, [after])
    state = await deps.state(store)
    await asyncio.to_thread(
        state.record,
        written.id,
        actor=_actor(store),
        action=_action(changes, written),
        reason=request.reason,
        changes=changes,
    )
    return authoring_pb2.WriteDrawerResponse(drawer=written, warnings=validation.warnings)


async def delete_drawer(
    deps: AuthoringDeps, request: authoring_pb2.DeleteDrawerRequest
) -> authoring_pb2.DeleteDrawerResponse:
    """Delete one drawer; the same scope as editing it. Its provenance log stays."""
    store = request.store
    check_reason(request.reason)
    drawer = await call(
        deps.retrieval.GetDrawer, retrieval_pb2.GetDrawerRequest(store=store, id=request.id)
    )
    await validate(
        deps,
        store,
        DraftInput(
            content=drawer.content,
            memory_type=drawer.memory_type,
            wing=drawer.wing,
            room=drawer.room,
            pin_status=PIN_NAMES[drawer.pin_status],
            topic=drawer.topic,
        ),
        signed=drawer.HasField("signature"),
        signature=drawer.signature if drawer.HasField("signature") else None,
        allow_new_wing=True,
    )
    deleted = await delete_many(deps, store, [drawer.id], reason=request.reason)
    return authoring_pb2.DeleteDrawerResponse(deleted=deleted > 0)


async def delete_many(
    deps: AuthoringDeps, store: common_pb2.StoreContext, ids: Sequence[str], *, reason: str
) -> int:
    """Delete drawers through the retrieval tier and log each deletion."""
    if not ids:
        return 0
    answer = await call(
        deps.retrieval.DeleteDrawers, retrieval_pb2.DeleteDrawersRequest(store=store, ids=ids)
    )
    state = await deps.state(store)
    for drawer_id in ids:
        await asyncio.to_thread(
            state.record, drawer_id, actor=_actor(store), action="deleted", reason=reason
        )
    return int(answer.deleted)
