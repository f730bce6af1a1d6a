"""Consolidation through the authoring tier over real retrieval: a dry run proposes and
changes nothing; applying writes one drawer in place of its near-duplicates (linked, sources
deprecated) and leaves a contradicting cluster alone; undo restores exactly the drawers, links
and search results that were there before."""

from __future__ import annotations

import json

import grpc
import pytest
from engram.v1 import authoring_pb2, common_pb2, retrieval_pb2

from tests.services.authoring.conftest import FakeProvider, Stack
from tests.services.authoring.test_writes import add, add_signed

pytestmark = pytest.mark.slow

SAME = [
    "For a missing drawer the API returns a 404, as the Architect decided.",
    "The API answers 404 when a drawer is missing; the Architect decided so.",
]
SIGNED = "The Architect decided that the API returns 404 for missing drawers."
UPLOADS = ["File uploads are capped at 2 GB per file.", "File uploads are capped at 3 GB per file."]
QUESTION = "what does the API return when a drawer is missing?"


async def _consolidate(
    stack: Stack, tier: str = "write", **fields: object
) -> common_pb2.ConsolidateResult:
    job = await stack.authoring.Consolidate(
        authoring_pb2.ConsolidateRequest(store=stack.store(tier), **fields)  # type: ignore[arg-type]
    )
    record = await stack.wait(stack.deps.jobs, job.id)
    assert record.state == common_pb2.JOB_STATE_DONE, record
    return record.consolidate


async def _snapshot(stack: Stack) -> tuple[list[tuple[str, int]], list[str], list[str]]:
    listed = await stack.retrieval.ListDrawers(
        retrieval_pb2.ListDrawersRequest(store=stack.store("read"))
    )
    drawers = sorted((d.id, d.pin_status) for d in listed.drawers)
    links = []
    for drawer_id, _ in drawers:
        answer = await stack.retrieval.ListLinks(
            retrieval_pb2.ListLinksRequest(store=stack.store("read"), drawer_id=drawer_id)
        )
        links += [link.id for link in answer.links if not link.HasField("valid_to")]
    found = await stack.retrieval.Search(
        retrieval_pb2.SearchRequest(store=stack.store("read"), query=QUESTION, min_score=-1.0)
    )
    return drawers, sorted(set(links)), [hit.drawer.id for hit in found.results]


async def test_propose_apply_and_undo_exactly(stack: Stack) -> None:
    signed = (await add_signed(stack, "returns 404 for missing drawers", content=SIGNED)).drawer
    others = [(await add(stack, content=text)).drawer for text in SAME]
    uploads = [
        (await add(stack, content=text, memory_type="fact", room="projects/uploads")).drawer
        for text in UPLOADS
    ]
    before = await _snapshot(stack)

    dry = await _consolidate(stack)
    assert dry.dry_run and dry.applied == 0 and dry.flagged == 1, dry
    merge, flagged = sorted(dry.proposals, key=lambda p: not p.mergeable)
    assert merge.mergeable and merge.source_ids[0] == signed.id, "the signed drawer is the base"
    assert set(merge.source_ids) == {signed.id, *(d.id for d in others)}
    assert merge.signature == "returns 404 for missing drawers"
    assert not flagged.mergeable and set(flagged.source_ids) == {d.id for d in uploads}
    assert any(pair in flagged.conflicts[0] for pair in ("2 → 3", "3 → 2")), flagged.conflicts
    assert await _snapshot(stack) == before, "a dry run changes nothing"

    applied = await _consolidate(stack, apply=True, proposal_ids=[merge.id])
    assert applied.applied == 1 and not applied.dry_run
    consolidation_id = next(p.consolidation_id for p in applied.proposals if p.id == merge.id)
    listed = await stack.authoring.ListConsolidations(
        authoring_pb2.ListConsolidationsRequest(store=stack.store("read"))
    )
    (record,) = listed.consolidations
    assert record.id == consolidation_id and len(record.link_ids) == 3
    found = await stack.retrieval.Search(
        retrieval_pb2.SearchRequest(store=stack.store("read"), query=QUESTION)
    )
    ids = [hit.drawer.id for hit in found.results]
    assert ids[0] == record.merged_id, ids
    assert not set(ids) & set(merge.source_ids), "the sources are replaced in search"
    merged = await stack.retrieval.GetDrawer(
        retrieval_pb2.GetDrawerRequest(store=stack.store("read"), id=record.merged_id)
    )
    assert merged.signature == "returns 404 for missing drawers"
    uploads_now = await stack.retrieval.ListDrawers(
        retrieval_pb2.ListDrawersRequest(
            store=stack.store("read"), filter=retrieval_pb2.DrawerFilter(room="projects/uploads")
        )
    )
    assert all(d.pin_status == common_pb2.PIN_STATUS_ACTIVE for d in uploads_now.drawers)

    again = await _consolidate(stack, apply=True)
    assert again.applied == 0, "the merged sources are deprecated: nothing left to merge"
    stale = await stack.authoring.Consolidate(
        authoring_pb2.ConsolidateRequest(
            store=stack.store("write"), apply=True, proposal_ids=[merge.id]
        )
    )
    record_of_stale = await stack.wait(stack.deps.jobs, stale.id)
    assert [(e.item_id, e.code) for e in record_of_stale.errors] == [(merge.id, "not_found")]

    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stack.authoring.UndoConsolidation(
            authoring_pb2.UndoConsolidationRequest(store=stack.store("write"), id=record.id)
        )
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
    undone = await stack.authoring.UndoConsolidation(
        authoring_pb2.UndoConsolidationRequest(store=stack.store("admin"), id=record.id)
    )
    assert undone.HasField("undone_at")
    assert await _snapshot(stack) == before, "undo restores drawers, links and search results"

    # Asked again on purpose, the same merge is applied again (a new record).
    redone = await _consolidate(stack, apply=True, proposal_ids=[merge.id])
    assert redone.applied == 1, redone
    listed = await stack.authoring.ListConsolidations(
        authoring_pb2.ListConsolidationsRequest(store=stack.store("read"))
    )
    assert [c.undone_at.seconds > 0 for c in listed.consolidations] == [False, True]


