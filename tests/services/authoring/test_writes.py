"""The authoring tier's direct writes over real gRPC: HEAVY-SPLIT, the validation matrix at the
service edge, write scope by tier, near-duplicates, updates, deletes and the provenance log."""

from __future__ import annotations

import grpc
import pytest
from engram.v1 import authoring_pb2, common_pb2, retrieval_pb2

from tests.services.authoring.conftest import Stack

pytestmark = pytest.mark.slow

DECISION = "The Architect decided that the API returns 404 for missing drawers."
SIGNATURE = "returns 404 for missing drawers"


def draft(
    content: str = DECISION,
    memory_type: str = "decision",
    wing: str = "projects",
    room: str = "projects/engram",
    **extra: object,
) -> authoring_pb2.DrawerDraft:
    return authoring_pb2.DrawerDraft(
        content=content,
        memory_type=memory_type,
        wing=wing,
        room=room,
        **extra,  # type: ignore[arg-type]
    )


async def add(
    stack: Stack,
    tier: str = "admin",
    *,
    mode: str = "default",
    allow_new_wing: bool = True,
    **fields: object,
) -> authoring_pb2.WriteDrawerResponse:
    return await stack.authoring.AddDrawer(
        authoring_pb2.AddDrawerRequest(
            store=stack.store(tier, mode=mode),
            drawer=draft(**fields),  # type: ignore[arg-type]
            allow_new_wing=allow_new_wing,
            reason="test",
        )
    )


async def add_signed(
    stack: Stack, signature: str, tier: str = "admin", **fields: object
) -> authoring_pb2.WriteDrawerResponse:
    return await stack.authoring.AddDrawerSigned(
        authoring_pb2.AddDrawerSignedRequest(
            store=stack.store(tier),
            drawer=draft(**fields),  # type: ignore[arg-type]
            signature=signature,
            allow_new_wing=True,
        )
    )


