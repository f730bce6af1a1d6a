"""The retrieval tier's gRPC contract on a real in-process tier: embedded Qdrant Edge, FTS5 and
the real model."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import grpc
import pytest
from engram.v1 import common_pb2, retrieval_pb2

from services.retrieval.pool.handovers import ALREADY_USED, NEVER_HANDED
from services.retrieval.pool.records import to_timestamp
from services.vocabulary import MAX_EXCERPT_CHARS
from tests.services.retrieval.conftest import RunningRetrieval

NOW = datetime(2026, 7, 1, tzinfo=UTC)


def drawer(
    id: str,
    content: str,
    memory_type: str,
    *,
    room: str = "projects/engram",
    pin: int = common_pb2.PIN_STATUS_ACTIVE,
    added_by: str = "The_Engineer",
    signature: str | None = None,
) -> common_pb2.Drawer:
    d = common_pb2.Drawer(
        id=id,
        content=content,
        memory_type=memory_type,
        pin_status=pin,
        wing=room.split("/")[0],
        room=room,
        topic="storage",
        added_by=added_by,
        salience=0.6,
    )
    if signature:
        d.signature = signature
    d.created_at.CopyFrom(to_timestamp(datetime(2026, 6, 1, tzinfo=UTC)))
    return d


POOL = [
    drawer(
        "dec-1",
        "The Architect decided that Engram stores vectors in Qdrant with one shard per store.",
        "decision",
        added_by="The_Architect",
        signature="one shard per store",
    ),
    drawer(
        "obs-1",
        "The engineer observed that Qdrant shards per store made vector storage easy to back up.",
        "observation",
    ),
    drawer(
        "old-1",
        "The Architect decided that Engram stores vectors in Chroma collections.",
        "decision",
        pin=common_pb2.PIN_STATUS_DEPRECATED,
        added_by="The_Architect",
    ),
    drawer(
        "diary-1",
        "Diary: spent the evening thinking about vector storage and Qdrant shards again.",
        "observation",
        room="diary/engineer",
    ),
    drawer(
        "bug-1",
        "A bug made the Qdrant shard lock stay held after a crash, so the tier failed to restart.",
        "bug",
    ),
]


async def _index(r: RunningRetrieval, drawers: list[common_pb2.Drawer] = POOL) -> None:
    reply = await r.stub.IndexDrawers(
        retrieval_pb2.IndexDrawersRequest(store=r.store(), drawers=drawers)
    )
    assert reply.indexed == len(drawers)


async def test_index_then_get_returns_every_field(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    got = await retrieval.stub.GetDrawer(
        retrieval_pb2.GetDrawerRequest(store=retrieval.store(), id="dec-1")
    )
    assert got.content == POOL[0].content
    assert got.signature == "one shard per store"
    assert got.memory_type == "decision" and got.added_by == "The_Architect"
    assert got.content_hash, "the tier fills the content hash"
    assert got.updated_at.seconds > 0
    assert 0.1 <= got.effective_salience <= 0.6


async def test_index_is_idempotent_by_id(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    await _index(retrieval)
    stats = await retrieval.stub.Stats(retrieval_pb2.StatsRequest(store=retrieval.store()))
    assert stats.drawers == len(POOL), f"re-indexing must not duplicate: {stats.drawers}"


async def _planning_search(r: RunningRetrieval, *, n_results: int) -> retrieval_pb2.SearchResponse:
    """A planning question about vector storage, every candidate ranked, with breakdowns."""
    request = retrieval_pb2.SearchRequest(
        store=r.store(),
        query="how should Engram store vectors in Qdrant shards?",
        intent="planning",
        include_breakdown=True,
        n_results=n_results,
        min_score=-1.0,
    )
    request.as_of.CopyFrom(to_timestamp(NOW))
    return await r.stub.Search(request)


async def test_search_puts_the_decision_first_for_planning(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    reply = await _planning_search(retrieval, n_results=5)
    ids = [hit.drawer.id for hit in reply.results]
    assert ids[0] == "dec-1", f"the live decision should win, got {ids}"
    assert "old-1" not in ids, "deprecated drawers are left out by default"
    assert reply.intent == "planning" and not reply.intent_inferred
    top = reply.results[0].breakdown
    assert top.final_score == pytest.approx(top.score + top.keyword_boost)
    assert {s.signal for s in reply.dampening.signals} == {"authority", "confidence", "type"}
    authority = next(s for s in reply.dampening.signals if s.signal == "authority")
    assert not authority.enabled, "authority is off without legacy_authority"
    diary = next(h for h in reply.results if h.drawer.id == "diary-1")
    assert diary.breakdown.diary_factor == pytest.approx(0.85)


async def test_history_intent_includes_deprecated_and_says_so(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    reply = await retrieval.stub.Search(
        retrieval_pb2.SearchRequest(
            store=retrieval.store(),
            query="what did the Architect decide about Chroma collections?",
            intent="history",
            min_score=-1.0,
        )
    )
    old = [hit for hit in reply.results if hit.drawer.id == "old-1"]
    assert old and old[0].deprecated, "history shows the deprecated decision, flagged"


async def test_filters_restrict_room_and_type(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    reply = await retrieval.stub.Search(
        retrieval_pb2.SearchRequest(
            store=retrieval.store(),
            query="Qdrant shard",
            intent="debugging",
            memory_types=["bug"],
            min_score=-1.0,
        )
    )
    assert [h.drawer.id for h in reply.results] == ["bug-1"]


async def test_keyword_and_dense_rankers_keep_one_retriever_each(
    retrieval: RunningRetrieval,
) -> None:
    await _index(retrieval)

    async def search(ranker: int) -> retrieval_pb2.SearchResponse:
        reply: retrieval_pb2.SearchResponse = await retrieval.stub.Search(
            retrieval_pb2.SearchRequest(
                store=retrieval.store(),
                query="crash lock",
                intent="general",
                ranker=ranker,  # type: ignore[arg-type]
                include_breakdown=True,
                min_score=-1.0,
            )
        )
        return reply

    keyword = await search(retrieval_pb2.RANKER_MODE_KEYWORD)
    assert [h.drawer.id for h in keyword.results] == ["bug-1"], "only the FTS5 hit, by BM25"
    assert keyword.results[0].score == pytest.approx(1.0), "BM25 position 0 scores 1 / (1 + 0)"
    dense = await search(retrieval_pb2.RANKER_MODE_DENSE)
    assert len(dense.results) == 4, "every live drawer is a vector candidate; none boosted"
    for hit in dense.results:
        assert hit.breakdown.vector_hit and hit.score == pytest.approx(hit.breakdown.similarity)


async def test_inferred_intent_is_reported(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    reply = await retrieval.stub.Search(
        retrieval_pb2.SearchRequest(
            store=retrieval.store(), query="why does the tier crash with a stack trace on restart?"
        )
    )
    assert reply.intent_inferred
    assert reply.intent == "debugging", f"cue words point at debugging, got {reply.intent}"
    assert 0.0 < reply.intent_confidence <= 1.0


async def test_the_answer_counts_what_was_lifted_and_what_was_held_back(
    retrieval: RunningRetrieval,
) -> None:
    cafeteria = drawer(
        "dec-cafe",
        "The office manager decided that the cafeteria serves lentil soup every Friday.",
        "decision",
        room="office/cafeteria",
        pin=common_pb2.PIN_STATUS_PINNED,
        signature="lentil soup every Friday",
    )
    await _index(retrieval, [*POOL, cafeteria])
    reply = await _planning_search(retrieval, n_results=10)
    relevance = {h.drawer.id: h.breakdown.relevance for h in reply.results}
    answering = {
        h.drawer.id: max(relevance[h.drawer.id], relevance.get(h.breakdown.lifted_by, 0.0))
        for h in reply.results
    }
    behind = {k for k, v in answering.items() if v < max(answering.values()) / 2}
    assert "dec-cafe" in behind, f"a pinned decision on another topic: {answering}"
    assert reply.outside_relevance_window == len(behind), (reply.outside_relevance_window, behind)
    ids = [h.drawer.id for h in reply.results]
    assert all(ids.index(k) > ids.index(o) for k in behind for o in set(ids) - behind), (
        f"what the window holds back comes after every answer inside it: {ids}"
    )
    lifted = sum(1 for h in reply.results if h.breakdown.lifted_by)
    assert reply.topically_lifted == lifted


async def test_min_score_above_everything_is_silence(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    reply = await retrieval.stub.Search(
        retrieval_pb2.SearchRequest(
            store=retrieval.store(), query="Qdrant", intent="general", min_score=5.0
        )
    )
    assert list(reply.results) == [], "nothing clears the floor: silence is the answer"


async def hand_over(r: RunningRetrieval, times: int = 1, caller: str = "") -> None:
    """Searches that return obs-1 (and others) to `caller`, `times` over: each one lets that
    caller record each drawer it returned as used once."""
    request = retrieval_pb2.SearchRequest(
        store=r.store(caller_id=caller), query="Engram", min_score=-1.0, n_results=50
    )
    answers = await asyncio.gather(*(r.stub.Search(request) for _ in range(times)))
    assert all("obs-1" in {h.drawer.id for h in a.results} for a in answers), answers[0]


async def test_record_retrieval_bumps_salience(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    before = await retrieval.stub.GetDrawer(
        retrieval_pb2.GetDrawerRequest(store=retrieval.store(), id="obs-1")
    )
    await hand_over(retrieval)
    reply = await retrieval.stub.RecordRetrieval(
        retrieval_pb2.RecordRetrievalRequest(store=retrieval.store(), drawer_ids=["obs-1"])
    )
    after = reply.drawers[0]
    assert after.retrieval_count == before.retrieval_count + 1 and not reply.refused
    assert after.salience == pytest.approx(min(1.0, before.effective_salience + 0.1), abs=1e-6)


async def test_a_recorded_use_counts_once_per_search_that_returned_it_to_that_caller(
    retrieval: RunningRetrieval,
) -> None:
    """A read token cannot raise any drawer it likes: a use counts only after a search gave
    the drawer to the same caller, once per such search; the answer says why not."""
    await _index(retrieval)
    mine = retrieval.store(caller_id="tok_agent")

    def record(store: common_pb2.StoreContext) -> retrieval_pb2.RecordRetrievalRequest:
        return retrieval_pb2.RecordRetrievalRequest(store=store, drawer_ids=["obs-1"])

    unseen = await retrieval.stub.RecordRetrieval(record(mine))
    assert not unseen.drawers
    assert [(r.drawer_id, r.reason) for r in unseen.refused] == [("obs-1", NEVER_HANDED)]

    await hand_over(retrieval, caller="tok_agent")
    first = await retrieval.stub.RecordRetrieval(record(mine))
    again = await retrieval.stub.RecordRetrieval(record(mine))
    other = await retrieval.stub.RecordRetrieval(record(retrieval.store(caller_id="tok_other")))
    assert [d.id for d in first.drawers] == ["obs-1"] and not first.refused
    assert [(r.drawer_id, r.reason) for r in again.refused] == [("obs-1", ALREADY_USED)]
    assert [r.reason for r in other.refused] == [NEVER_HANDED], "another caller's search"
    final = await retrieval.stub.GetDrawer(
        retrieval_pb2.GetDrawerRequest(store=retrieval.store(), id="obs-1")
    )
    assert final.retrieval_count == 1, "only the earned use counted"
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await retrieval.stub.RecordRetrieval(
            retrieval_pb2.RecordRetrievalRequest(store=mine, drawer_ids=["no-such-drawer"])
        )
    assert missing.value.code() is grpc.StatusCode.NOT_FOUND


async def test_concurrent_records_each_count(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    before = await retrieval.stub.GetDrawer(
        retrieval_pb2.GetDrawerRequest(store=retrieval.store(), id="obs-1")
    )
    await hand_over(retrieval, times=48)
    request = retrieval_pb2.RecordRetrievalRequest(store=retrieval.store(), drawer_ids=["obs-1"])
    await asyncio.gather(*(retrieval.stub.RecordRetrieval(request) for _ in range(32)))
    after = await retrieval.stub.GetDrawer(
        retrieval_pb2.GetDrawerRequest(store=retrieval.store(), id="obs-1")
    )
    assert after.retrieval_count == before.retrieval_count + 32, "a concurrent record was lost"
    assert after.salience == pytest.approx(1.0), "32 bumps of 0.1 reach the cap"
    retagged = retrieval_pb2.UpdateDrawerMetadataRequest(
        store=retrieval.store(), id="obs-1", topic="retagged"
    )
    await asyncio.gather(
        *(retrieval.stub.RecordRetrieval(request) for _ in range(8)),
        retrieval.stub.UpdateDrawerMetadata(retagged),
        *(retrieval.stub.RecordRetrieval(request) for _ in range(8)),
    )
    final = await retrieval.stub.GetDrawer(
        retrieval_pb2.GetDrawerRequest(store=retrieval.store(), id="obs-1")
    )
    assert final.retrieval_count == after.retrieval_count + 16
    assert final.topic == "retagged", "a bump overwrote a concurrent metadata change"


async def test_list_pages_and_facets(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    first = await retrieval.stub.ListDrawers(
        retrieval_pb2.ListDrawersRequest(
            store=retrieval.store(),
            page=common_pb2.PageRequest(page_size=2),
            include_facets=True,
        )
    )
    assert len(first.drawers) == 2 and first.page.total == len(POOL)
    seen = [d.id for d in first.drawers]
    token = first.page.next_page_token
    while token:
        page = await retrieval.stub.ListDrawers(
            retrieval_pb2.ListDrawersRequest(
                store=retrieval.store(), page=common_pb2.PageRequest(page_size=2, page_token=token)
            )
        )
        seen += [d.id for d in page.drawers]
        token = page.page.next_page_token
    assert sorted(seen) == sorted(d.id for d in POOL), "pages cover every drawer exactly once"
    wings = {w.wing: w.count for w in first.facets.wings}
    assert wings == {"projects": 4, "diary": 1}


async def test_delete_removes_from_search(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    await retrieval.stub.DeleteDrawers(
        retrieval_pb2.DeleteDrawersRequest(store=retrieval.store(), ids=["bug-1"])
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await retrieval.stub.GetDrawer(
            retrieval_pb2.GetDrawerRequest(store=retrieval.store(), id="bug-1")
        )
    assert caught.value.code() is grpc.StatusCode.NOT_FOUND


HOSTILE_QUERIES = [
    'NEAR("vector" "shard")',
    "content:qdrant OR signature:*",
    '"unbalanced ( quote',
    "AND OR NOT",
    "*",
    "🦄🔥 qdrant",
]


@pytest.mark.parametrize("query", HOSTILE_QUERIES)
async def test_fts5_syntax_in_a_query_is_just_text(retrieval: RunningRetrieval, query: str) -> None:
    await _index(retrieval)
    reply = await retrieval.stub.Search(
        retrieval_pb2.SearchRequest(store=retrieval.store(), query=query, min_score=-1.0)
    )
    assert reply.candidates_considered >= 0


@pytest.mark.parametrize(
    ("query", "fragment"),
    [("", "query is empty"), ("   ", "query is empty"), ("x" * 100_000, "the limit is")],
    ids=["empty", "blank", "100KB"],
)
async def test_bad_queries_are_invalid_argument(
    retrieval: RunningRetrieval, query: str, fragment: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await retrieval.stub.Search(
            retrieval_pb2.SearchRequest(store=retrieval.store(), query=query)
        )
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert fragment in (caught.value.details() or "")


async def test_non_utf8_bytes_are_invalid_argument_not_internal(
    retrieval: RunningRetrieval,
) -> None:
    # A SearchRequest whose `query` (field 2) carries bytes that are not UTF-8.
    store = retrieval_pb2.SearchRequest(store=retrieval.store()).SerializeToString()
    raw = store + b"\x12\x04\xff\xfe\xfd\xfc"
    call = retrieval.channel.unary_unary(
        "/engram.v1.RetrievalService/Search",
        request_serializer=lambda b: b,
        response_deserializer=retrieval_pb2.SearchResponse.FromString,
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call(raw)
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT, caught.value.details()


async def test_unknown_store_name_is_refused(retrieval: RunningRetrieval) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await retrieval.stub.Search(
            retrieval_pb2.SearchRequest(
                store=common_pb2.StoreContext(name="../etc"), query="anything"
            )
        )
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT


async def test_bad_drawers_are_refused_and_nothing_is_written(retrieval: RunningRetrieval) -> None:
    bad = drawer("ok-1", "fine content", "decision")
    empty = drawer("bad-1", "   ", "decision")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await retrieval.stub.IndexDrawers(
            retrieval_pb2.IndexDrawersRequest(store=retrieval.store(), drawers=[bad, empty])
        )
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    stats = await retrieval.stub.Stats(retrieval_pb2.StatsRequest(store=retrieval.store()))
    assert stats.drawers == 0, "a refused batch writes nothing"


@pytest.mark.parametrize(
    ("excerpts", "says"),
    [
        (["x" * (MAX_EXCERPT_CHARS + 1)], "derived_from[0].excerpt is 2001 characters"),
        (["y" * MAX_EXCERPT_CHARS] * 5, "excerpts hold 10000 characters"),
    ],
)
async def test_oversized_source_excerpts_are_refused_and_nothing_is_written(
    retrieval: RunningRetrieval, excerpts: list[str], says: str
) -> None:
    made = drawer("src-1", "Maya decided to refund to the original card.", "decision")
    made.derived_from.extend(
        common_pb2.DerivedFromArc(raw_chunk_id=f"c{i}", session_id="s", ordinal=i, excerpt=text)
        for i, text in enumerate(excerpts)
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await retrieval.stub.IndexDrawers(
            retrieval_pb2.IndexDrawersRequest(store=retrieval.store(), drawers=[made])
        )
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert says in (caught.value.details() or ""), caught.value.details()
    stats = await retrieval.stub.Stats(retrieval_pb2.StatsRequest(store=retrieval.store()))
    assert stats.drawers == 0


async def test_a_drawer_is_found_by_the_words_of_its_source_excerpt(
    retrieval: RunningRetrieval,
) -> None:
    made = drawer("src-2", "Caroline treasures a necklace that reminds her of her roots.", "want")
    made.derived_from.append(
        common_pb2.DerivedFromArc(
            raw_chunk_id="c1",
            session_id="s",
            ordinal=1,
            excerpt="Caroline: This necklace was a gift from my grandma in Sweden.",
        )
    )
    other = drawer("src-3", "Melanie ran a charity race for mental health.", "want")
    await retrieval.stub.IndexDrawers(
        retrieval_pb2.IndexDrawersRequest(store=retrieval.store(), drawers=[made, other])
    )
    found = await retrieval.stub.Search(
        retrieval_pb2.SearchRequest(
            store=retrieval.store(),
            query="grandma Sweden",
            min_score=-1.0,
            ranker=retrieval_pb2.RANKER_MODE_KEYWORD,
        )
    )
    assert [hit.drawer.id for hit in found.results] == ["src-2"], found
    got = await retrieval.stub.GetDrawer(
        retrieval_pb2.GetDrawerRequest(store=retrieval.store(), id="src-2")
    )
    assert got.derived_from[0].excerpt.startswith("Caroline: This necklace"), got


async def test_stats_counts_only_is_the_count_without_the_figures(
    retrieval: RunningRetrieval,
) -> None:
    await _index(retrieval)
    full = await retrieval.stub.Stats(retrieval_pb2.StatsRequest(store=retrieval.store()))
    counted = await retrieval.stub.Stats(
        retrieval_pb2.StatsRequest(store=retrieval.store(), counts_only=True)
    )
    assert counted.drawers == full.drawers == len(POOL)
    assert counted.vector_backend == full.vector_backend
    assert not counted.HasField("salience") and not counted.HasField("facets")
    assert full.HasField("salience")
