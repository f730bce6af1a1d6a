"""Context packs, the retrieval log and usage, search_batch, near-duplicates and JSONL
export/import, through the real retrieval tier."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from engram.v1 import common_pb2, retrieval_pb2

from tests.services.retrieval.conftest import RunningRetrieval
from tests.services.retrieval.test_contract import POOL, _index, hand_over


async def test_context_pack_fits_the_budget_with_provenance_headers(
    retrieval: RunningRetrieval,
) -> None:
    await _index(retrieval)
    reply = await retrieval.stub.BuildContextPack(
        retrieval_pb2.ContextPackRequest(
            store=retrieval.store(),
            query="how does Engram store vectors in Qdrant?",
            intent="planning",
            token_budget=60,
            min_score=-1.0,
        )
    )
    assert reply.items, "something fits in 60 tokens"
    assert reply.tokens_used <= 60 == reply.token_budget
    assert reply.tokens_used == retrieval.deps.tokens.count(reply.text), "counted honestly"
    first = reply.items[0]
    assert first.drawer_id == "dec-1"
    assert "decision" in first.header and "projects/engram" in first.header
    assert "one shard per store" in first.header, "the signature is in the header"
    assert reply.omitted >= 1, "not everything fits in 60 tokens"


async def test_context_pack_budget_follows_the_caller_tier(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    budgets = {}
    for tier in (common_pb2.CALLER_TIER_READ, common_pb2.CALLER_TIER_ADMIN):
        reply = await retrieval.stub.BuildContextPack(
            retrieval_pb2.ContextPackRequest(
                store=retrieval.store(caller_tier=tier), query="Qdrant shards", min_score=-1.0
            )
        )
        budgets[tier] = reply.token_budget
    settings = retrieval.deps.settings
    assert budgets == {
        common_pb2.CALLER_TIER_READ: settings.pack_budget_read,
        common_pb2.CALLER_TIER_ADMIN: settings.pack_budget_admin,
    }


async def test_search_batch_answers_each_query(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    queries = ["Qdrant shard lock bug after crash", "what did the Architect decide about storage"]
    reply = await retrieval.stub.SearchBatch(
        retrieval_pb2.SearchBatchRequest(
            store=retrieval.store(),
            searches=[retrieval_pb2.SearchRequest(query=q, min_score=-1.0) for q in queries],
        )
    )
    assert len(reply.responses) == 2
    assert reply.responses[0].results[0].drawer.id == "bug-1"


async def test_retrieval_log_holds_ids_and_scores_never_text(
    retrieval: RunningRetrieval, tmp_path: Path
) -> None:
    await _index(retrieval)
    search = await retrieval.stub.Search(
        retrieval_pb2.SearchRequest(store=retrieval.store(), query="Qdrant shard", min_score=-1.0)
    )
    used = search.results[0].drawer.id
    await retrieval.stub.RecordRetrieval(
        retrieval_pb2.RecordRetrievalRequest(store=retrieval.store(), drawer_ids=[used])
    )
    log_dir = retrieval.deps.settings.data_dir / "test" / "retrieval_log"
    lines = [
        json.loads(line)
        for f in sorted(log_dir.glob("*.jsonl"))
        for line in f.read_text().splitlines()
    ]
    assert [entry["op"] for entry in lines] == ["search", "record_retrieval"]
    dumped = json.dumps(lines)
    for d in POOL:
        assert d.content not in dumped, "drawer text must never reach the retrieval log"
    usage = await retrieval.stub.RetrievalUsage(
        retrieval_pb2.RetrievalUsageRequest(store=retrieval.store())
    )
    assert usage.overall_usage_rate == pytest.approx(1.0), "the one search was used"
    today = [d for d in usage.days if d.searches]
    assert today and today[0].searches == 1 and today[0].searches_with_use == 1


async def test_find_similar_spots_the_same_content(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    reply = await retrieval.stub.FindSimilarDrawers(
        retrieval_pb2.FindSimilarDrawersRequest(
            store=retrieval.store(),
            content=POOL[0].content.upper(),
            room="projects/engram",
            memory_type="decision",
            min_similarity=0.95,
        )
    )
    assert reply.matches and reply.matches[0].drawer.id == "dec-1"
    assert reply.matches[0].same_hash, "case and spacing do not change the content hash"


async def _export(r: RunningRetrieval, store: common_pb2.StoreContext) -> bytes:
    chunks = r.stub.ExportDrawers(retrieval_pb2.ExportDrawersRequest(store=store))
    return b"".join([c.jsonl async for c in chunks])


async def _import(
    r: RunningRetrieval, store: common_pb2.StoreContext, data: bytes, replace: bool = False
) -> retrieval_pb2.ImportDrawersResponse:
    async def chunks() -> AsyncIterator[retrieval_pb2.ImportDrawersChunk]:
        yield retrieval_pb2.ImportDrawersChunk(store=store, replace_existing=replace)
        for start in range(0, len(data), 100):
            yield retrieval_pb2.ImportDrawersChunk(jsonl=data[start : start + 100])

    return await r.stub.ImportDrawers(chunks())


async def test_export_then_import_reproduces_every_field(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    await hand_over(retrieval)
    await retrieval.stub.RecordRetrieval(
        retrieval_pb2.RecordRetrievalRequest(store=retrieval.store(), drawer_ids=["obs-1"])
    )
    exported = await _export(retrieval, retrieval.store())
    assert exported.count(b"\n") == len(POOL)
    target = retrieval.store(name="copy")
    reply = await _import(retrieval, target, exported)
    assert reply.imported == len(POOL) and not reply.errors
    for original_id in ("dec-1", "obs-1"):
        a = await retrieval.stub.GetDrawer(
            retrieval_pb2.GetDrawerRequest(store=retrieval.store(), id=original_id)
        )
        b = await retrieval.stub.GetDrawer(
            retrieval_pb2.GetDrawerRequest(store=target, id=original_id)
        )
        for field in (
            "content",
            "signature",
            "salience",
            "retrieval_count",
            "created_at",
            "last_activity_at",
            "updated_at",
            "pin_status",
            "room",
            "added_by",
        ):
            assert getattr(a, field) == getattr(b, field), (
                f"{original_id}.{field} changed on import"
            )


async def test_import_with_a_bad_line_writes_nothing(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    exported = await _export(retrieval, retrieval.store())
    broken = exported + b'{"id": "x-1", "content": ""}\n' + b"\xff\xfe not json\n"
    target = retrieval.store(name="copy")
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await _import(retrieval, target, broken)
    assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    message = refused.value.details() or ""
    assert "nothing was imported (2 bad lines" in message, message
    assert f"line {len(POOL) + 1}:" in message and f"line {len(POOL) + 2}:" in message, message
    stats = await retrieval.stub.Stats(retrieval_pb2.StatsRequest(store=target))
    assert stats.drawers == 0, "nothing is written when any line is bad"


async def test_import_over_existing_ids_needs_replace(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    exported = await _export(retrieval, retrieval.store())
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await _import(retrieval, retrieval.store(), exported)
    assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "replace_existing" in (refused.value.details() or "")
    accepted = await _import(retrieval, retrieval.store(), exported, replace=True)
    assert accepted.imported == len(POOL)


async def test_drop_store_removes_its_data(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    reply = await retrieval.stub.DropStore(common_pb2.DropStoreRequest(store=retrieval.store()))
    assert reply.dropped
    stats = await retrieval.stub.Stats(retrieval_pb2.StatsRequest(store=retrieval.store()))
    assert stats.drawers == 0


async def test_update_metadata_pins_and_moves(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    updated = await retrieval.stub.UpdateDrawerMetadata(
        retrieval_pb2.UpdateDrawerMetadataRequest(
            store=retrieval.store(),
            id="obs-1",
            pin_status=common_pb2.PIN_STATUS_PINNED,
            room="projects/storage",
        )
    )
    assert updated.pin_status == common_pb2.PIN_STATUS_PINNED and updated.room == "projects/storage"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await retrieval.stub.UpdateDrawerMetadata(
            retrieval_pb2.UpdateDrawerMetadataRequest(
                store=retrieval.store(), id="obs-1", salience=7.0
            )
        )
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT


async def test_writes_past_the_threshold_build_the_ann_index_in_the_background(
    tmp_path: Path, embedder_addr: str
) -> None:
    from tests.services.retrieval.conftest import start_retrieval, stop_retrieval

    running = await start_retrieval(tmp_path / "ann", embedder_addr, index_min_points=40)
    try:
        drawers = [
            common_pb2.Drawer(
                id=f"n-{i}",
                content=f"Note {i}: the team moved shard {i % 7} to rack {i % 11} on day {i}.",
                memory_type="observation",
                wing="projects",
                room="projects/ops",
            )
            for i in range(120)
        ]
        await running.stub.IndexDrawers(
            retrieval_pb2.IndexDrawersRequest(store=running.store(), drawers=drawers)
        )
        await running.deps.wait_for_builds()
        stats = await running.stub.Stats(retrieval_pb2.StatsRequest(store=running.store()))
        assert stats.ann_indexed, "an index build should have run after the write"
        reply = await running.stub.Search(
            retrieval_pb2.SearchRequest(
                store=running.store(), query="which rack did shard 3 move to?", min_score=-1.0
            )
        )
        assert len(reply.results) == 10, "searches keep working on the indexed pool"
    finally:
        await stop_retrieval(running)
