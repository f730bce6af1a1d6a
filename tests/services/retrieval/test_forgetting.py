"""Forgetting that holds in the retrieval tier: a deleted drawer is gone from search, keyword
hits, links and session starts; writing its id again (a replay) is skipped across a restart;
only a deliberate revival or an import brings it back; a delete cut short by a crash is
finished by the next start. And a store made with another embedding model is refused."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import numpy as np
import pytest
from engram.v1 import common_pb2, retrieval_pb2

from services.retrieval.pool.mirror import MetaFilter
from services.retrieval.pool.pool import DrawerPool, PoolLocation
from services.runtime.embedding import RECORD, EmbeddingIdentity
from tests.services.retrieval.conftest import RunningRetrieval, start_retrieval, stop_retrieval
from tests.services.retrieval.test_contract import POOL, _index

QUERY = "where does Engram store its vectors"


async def _ids(r: RunningRetrieval, query: str = QUERY) -> list[str]:
    answer = await r.stub.Search(
        retrieval_pb2.SearchRequest(store=r.store(), query=query, min_score=-1.0, n_results=50)
    )
    return [hit.drawer.id for hit in answer.results]


async def test_a_deleted_drawer_does_not_come_back_after_a_restart_and_a_replay(
    tmp_path: Path, embedder_addr: str
) -> None:
    first = await start_retrieval(tmp_path / "retrieval", embedder_addr)
    try:
        await _index(first)
        await first.stub.CreateLink(
            retrieval_pb2.CreateLinkRequest(
                store=first.store(),
                from_id="dec-1",
                to_id="old-1",
                type=retrieval_pb2.LINK_TYPE_SUPERSEDES,
            )
        )
        await first.stub.DeleteDrawers(
            retrieval_pb2.DeleteDrawersRequest(store=first.store(), ids=["dec-1"])
        )
    finally:
        await stop_retrieval(first)

    again = await start_retrieval(tmp_path / "retrieval", embedder_addr)
    try:
        assert "dec-1" not in await _ids(again)
        assert "dec-1" not in await _ids(again, "one shard per store"), "keyword index too"
        replay = await again.stub.IndexDrawers(
            retrieval_pb2.IndexDrawersRequest(store=again.store(), drawers=POOL)
        )
        assert list(replay.forgotten) == ["dec-1"], replay.forgotten
        assert replay.indexed == len(POOL) - 1
        assert "dec-1" not in await _ids(again)
        links = await again.stub.ListLinks(
            retrieval_pb2.ListLinksRequest(store=again.store(), drawer_id="old-1")
        )
        assert all(link.HasField("valid_to") for link in links.links), "its links ended"
        primed = await again.stub.Prime(retrieval_pb2.PrimeRequest(store=again.store()))
        assert "dec-1" not in [item.drawer_id for item in primed.items]

        revived = await again.stub.IndexDrawers(
            retrieval_pb2.IndexDrawersRequest(store=again.store(), drawers=POOL[:1], revive=True)
        )
        assert list(revived.ids) == ["dec-1"] and not revived.forgotten
        assert "dec-1" in await _ids(again)
    finally:
        await stop_retrieval(again)


async def test_an_import_restores_what_was_deleted(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    exported = b"".join(
        [
            chunk.jsonl
            async for chunk in retrieval.stub.ExportDrawers(
                retrieval_pb2.ExportDrawersRequest(store=retrieval.store())
            )
        ]
    )
    await retrieval.stub.DeleteDrawers(
        retrieval_pb2.DeleteDrawersRequest(store=retrieval.store(), ids=["dec-1"])
    )

    async def chunks() -> AsyncIterator[retrieval_pb2.ImportDrawersChunk]:
        yield retrieval_pb2.ImportDrawersChunk(
            store=retrieval.store(), jsonl=exported, replace_existing=True
        )

    imported = await retrieval.stub.ImportDrawers(chunks())
    assert imported.imported == len(POOL)
    assert "dec-1" in await _ids(retrieval)


def test_a_delete_cut_short_is_finished_by_the_next_start(tmp_path: Path) -> None:
    """The tombstone is the commit point: a crash after it but before the vector and keyword
    stores were touched leaves the drawer there; opening the pool finishes the delete."""
    location = PoolLocation(root=tmp_path / "pool")
    pool = DrawerPool(location, dimension=4)
    drawer = common_pb2.Drawer()
    drawer.CopyFrom(POOL[0])
    pool.upsert([drawer], np.array([[1.0, 0.0, 0.0, 0.0]], dtype=np.float32))
    assert pool.keyword_search("shard", MetaFilter(), 10).hits, "indexed before the crash"
    pool.tombstones.bury([drawer.id], 0.0)  # the crash: buried, nothing else done
    pool.close()

    reopened = DrawerPool(location, dimension=4)
    try:
        assert reopened.meta(drawer.id) is None
        assert reopened.get_many([drawer.id]) == []
        assert not reopened.keyword_search("shard", MetaFilter(), 10).hits
    finally:
        reopened.close()


async def test_a_store_made_with_another_model_is_refused_then_reembedded(
    tmp_path: Path, embedder_addr: str
) -> None:
    """The embedder now serves another model than the one a store's vectors were made with:
    the tier refuses the store with the way out; re-embedding it opens it (keyword matches
    while it runs), and once done it searches by vectors again under the model in force."""
    root = tmp_path / "retrieval"
    first = await start_retrieval(root, embedder_addr)
    try:
        await _index(first)
    finally:
        await stop_retrieval(first)
    record = root / "test" / RECORD
    served = json.loads(record.read_text())
    record.write_text(json.dumps({**served, "model": "bge-small-en", "fingerprint": "0" * 32}))

    running = await start_retrieval(root, embedder_addr)
    try:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await _ids(running)
        assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
        details = refused.value.details() or ""
        assert "bge-small-en" in details and "/v1/stores/test/reembed" in details, details

        began = await running.stub.ReembedStore(
            common_pb2.ReembedStoreRequest(store=running.store())
        )
        assert began.state in ("running", "done") and began.model == served["model"]
        for _ in range(200):
            stats = await running.stub.Stats(retrieval_pb2.StatsRequest(store=running.store()))
            if stats.reembed.state == "done":
                break
            await asyncio.sleep(0.05)
        assert stats.reembed.drawers_done == stats.reembed.drawers_total == len(POOL), stats
        assert json.loads(record.read_text()) == served, "the model in force is the store's"
        answer = await running.stub.Search(
            retrieval_pb2.SearchRequest(
                store=running.store(), query=QUERY, min_score=-1.0, include_breakdown=True
            )
        )
        assert not answer.notice, answer.notice
        assert answer.results[0].drawer.id == "dec-1" and answer.results[0].breakdown.vector_hit
    finally:
        await stop_retrieval(running)


async def test_a_store_being_reembedded_answers_from_keywords(
    retrieval: RunningRetrieval,
) -> None:
    await _index(retrieval)
    pool = retrieval.deps.pools.get("test")
    pool.reembedding_to = EmbeddingIdentity("next-model", "1" * 32, 384)
    answer = await retrieval.stub.Search(
        retrieval_pb2.SearchRequest(store=retrieval.store(), query="one shard per store")
    )
    assert "next-model" in answer.notice
    assert answer.results[0].drawer.id == "dec-1", "the keyword match, ranked by BM25"
