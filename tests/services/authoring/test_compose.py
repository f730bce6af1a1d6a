"""Composing drawers from raw over real gRPC: a dialog transcript file → ingest → compose (the
offline extractive invoker) → drawers in the pool with `derived_from` and session descriptors,
the file marked authored; dry run; re-authoring without duplicates; walkback without orphans;
a malformed model answer failing its session cleanly."""

from __future__ import annotations

import json
import re

import grpc
import pytest
from engram.v1 import authoring_pb2, common_pb2, corpus_pb2, retrieval_pb2

from tests.services.authoring.conftest import FakeProvider, Stack

pytestmark = pytest.mark.slow

TURNS = [
    ("The_Foreman", "Morning all, thanks for joining the Engram sync."),
    ("The_Foreman", "What should the API return when a drawer is missing?"),
    ("The_Architect", "OK, so we decided that the API returns 404 for missing drawers."),
    ("The_Architect", "Never write to the drawer pool outside the retrieval tier."),
    ("The_Engineer", "Got it, I'll take a look."),
    (
        "The_Engineer",
        "The search endpoint crashes with a KeyError when the query string is empty.",
    ),
    ("The_Foreman", "Maybe we could benchmark Chroma before we commit to anything."),
    ("The_Architect", "Let's go with Qdrant edge for the embedded vector store."),
    ("The_Architect", "Sounds good, thanks everyone."),
]
TRANSCRIPT = "\n".join(
    json.dumps({"speaker": s, "text": t, "timestamp": f"2025-03-03T09:{30 + i}:00Z"})
    for i, (s, t) in enumerate(TURNS)
).encode()


async def derived(stack: Stack) -> list[retrieval_pb2.SearchHit]:
    answer = await stack.retrieval.ListDrawers(
        retrieval_pb2.ListDrawersRequest(store=stack.store("read"))
    )
    return list(answer.drawers)


