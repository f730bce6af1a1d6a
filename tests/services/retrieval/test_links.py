"""Typed links through the retrieval tier: create, list, traverse, end, delete; refused links
write nothing; a deleted drawer leaves no link holding."""

from __future__ import annotations

from datetime import UTC, datetime

import grpc
import pytest
from engram.v1 import retrieval_pb2

from services.retrieval.pool.records import to_timestamp
from tests.services.retrieval.conftest import RunningRetrieval
from tests.services.retrieval.test_contract import POOL, _index, drawer

SUPERSEDES = retrieval_pb2.LINK_TYPE_SUPERSEDES
RELATES = retrieval_pb2.LINK_TYPE_RELATES_TO


async def _link(
    r: RunningRetrieval, src: str, dst: str, kind: int = SUPERSEDES, **extra: object
) -> retrieval_pb2.DrawerLink:
    return await r.stub.CreateLink(
        retrieval_pb2.CreateLinkRequest(
            store=r.store(),
            from_id=src,
            to_id=dst,
            type=kind,
            **extra,  # type: ignore[arg-type]
        )
    )


async def _listed(r: RunningRetrieval, drawer: str, **extra: object) -> list[str]:
    answer = await r.stub.ListLinks(
        retrieval_pb2.ListLinksRequest(store=r.store(), drawer_id=drawer, **extra)  # type: ignore[arg-type]
    )
    return [link.id for link in answer.links]