MERGED = (
    "The Architect decided that the API returns 404 for missing drawers; a missing drawer "
    "is always answered with a 404."
)


def _merge_answer(content: str, ids: list[str]) -> str:
    drawer = {
        "content": content,
        "memory_type": "decision",
        "wing": "projects",
        "room": "projects/engram",
        "derived_from": ids,
        "signature": "returns 404 for missing drawers",
    }
    return json.dumps({"drawers": [drawer]})


async def test_a_models_merge_is_asked_once_and_applied_as_the_dry_run_showed_it(
    stack: Stack, provider: tuple[str, type[FakeProvider]]
) -> None:
    url, far_end = provider
    await stack.authoring.SetProviderConfig(
        authoring_pb2.SetProviderConfigRequest(
            store=stack.store("admin"),
            config=authoring_pb2.ProviderConfig(invoker="openai", model="test-model", base_url=url),
        )
    )
    signed = (await add_signed(stack, "returns 404 for missing drawers", content=SIGNED)).drawer
    others = [(await add(stack, content=text)).drawer for text in SAME]
    ids = [signed.id, *(d.id for d in others)]
    far_end.answer = _merge_answer(MERGED, ids)

    (shown,) = (await _consolidate(stack)).proposals
    assert (shown.merged_by, shown.merged_content) == ("openai:test-model", MERGED), shown
    assert shown.signature == "returns 404 for missing drawers" and not shown.merge_notes
    assert far_end.asked == 1

    far_end.answer = _merge_answer("The API returns 404 for missing drawers.", ids)
    applied = await _consolidate(stack, apply=True, proposal_ids=[shown.id])
    assert applied.applied == 1 and far_end.asked == 1, "the kept merge is applied, not re-asked"
    (record,) = (
        await stack.authoring.ListConsolidations(
            authoring_pb2.ListConsolidationsRequest(store=stack.store("read"))
        )
    ).consolidations
    merged = await stack.retrieval.GetDrawer(
        retrieval_pb2.GetDrawerRequest(store=stack.store("read"), id=record.merged_id)
    )
    assert merged.content == MERGED and merged.signature == "returns 404 for missing drawers"
    assert merged.attributes["merged_by"] == "openai:test-model"


async def test_a_models_merge_that_changes_a_value_leaves_the_deterministic_one(
    stack: Stack, provider: tuple[str, type[FakeProvider]]
) -> None:
    url, far_end = provider
    await stack.authoring.SetProviderConfig(
        authoring_pb2.SetProviderConfigRequest(
            store=stack.store("admin"),
            config=authoring_pb2.ProviderConfig(invoker="openai", model="test-model", base_url=url),
        )
    )
    drawers = [(await add(stack, content=text)).drawer for text in SAME]
    far_end.answer = _merge_answer(
        "For a missing drawer the API returns a 410, as the Architect decided.",
        [d.id for d in drawers],
    )
    (shown,) = (await _consolidate(stack)).proposals
    assert shown.merged_by == "extractive" and shown.mergeable, shown
    assert shown.merged_content.startswith(SAME[1][:20]) or shown.merged_content.startswith(
        SAME[0][:20]
    )
    (note,) = shown.merge_notes
    assert "set aside" in note and "410" in note and "404" in note, note