async def test_compose_a_file_end_to_end(stack: Stack) -> None:
    uploaded = await stack.ingest("sync.jsonl", TRANSCRIPT)
    sessions = await stack.corpus.ListSessions(
        corpus_pb2.ListSessionsRequest(store=stack.store("read"), file_id=uploaded.id)
    )
    assert len(sessions.sessions) == 1
    session_id = sessions.sessions[0].descriptor.session_id

    preview = await stack.authoring.DryRun(
        authoring_pb2.DryRunRequest(
            store=stack.store("write"), session_id=session_id, allow_new_wing=True
        )
    )
    assert preview.drawers and preview.invoker == "extractive"
    again_preview = await stack.authoring.DryRun(
        authoring_pb2.DryRunRequest(
            store=stack.store("write"), session_id=session_id, allow_new_wing=True
        )
    )
    assert again_preview == preview, "the extractive invoker is not deterministic"
    assert await stack.count() == 0, "a dry run wrote drawers"

    record = await stack.compose(file_ids=[uploaded.id], allow_new_wing=True)
    assert record.state == common_pb2.JOB_STATE_DONE, record
    assert record.compose.failed_sessions == 0, record
    drawers = await derived(stack)
    assert len(drawers) == record.compose.drawers_written == len(preview.drawers)
    assert sorted(d.content for d in drawers) == sorted(d.content for d in preview.drawers)
    # The preview shows what compose writes, signatures and speakers included.
    assert sorted((d.content, d.signature, d.attributes["speaker"]) for d in drawers) == sorted(
        (d.content, d.signature, d.attributes["speaker"]) for d in preview.drawers
    )
    assert any(d.HasField("signature") for d in preview.drawers), "no canonical draft previewed"
    chunks = {
        c.id: c
        for c in (
            await stack.corpus.GetSessionChunks(
                corpus_pb2.GetSessionChunksRequest(store=stack.store(), session_id=session_id)
            )
        ).chunks
    }
    chunk_ids = set(chunks)
    types = {d.memory_type for d in drawers}
    assert "decision" in types, types
    for drawer in drawers:
        assert drawer.derived_from, drawer
        assert {arc.raw_chunk_id for arc in drawer.derived_from} <= chunk_ids
        for arc in drawer.derived_from:
            assert arc.excerpt == " ".join(chunks[arc.raw_chunk_id].content.split()), arc
        assert drawer.sessions[0].session_id == session_id
        assert drawer.sessions[0].raw_chunk_count == len(chunk_ids)
        assert drawer.attributes["prompt_version"] == "default-v2"
        assert drawer.attributes["invoker"] == "extractive"
        assert drawer.content[0].isupper() and not drawer.content.startswith("I ")
    decision = next(d for d in drawers if d.memory_type == "decision" and "404" in d.content)
    assert decision.content.startswith("The Architect decided"), decision.content
    signed = [d for d in drawers if d.HasField("signature")]
    assert signed, "canonical claims (decisions, directives) carry a signature"
    for drawer in signed:
        assert drawer.signature in drawer.content
        assert drawer.attributes["write"] == "canonical"

    # Visible to search, and the file is marked authored with its drawer count.
    found = await stack.retrieval.Search(
        retrieval_pb2.SearchRequest(
            store=stack.store("read"), query="what does the API return for a missing drawer"
        )
    )
    assert found.results[0].drawer.id == decision.id
    # A word only the source turn says finds the drawer made from it (keyword evidence).
    own_words = {w for d in drawers for w in re.findall(r"[a-z]+", d.content.lower())}
    source_only = sorted(
        (word, d.id)
        for d in drawers
        for arc in d.derived_from
        for word in re.findall(r"[a-z]{6,}", arc.excerpt.lower())
        if word not in own_words
    )
    assert source_only, "every source word was kept in some drawer: the test needs another turn"
    word, made_from = source_only[0]
    by_source = await stack.retrieval.Search(
        retrieval_pb2.SearchRequest(
            store=stack.store("read"),
            query=word,
            min_score=-1.0,
            ranker=retrieval_pb2.RANKER_MODE_KEYWORD,
        )
    )
    assert made_from in {hit.drawer.id for hit in by_source.results}, (word, by_source)
    listed = await stack.corpus.GetFile(
        corpus_pb2.GetFileRequest(store=stack.store(), file_id=uploaded.id)
    )
    assert listed.state == corpus_pb2.FILE_STATE_AUTHORED
    assert listed.derived_drawer_count == len(drawers)

    # Provenance names the job, the prompt version and the invoker.
    log = await stack.authoring.GetProvenance(
        authoring_pb2.GetProvenanceRequest(store=stack.store("read"), id=decision.id)
    )
    assert log.entries[0].action == "created"
    assert log.entries[0].changes["prompt_version"] == "default-v2"

    # Composing again, and re-authoring, leave exactly one copy of each drawer.
    again = await stack.compose(file_ids=[uploaded.id], allow_new_wing=True)
    assert again.state == common_pb2.JOB_STATE_DONE
    reauthored = await stack.compose(
        session_ids=[session_id], replace_existing=True, allow_new_wing=True
    )
    assert reauthored.state == common_pb2.JOB_STATE_DONE
    assert sorted(d.id for d in await derived(stack)) == sorted(d.id for d in drawers)


async def test_compose_needs_a_wing_permission_in_an_empty_store(stack: Stack) -> None:
    uploaded = await stack.ingest("sync.jsonl", TRANSCRIPT)
    record = await stack.compose(file_ids=[uploaded.id])
    assert record.state == common_pb2.JOB_STATE_DONE
    assert record.compose.drawers_written == 0
    assert record.compose.drafts_rejected > 0
    assert any("does not exist" in e.message for e in record.errors), record.errors
    assert await stack.count() == 0