async def test_links_are_created_listed_and_walked(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    newer = await _link(retrieval, "dec-1", "old-1", reason="the new storage decision")
    assert (newer.from_id, newer.to_id, newer.type) == ("dec-1", "old-1", SUPERSEDES)
    assert newer.asserted_by and not newer.HasField("valid_to")
    related = await _link(retrieval, "obs-1", "dec-1", RELATES, evidence_ids=["bug-1"])
    assert list(related.evidence_ids) == ["bug-1"]

    assert await _listed(retrieval, "dec-1") == [newer.id, related.id], "both ends, oldest first"
    assert await _listed(retrieval, "dec-1", types=[RELATES]) == [related.id]

    walked = await retrieval.stub.TraverseLinks(
        retrieval_pb2.TraverseLinksRequest(store=retrieval.store(), drawer_id="obs-1", depth=2)
    )
    assert list(walked.drawer_ids) == ["obs-1", "dec-1", "old-1"]
    chain = await retrieval.stub.TraverseLinks(
        retrieval_pb2.TraverseLinksRequest(
            store=retrieval.store(),
            drawer_id="old-1",
            types=[SUPERSEDES],
            direction=retrieval_pb2.LINK_DIRECTION_INCOMING,
            depth=5,
        )
    )
    assert list(chain.drawer_ids) == ["old-1", "dec-1"], "what supersedes old-1"


async def test_ending_keeps_history_and_as_of_reads_it(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    start = to_timestamp(datetime(2026, 5, 1, tzinfo=UTC))
    link = await _link(retrieval, "dec-1", "old-1", valid_from=start)
    ended = await retrieval.stub.EndLink(
        retrieval_pb2.EndLinkRequest(
            store=retrieval.store(),
            id=link.id,
            valid_to=to_timestamp(datetime(2026, 6, 1, tzinfo=UTC)),
        )
    )
    assert ended.HasField("valid_to")
    in_may = to_timestamp(datetime(2026, 5, 15, tzinfo=UTC))
    in_july = to_timestamp(datetime(2026, 7, 1, tzinfo=UTC))
    assert await _listed(retrieval, "old-1", as_of=in_may) == [link.id]
    assert await _listed(retrieval, "old-1", as_of=in_july) == [], "ended links no longer hold"
    assert await _listed(retrieval, "old-1") == [link.id], "but stay as history"
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await retrieval.stub.EndLink(
            retrieval_pb2.EndLinkRequest(
                store=retrieval.store(), id=link.id, valid_to=to_timestamp(datetime(2026, 1, 1))
            )
        )
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    deleted = await retrieval.stub.DeleteLink(
        retrieval_pb2.DeleteLinkRequest(store=retrieval.store(), id=link.id)
    )
    assert deleted.deleted and await _listed(retrieval, "old-1") == []


@pytest.mark.parametrize(
    ("src", "dst", "kind", "evidence", "code"),
    [
        ("dec-1", "no-such", SUPERSEDES, [], grpc.StatusCode.NOT_FOUND),
        ("no-such", "dec-1", SUPERSEDES, [], grpc.StatusCode.NOT_FOUND),
        ("dec-1", "old-1", SUPERSEDES, ["no-such"], grpc.StatusCode.NOT_FOUND),
        ("dec-1", "dec-1", SUPERSEDES, [], grpc.StatusCode.INVALID_ARGUMENT),
        (
            "dec-1",
            "old-1",
            retrieval_pb2.LINK_TYPE_UNSPECIFIED,
            [],
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
    ],
)
async def test_a_refused_link_says_why_and_writes_nothing(
    retrieval: RunningRetrieval,
    src: str,
    dst: str,
    kind: int,
    evidence: list[str],
    code: grpc.StatusCode,
) -> None:
    await _index(retrieval)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await _link(retrieval, src, dst, kind, evidence_ids=evidence)
    assert caught.value.code() is code, caught.value.details()
    assert await _listed(retrieval, "dec-1") == []


async def test_deleting_a_drawer_ends_its_links(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    link = await _link(retrieval, "dec-1", "old-1")
    await retrieval.stub.DeleteDrawers(
        retrieval_pb2.DeleteDrawersRequest(store=retrieval.store(), ids=["old-1"])
    )
    now = to_timestamp(datetime.now(UTC))
    assert await _listed(retrieval, "dec-1", as_of=now) == [], "no link holds to a deleted drawer"
    history = await retrieval.stub.ListLinks(
        retrieval_pb2.ListLinksRequest(store=retrieval.store(), drawer_id="dec-1")
    )
    assert [x.id for x in history.links] == [link.id] and history.links[0].HasField("valid_to")


_CAP_3 = drawer(
    "cap-3",
    "The Architect decided that job retries are capped at three attempts per job.",
    "decision",
    room="projects/jobs",
)
_CAP_5 = drawer(
    "cap-5",
    "From May the Architect raised the limit: a failing job now gets five tries.",
    "decision",
    room="projects/jobs",
)


async def _search(
    r: RunningRetrieval, intent: str, **extra: object
) -> list[retrieval_pb2.SearchHit]:
    answer = await r.stub.Search(
        retrieval_pb2.SearchRequest(
            store=r.store(),
            query="how many attempts are job retries capped at?",
            intent=intent,
            min_score=-1.0,
            **extra,  # type: ignore[arg-type]
        )
    )
    return list(answer.results)


async def test_supersession_binds_outside_history_and_shows_the_chain_in_it(
    retrieval: RunningRetrieval,
) -> None:
    await _index(retrieval, [*POOL, _CAP_3, _CAP_5])
    before = [h.drawer.id for h in await _search(retrieval, "planning")]
    assert "cap-3" in before, "without a link nothing is withheld"
    start = to_timestamp(datetime(2026, 5, 1, tzinfo=UTC))
    link = await _link(retrieval, "cap-5", "cap-3", valid_from=start)

    planning = await _search(retrieval, "planning")
    ids = [h.drawer.id for h in planning]
    assert "cap-3" not in ids and "cap-5" in ids, ids
    newer = next(h for h in planning if h.drawer.id == "cap-5")
    assert list(newer.supersedes) == ["cap-3"]

    # The successor is offered even when only the superseded drawer was a candidate.
    narrow = await _search(retrieval, "planning", candidate_depth=1, n_results=1)
    assert [h.drawer.id for h in narrow] == ["cap-5"]

    history = await _search(retrieval, "history")
    shown = {h.drawer.id: h for h in history}
    assert {"cap-3", "cap-5"} <= set(shown), "history shows both"
    assert list(shown["cap-3"].superseded_by) == ["cap-5"]
    told = [h.drawer.id for h in history if h.drawer.id in ("cap-3", "cap-5")]
    assert told == ["cap-3", "cap-5"], "the chain in the order it happened"

    april = to_timestamp(datetime(2026, 4, 1, tzinfo=UTC))
    assert "cap-3" in [h.drawer.id for h in await _search(retrieval, "planning", as_of=april)]
    await retrieval.stub.EndLink(retrieval_pb2.EndLinkRequest(store=retrieval.store(), id=link.id))
    assert "cap-3" in [h.drawer.id for h in await _search(retrieval, "planning")], "ended"
