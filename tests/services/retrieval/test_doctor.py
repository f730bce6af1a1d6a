"""CheckStore (`engram doctor`) on the retrieval tier: a clean pool reports nothing; drift put
into each part by hand (keyword rows, tombstones, the metadata mirror, links) is found, named
in plain words, left alone by a report-only check, mended by a repair, and gone after it."""

from __future__ import annotations

import time

import grpc
import pytest
from engram.v1 import common_pb2, retrieval_pb2

from services.retrieval.pool import DrawerPool
from services.retrieval.pool import pool as pool_parts
from tests.services.retrieval.conftest import RunningRetrieval
from tests.services.retrieval.test_contract import _index


async def _check(r: RunningRetrieval, *, repair: bool = False) -> common_pb2.StoreCheck:
    return await r.stub.CheckStore(common_pb2.CheckStoreRequest(store=r.store(), repair=repair))


def _found(check: common_pb2.StoreCheck) -> dict[tuple[str, str], list[str]]:
    return {(d.part, d.problem): list(d.examples) for d in check.drift}


def _by_part(check: common_pb2.StoreCheck) -> dict[str, set[str]]:
    parts: dict[str, set[str]] = {}
    for drift in check.drift:
        parts.setdefault(drift.part, set()).update(drift.examples)
    return parts


async def _linked(r: RunningRetrieval, src: str, dst: str) -> str:
    link = await r.stub.CreateLink(
        retrieval_pb2.CreateLinkRequest(
            store=r.store(), from_id=src, to_id=dst, type=retrieval_pb2.LINK_TYPE_RELATES_TO
        )
    )
    return link.id


async def test_a_clean_pool_reports_every_part_and_no_drift(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    await _linked(retrieval, "obs-1", "dec-1")
    check = await _check(retrieval)
    assert check.tier == "retrieval"
    assert list(check.parts) == list(pool_parts.CHECKED_PARTS)
    assert check.items_checked == 6, "5 drawers and 1 open link compared"
    assert not check.drift, f"a fresh pool has no drift, found {_found(check)}"


async def test_drift_in_every_part_is_found_then_repaired(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    to_gone = await _linked(retrieval, "obs-1", "bug-1")
    to_buried = await _linked(retrieval, "dec-1", "old-1")
    pool: DrawerPool = retrieval.deps.pools.get("test")
    keywords = pool.collection.keywords
    assert keywords is not None
    # A crash's leftovers, one per part:
    keywords.delete(["obs-1"])  # a point without its keyword row
    keywords.upsert([{"id": "ghost", "content": "a row whose point is gone"}])
    keywords.upsert([{"id": "diary-1", "content": "text the payload never had"}])
    pool.tombstones.bury(["old-1"], time.time())  # a delete cut short after its tombstone
    pool._meta.remove("dec-1")  # the mirror lost a drawer
    pool.collection.vectors.delete(pool.collection.collection, ["bug-1"])  # gone underneath

    reported = await _check(retrieval)
    parts = _by_part(reported)
    assert parts == {
        pool_parts.PART_KEYWORDS: {"obs-1", "ghost", "diary-1", "bug-1"},
        pool_parts.PART_TOMBSTONES: {"old-1"},
        pool_parts.PART_MIRROR: {"dec-1", "bug-1"},
        pool_parts.PART_LINKS: {to_gone, to_buried},
    }, f"each injected drift is named where it lives: {_found(reported)}"
    assert not any(d.repaired for d in reported.drift), "a check alone repairs nothing"
    again = await _check(retrieval)
    assert _found(again) == _found(reported), "and changes nothing"

    repaired = await _check(retrieval, repair=True)
    assert _found(repaired) == _found(reported)
    assert all(d.repaired for d in repaired.drift)
    clean = await _check(retrieval)
    assert not clean.drift, f"nothing is left after a repair: {_found(clean)}"
    assert not (await _check(retrieval, repair=True)).drift, "a second repair finds nothing"

    # What the repairs mean to a caller: the buried drawer is gone, its links ended, the
    # restored keyword row finds its drawer again.
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await retrieval.stub.GetDrawer(
            retrieval_pb2.GetDrawerRequest(store=retrieval.store(), id="old-1")
        )
    assert caught.value.code() is grpc.StatusCode.NOT_FOUND
    links = await retrieval.stub.ListLinks(
        retrieval_pb2.ListLinksRequest(store=retrieval.store(), drawer_id="dec-1")
    )
    assert [link.HasField("valid_to") for link in links.links] == [True]
    assert "obs-1" in pool.collection.keywords.rows()
    assert pool.meta("dec-1") is not None


async def test_a_broken_full_text_index_is_rebuilt(retrieval: RunningRetrieval) -> None:
    await _index(retrieval)
    pool: DrawerPool = retrieval.deps.pools.get("test")
    keywords = pool.collection.keywords
    assert keywords is not None
    # The FTS5 index loses a row its content table still has (what a torn write leaves).
    with keywords.transaction():
        keywords._writer.execute(
            "INSERT INTO docs_fts(docs_fts, rowid, content, signature, topic) "
            "SELECT 'delete', rowid, content, signature, topic FROM docs WHERE id = 'obs-1'"
        )
    reported = await _check(retrieval)
    assert [(d.part, d.count) for d in reported.drift] == [(pool_parts.PART_KEYWORDS, 1)]
    assert "full-text index" in reported.drift[0].problem
    await _check(retrieval, repair=True)
    assert not (await _check(retrieval)).drift