async def test_walkback_leaves_no_orphans(stack: Stack) -> None:
    kept = await stack.ingest("other.jsonl", TRANSCRIPT.replace(b"404", b"410"))
    uploaded = await stack.ingest("sync.jsonl", TRANSCRIPT)
    await stack.compose(file_ids=[uploaded.id, kept.id], allow_new_wing=True)
    before = await derived(stack)
    doomed = [d for d in before if "404" in d.content]
    sessions = (
        await stack.corpus.ListSessions(
            corpus_pb2.ListSessionsRequest(store=stack.store(), file_id=uploaded.id)
        )
    ).sessions
    session_id = sessions[0].descriptor.session_id
    from_file = [d for d in before if any(a.session_id == session_id for a in d.derived_from)]
    assert from_file and doomed

    answer = await stack.authoring.Walkback(
        authoring_pb2.WalkbackRequest(
            store=stack.store("write"), file_ids=[uploaded.id], delete_raw=True
        )
    )
    assert answer.drawers_deleted == len(from_file)
    assert answer.raw_chunks_deleted > 0
    after = await derived(stack)
    assert len(after) == len(before) - len(from_file)
    assert not any(a.session_id == session_id for d in after for a in d.derived_from)
    left = await stack.corpus.GetSessionChunks(
        corpus_pb2.GetSessionChunksRequest(store=stack.store(), session_id=session_id)
    )
    assert not left.chunks, "raw chunks of the walked-back file remain"
    with pytest.raises(grpc.aio.AioRpcError) as gone:
        await stack.corpus.GetFile(
            corpus_pb2.GetFileRequest(store=stack.store(), file_id=uploaded.id)
        )
    assert gone.value.code() == grpc.StatusCode.NOT_FOUND
    # The other file is untouched and still authored.
    other = await stack.corpus.GetFile(
        corpus_pb2.GetFileRequest(store=stack.store(), file_id=kept.id)
    )
    assert other.state == corpus_pb2.FILE_STATE_AUTHORED

    # Walking back a session keeps its raw chunks unless asked.
    other_session = (
        (
            await stack.corpus.ListSessions(
                corpus_pb2.ListSessionsRequest(store=stack.store(), file_id=kept.id)
            )
        )
        .sessions[0]
        .descriptor.session_id
    )
    await stack.authoring.Walkback(
        authoring_pb2.WalkbackRequest(store=stack.store("write"), session_ids=[other_session])
    )
    assert await stack.count() == 0
    still = await stack.corpus.GetSessionChunks(
        corpus_pb2.GetSessionChunksRequest(store=stack.store(), session_id=other_session)
    )
    assert still.chunks


@pytest.mark.parametrize(
    "answer",
    [
        "Here are the drawers you asked for!",
        json.dumps({"drawers": [{"content": "x", "memory_type": "decision"}]}),
        json.dumps({"drawers": [{"text": "x"}]}),
    ],
    ids=["not-json", "missing-fields", "wrong-fields"],
)
async def test_malformed_model_output_fails_the_session_and_writes_nothing(
    stack: Stack, provider: tuple[str, type[FakeProvider]], answer: str
) -> None:
    url, handler = provider
    handler.answer = answer
    await stack.authoring.SetProviderConfig(
        authoring_pb2.SetProviderConfigRequest(
            store=stack.store("admin"),
            config=authoring_pb2.ProviderConfig(invoker="openai", model="test-model", base_url=url),
        )
    )
    uploaded = await stack.ingest("sync.jsonl", TRANSCRIPT)
    record = await stack.compose(file_ids=[uploaded.id], allow_new_wing=True)
    assert record.state == common_pb2.JOB_STATE_DONE
    assert record.compose.failed_sessions == 1
    assert record.compose.invoker == "openai"
    assert [e.code for e in record.errors] == ["invalid_input"], record.errors
    assert "malformed" in record.errors[0].message
    assert await stack.count() == 0
    file = await stack.corpus.GetFile(
        corpus_pb2.GetFileRequest(store=stack.store(), file_id=uploaded.id)
    )
    assert file.state == corpus_pb2.FILE_STATE_INGESTED


async def test_a_deleted_drawer_stays_deleted_when_the_compose_runs_again(stack: Stack) -> None:
    """Forgetting holds: composing the same session again (a replayed or repeated job) does
    not bring back a drawer someone deleted, and the job says it skipped it."""
    uploaded = await stack.ingest("sync.jsonl", TRANSCRIPT)
    first = await stack.compose(file_ids=[uploaded.id], allow_new_wing=True)
    assert first.state == common_pb2.JOB_STATE_DONE, first
    drawers = await derived(stack)
    forgotten = next(d for d in drawers if d.memory_type == "decision" and "404" in d.content)
    await stack.authoring.DeleteDrawer(
        authoring_pb2.DeleteDrawerRequest(
            store=stack.store("write"), id=forgotten.id, reason="no longer true"
        )
    )

    replayed = await stack.compose(file_ids=[uploaded.id], allow_new_wing=True)
    assert replayed.state == common_pb2.JOB_STATE_DONE, replayed
    result = replayed.compose
    assert result.drawers_forgotten == 1, result
    assert sorted(d.id for d in await derived(stack)) == sorted(
        d.id for d in drawers if d.id != forgotten.id
    )
    found = await stack.retrieval.Search(
        retrieval_pb2.SearchRequest(
            store=stack.store("read"), query="what does the API return for a missing drawer"
        )
    )
    assert forgotten.id not in [hit.drawer.id for hit in found.results]