async def refused(call: object, code: grpc.StatusCode, stack: Stack, before: int) -> str:
    """Await `call`, expect `code`, and prove nothing was written."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call  # type: ignore[misc]
    assert caught.value.code() == code, caught.value.details()
    assert await stack.count() == before, "a refused write changed the pool"
    return str(caught.value.details())


async def test_heavy_split_ambient_and_canonical(stack: Stack) -> None:
    ambient = await add(
        stack, content="The team noted that the nightly build is flaky.", memory_type="observation"
    )
    assert not ambient.duplicate and not ambient.drawer.HasField("signature")
    assert ambient.drawer.attributes["write"] == "ambient"
    canonical = await add_signed(stack, SIGNATURE)
    assert canonical.drawer.signature == SIGNATURE
    assert canonical.drawer.attributes["write"] == "canonical"
    assert await stack.count() == 2

    # The canonical drawer is searchable like any other, through the retrieval tier.
    found = await stack.retrieval.Search(
        retrieval_pb2.SearchRequest(
            store=stack.store("read"), query="missing drawer status code", min_score=-1.0
        )
    )
    assert canonical.drawer.id in [hit.drawer.id for hit in found.results]


async def test_signature_rules(stack: Stack) -> None:
    await add(stack, content="The team uses projects as a wing.", memory_type="observation")
    before = await stack.count()
    for signature, needle in (
        ("", "needs a signature"),
        ("404", "at least"),
        ("returns 500 for missing drawers", "verbatim"),
        (DECISION, "whole content"),
    ):
        message = await refused(
            add_signed(stack, signature), grpc.StatusCode.INVALID_ARGUMENT, stack, before
        )
        assert needle in message, message


async def test_validation_matrix(stack: Stack) -> None:
    await add(
        stack, content="The team keeps projects as the first wing.", memory_type="observation"
    )
    before = await stack.count()
    cases: list[tuple[dict[str, object], grpc.StatusCode, str]] = [
        ({"tier": "read"}, grpc.StatusCode.PERMISSION_DENIED, "may not write"),
        (
            {"tier": "write", "memory_type": "directive", "content": "Never push to main."},
            grpc.StatusCode.PERMISSION_DENIED,
            "directive",
        ),
        (
            {"tier": "write", "pin_status": common_pb2.PIN_STATUS_PINNED},
            grpc.StatusCode.PERMISSION_DENIED,
            "pin",
        ),
        (
            {
                "tier": "write",
                "wing": "gardening",
                "room": "gardening/roses",
                "allow_new_wing": False,
            },
            grpc.StatusCode.PERMISSION_DENIED,
            "does not exist",
        ),
        ({"memory_type": "want"}, grpc.StatusCode.INVALID_ARGUMENT, "companion-mode type"),
        ({"memory_type": "Decision"}, grpc.StatusCode.INVALID_ARGUMENT, "lower-case"),
        ({"room": "engram"}, grpc.StatusCode.INVALID_ARGUMENT, "room"),
        ({"room": "work/engram"}, grpc.StatusCode.INVALID_ARGUMENT, "room"),
        ({"wing": "Projects!"}, grpc.StatusCode.INVALID_ARGUMENT, "wing"),
        ({"content": "   "}, grpc.StatusCode.INVALID_ARGUMENT, "empty"),
        ({"content": "word " * 200}, grpc.StatusCode.INVALID_ARGUMENT, "the limit is 600"),
        ({"mode": "companion"}, grpc.StatusCode.INVALID_ARGUMENT, "companion library"),
    ]
    for fields, code, needle in cases:
        message = await refused(add(stack, **fields), code, stack, before)  # type: ignore[arg-type]
        assert needle in message, (fields, message)

    # No caller tier at all (not through the gateway): refused, not assumed.
    unset = stack.store("write")
    unset.caller_tier = common_pb2.CALLER_TIER_UNSPECIFIED
    await refused(
        stack.authoring.AddDrawer(authoring_pb2.AddDrawerRequest(store=unset, drawer=draft())),
        grpc.StatusCode.INVALID_ARGUMENT,
        stack,
        before,
    )
    # What each tier may do: write authors a decision in an existing wing; admin pins and
    # writes directives; the explicit flag lets write open a wing.
    assert not (await add(stack, tier="write", allow_new_wing=False)).duplicate
    await add(
        stack,
        tier="admin",
        memory_type="directive",
        content="Never write to the pool directly.",
        pin_status=common_pb2.PIN_STATUS_PINNED,
    )
    opened = await add(
        stack,
        tier="write",
        wing="philosophy",
        room="philosophy/agents",
        memory_type="opinion",
        content="The Foreman thinks agents should be boring.",
    )
    assert opened.drawer.wing == "philosophy"
    # Companion mode: its own library.
    companion = await add(
        stack,
        mode="companion",
        memory_type="want",
        wing="life",
        room="life/travel",
        content="The user wants to visit Lisbon in spring.",
    )
    assert companion.drawer.memory_type == "want"


async def test_soft_warnings_are_returned_not_raised(stack: Stack) -> None:
    answer = await add(
        stack,
        memory_type="observation",
        content="I think we should ship it. I will do it tomorrow and my team agrees.",
    )
    assert answer.warnings, "first-person content must come back with a warning"
    assert await stack.count() == 1


async def test_near_duplicates_return_the_existing_drawer(stack: Stack) -> None:
    first = await add(stack)
    same = await add(stack)
    assert same.duplicate and same.drawer.id == first.drawer.id
    paraphrase = await add(
        stack, content="The Architect decided that the API returns 404 for missing drawers!"
    )
    assert paraphrase.duplicate and paraphrase.drawer.id == first.drawer.id
    other_room = await add(stack, room="projects/other", content=DECISION)
    assert other_room.duplicate, "the same content hash is a duplicate in any room"
    distinct = await add(
        stack, content="The Architect decided that search answers within 50 ms at p50."
    )
    assert not distinct.duplicate
    assert await stack.count() == 2


async def test_a_write_replayed_after_a_lost_answer_stores_one_drawer(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The retrieval tier committed the drawer and died before answering; the channel's retry
    # policy (UNAVAILABLE) sends the same IndexDrawers request again. The drawer's id is named
    # by the writer, so the replay upserts it instead of adding a second drawer.
    sent: list[retrieval_pb2.IndexDrawersRequest] = []
    deliver = stack.deps.retrieval.IndexDrawers

    async def committed_then_replayed(
        request: retrieval_pb2.IndexDrawersRequest, **kwargs: object
    ) -> retrieval_pb2.IndexDrawersResponse:
        sent.append(request)
        await deliver(request, **kwargs)  # committed; its answer is lost
        return await deliver(request, **kwargs)  # the retry, byte for byte

    monkeypatch.setattr(stack.deps.retrieval, "IndexDrawers", committed_then_replayed)
    written = await add(stack)
    assert [d.id for r in sent for d in r.drawers] == [written.drawer.id], (
        "the write must name its drawer before sending it"
    )
    assert await stack.count() == 1, "a replayed write added a second drawer"


async def test_a_signature_on_a_direct_drafts_is_refused(stack: Stack) -> None:
    message = await refused(
        add(stack, signature=SIGNATURE), grpc.StatusCode.INVALID_ARGUMENT, stack, 0
    )
    assert "add_drawer_signed" in message, message


async def test_an_ambient_write_that_reads_canonical_is_told_to_sign_it(stack: Stack) -> None:
    ambient = await add(stack)  # a decision, written without a signature
    assert any("add_drawer_signed" in w for w in ambient.warnings), ambient.warnings
    rule = await add(
        stack, memory_type="observation", content="Maya noted that deploys never happen on Fridays."
    )
    assert any("reads like a decision" in w for w in rule.warnings), rule.warnings
    signed = await add_signed(
        stack,
        "search answers within 50 ms",
        content="The Architect decided that search answers within 50 ms at p50.",
    )
    assert not any("add_drawer_signed" in w for w in signed.warnings), signed.warnings


BATCH = "The nightly batch 100 was exported to the ledger bucket at 02:00."


async def test_a_duplicate_is_the_same_claim_not_a_similar_sentence(stack: Stack) -> None:
    """Sentences that differ in one number, time, name or negation are different facts."""
    first = await add(stack, content=BATCH, memory_type="observation")
    for different, detail in (
        ("The nightly batch 102 was exported to the ledger bucket at 02:00.", "100 → 102"),
        ("The nightly batch 100 was exported to the ledger bucket at 03:00.", "02:00 → 03:00"),
        # A negation moves the embedding below the gate's cosine: never a candidate at all.
        ("The nightly batch 100 was not exported to the ledger bucket at 02:00.", None),
    ):
        answer = await add(stack, content=different, memory_type="observation")
        assert not answer.duplicate, f"{different!r} was handed back as {answer.drawer.content!r}"
        assert answer.drawer.content == different
        if detail is None:
            continue
        assert first.drawer.id in answer.supersession_candidates, answer
        assert any(detail in w and first.drawer.id in w for w in answer.warnings), answer.warnings
    # Both ways: the first fact written again is still its own duplicate, not a newer one.
    again = await add(stack, content=BATCH, memory_type="observation")
    assert again.duplicate and again.drawer.id == first.drawer.id
    inflected = await add(
        stack,
        content="Nightly batch 100 is exported to the ledger bucket at 02:00.",
        memory_type="observation",
    )
    assert inflected.duplicate and inflected.drawer.id == first.drawer.id
    assert await stack.count() == 4


async def test_numbered_sentences_are_each_stored(stack: Stack) -> None:
    """The issue's probe: 40 sentences differing only in N, every one stored as itself."""
    ids = set()
    for n in range(100, 140):
        content = f"Drawer number {n} records that batch {n} was exported."
        answer = await add(stack, content=content, memory_type="observation")
        assert not answer.duplicate and answer.drawer.content == content, (n, answer)
        ids.add(answer.drawer.id)
    assert len(ids) == 40 and await stack.count() == 40


async def test_update_delete_and_provenance(stack: Stack) -> None:
    created = (await add(stack, tier="write", allow_new_wing=True)).drawer
    store_admin, store_write = stack.store("admin"), stack.store("write")

    pinned = await stack.authoring.UpdateDrawer(
        authoring_pb2.UpdateDrawerRequest(
            store=store_admin,
            id=created.id,
            pin_status=common_pb2.PIN_STATUS_PINNED,
            reason="it is the rule",
        )
    )
    assert pinned.drawer.pin_status == common_pb2.PIN_STATUS_PINNED
    # A write token cannot unpin, deprecate or edit a pinned drawer; the refusal names the act.
    for status, act in (
        (common_pb2.PIN_STATUS_ACTIVE, "unpin"),
        (common_pb2.PIN_STATUS_DEPRECATED, "deprecate"),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stack.authoring.UpdateDrawer(
                authoring_pb2.UpdateDrawerRequest(
                    store=store_write, id=created.id, pin_status=status
                )
            )
        assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert f"may not {act} a pinned drawer" in (caught.value.details() or "")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stack.authoring.UpdateDrawer(
            authoring_pb2.UpdateDrawerRequest(store=store_write, id=created.id, topic="moved")
        )
    assert "may not change a pinned drawer" in (caught.value.details() or "")
    await stack.authoring.UpdateDrawer(
        authoring_pb2.UpdateDrawerRequest(
            store=store_admin, id=created.id, pin_status=common_pb2.PIN_STATUS_ACTIVE
        )
    )
    edited = await stack.authoring.UpdateDrawer(
        authoring_pb2.UpdateDrawerRequest(
            store=store_write,
            id=created.id,
            content="The Architect decided that the API returns 410 for deleted drawers.",
            reason="corrected",
        )
    )
    assert "410" in edited.drawer.content
    found = await stack.retrieval.Search(
        retrieval_pb2.SearchRequest(store=stack.store("read"), query="status for deleted drawers")
    )
    assert found.results and found.results[0].drawer.id == created.id, "edit was not re-embedded"
    moved = await stack.authoring.UpdateDrawer(
        authoring_pb2.UpdateDrawerRequest(store=store_write, id=created.id, room="projects/api")
    )
    assert moved.drawer.room == "projects/api"
    await stack.authoring.UpdateDrawer(
        authoring_pb2.UpdateDrawerRequest(
            store=store_write, id=created.id, pin_status=common_pb2.PIN_STATUS_DEPRECATED
        )
    )
    deleted = await stack.authoring.DeleteDrawer(
        authoring_pb2.DeleteDrawerRequest(store=store_write, id=created.id, reason="obsolete")
    )
    assert deleted.deleted
    with pytest.raises(grpc.aio.AioRpcError) as gone:
        await stack.retrieval.GetDrawer(
            retrieval_pb2.GetDrawerRequest(store=store_write, id=created.id)
        )
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND

    log = await stack.authoring.GetProvenance(
        authoring_pb2.GetProvenanceRequest(store=store_write, id=created.id)
    )
    actions = [e.action for e in log.entries]
    assert actions == [
        "created",
        "pinned",
        "unpinned",
        "re-embedded",
        "moved",
        "deprecated",
        "deleted",
    ], actions
    assert log.entries[0].actor == "write-token"
    assert log.entries[1].actor == "admin-token" and log.entries[1].reason == "it is the rule"
    assert log.entries[3].changes["content"].endswith("410 for deleted drawers.")
    assert log.entries[4].changes["room"] == "projects/engram -> projects/api"


async def test_write_policy_is_per_store_and_configurable(stack: Stack) -> None:
    default = await stack.authoring.GetWritePolicy(
        authoring_pb2.GetWritePolicyRequest(store=stack.store("read"))
    )
    assert list(default.pinners) == [common_pb2.CALLER_TIER_ADMIN]
    assert list(default.forbidden_types["write"].memory_types) == ["directive"]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stack.authoring.SetWritePolicy(
            authoring_pb2.SetWritePolicyRequest(store=stack.store("write"), policy=default)
        )
    assert caught.value.code() == grpc.StatusCode.PERMISSION_DENIED
    relaxed = authoring_pb2.WritePolicy()
    relaxed.CopyFrom(default)
    relaxed.pinners.append(common_pb2.CALLER_TIER_WRITE)
    await stack.authoring.SetWritePolicy(
        authoring_pb2.SetWritePolicyRequest(store=stack.store("admin"), policy=relaxed)
    )
    pinned = await add(stack, tier="write", pin_status=common_pb2.PIN_STATUS_PINNED)
    assert pinned.drawer.pin_status == common_pb2.PIN_STATUS_PINNED


async def test_a_write_that_replaces_a_drawer_links_it_and_says_so(stack: Stack) -> None:
    old = (
        await add(
            stack, content="The Architect decided that job retries stop after three attempts."
        )
    ).drawer
    newer = await stack.authoring.AddDrawer(
        authoring_pb2.AddDrawerRequest(
            store=stack.store("write"),
            drawer=draft(content="From May the Architect lets a failing job retry five times."),
            allow_new_wing=True,
            reason="the cap was raised",
            supersedes=[old.id],
        )
    )
    assert len(newer.links) == 1
    links = await stack.retrieval.ListLinks(
        retrieval_pb2.ListLinksRequest(store=stack.store("read"), drawer_id=old.id)
    )
    (link,) = links.links
    assert (link.id, link.from_id, link.to_id) == (newer.links[0], newer.drawer.id, old.id)
    assert link.type == retrieval_pb2.LINK_TYPE_SUPERSEDES and link.reason == "the cap was raised"
    log = await stack.authoring.GetProvenance(
        authoring_pb2.GetProvenanceRequest(store=stack.store("read"), id=old.id)
    )
    assert any(e.action == "superseded" for e in log.entries), log

    before = await stack.count()
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stack.authoring.AddDrawer(
            authoring_pb2.AddDrawerRequest(
                store=stack.store("write"),
                drawer=draft(content="The Architect decided that uploads are capped at 2 GB."),
                allow_new_wing=True,
                supersedes=["d_not_there"],
            )
        )
    assert caught.value.code() is grpc.StatusCode.NOT_FOUND
    assert "supersedes" in (caught.value.details() or "")
    assert await stack.count() == before, "a refused write wrote nothing"


async def test_a_reworded_update_names_the_drawer_it_may_replace(stack: Stack) -> None:
    """The issue's probe: 'capped at 3 attempts' then a differently worded 'five retries' is
    not stored silently beside it; a different point in the same room is not named."""
    old = (
        await add(stack, content="Retries of the payment webhook are capped at 3 attempts.")
    ).drawer
    await add(stack, content="Payment webhooks are signed with an HMAC-SHA256 header.")
    update = await add(
        stack,
        content="We now allow the payment webhook five retries before giving up.",
        memory_type="directive",
    )
    assert not update.duplicate
    assert list(update.supersession_candidates) == [old.id], update
    (hint,) = [w for w in update.warnings if old.id in w]
    assert "supersedes" in hint and "capped at 3 attempts" in hint, hint

    unrelated = await add(
        stack, content="The canteen serves soup on Fridays.", room="projects/canteen"
    )
    assert not unrelated.supersession_candidates, unrelated

    # Naming it in the same call links them; it is then no candidate any more.
    linked = await stack.authoring.AddDrawer(
        authoring_pb2.AddDrawerRequest(
            store=stack.store("write"),
            drawer=draft(content="Payment webhook retries are capped at 7 attempts from June."),
            allow_new_wing=True,
            supersedes=[old.id],
        )
    )
    assert len(linked.links) == 1 and old.id not in linked.supersession_candidates
