"""Chat exports through the corpus tier: one upload, one ingest job, a session per
conversation with its own times; a malformed export fails whole and writes nothing."""

from __future__ import annotations

from pathlib import Path

from engram.v1 import common_pb2, corpus_pb2

from tests.services.corpus.conftest import STORE, RunningCorpus

FIXTURES = Path(__file__).parents[2] / "unit" / "corpus" / "fixtures"


async def test_a_chatgpt_export_lands_as_one_session_per_conversation(
    corpus: RunningCorpus,
) -> None:
    export = await corpus.upload(
        "conversations.json", (FIXTURES / "chatgpt_conversations.json").read_bytes()
    )
    assert export.detected_type == "chat-export"
    job = await corpus.stub.IngestFiles(
        corpus_pb2.IngestFilesRequest(store=STORE, file_ids=[export.id])
    )
    record = await corpus.wait_job(job.id)
    assert record.state == common_pb2.JOB_STATE_DONE and not record.errors, record.errors

    sessions = await corpus.stub.ListSessions(
        corpus_pb2.ListSessionsRequest(store=STORE, file_id=export.id)
    )
    by_id = {s.descriptor.session_id: s.descriptor for s in sessions.sessions}
    assert sorted(by_id) == [
        f"file-{export.id}-6631a1b0-0000-4000-8000-000000000001",
        f"file-{export.id}-6631a1b0-0000-4000-8000-000000000002",
    ]
    first = by_id[f"file-{export.id}-6631a1b0-0000-4000-8000-000000000001"]
    assert first.origin_kind == "chatgpt"
    assert first.span_start.ToSeconds() == 1714550420  # the edited question's time

    hits = await corpus.stub.SearchRaw(
        corpus_pb2.SearchRawRequest(store=STORE, query="how much water for sourdough?", n_results=1)
    )
    top = hits.results[0].chunk
    assert "350 g water" in top.content
    assert top.attributes["conversation_title"] == "Sourdough hydration"

    # Neighbours stay inside the conversation: the last arc of the first has none after it,
    # although the next conversation's arc follows it in the file.
    chunks = await corpus.stub.GetSessionChunks(
        corpus_pb2.GetSessionChunksRequest(store=STORE, session_id=first.session_id)
    )
    expanded = await corpus.stub.ExpandRaw(
        corpus_pb2.ExpandRawRequest(store=STORE, chunk_id=chunks.chunks[-1].id, before=3, after=3)
    )
    assert [c.id for c in expanded.before] == [chunks.chunks[0].id]
    assert list(expanded.after) == []


async def test_a_malformed_export_fails_whole_and_writes_nothing(corpus: RunningCorpus) -> None:
    good = (FIXTURES / "claude_conversations.json").read_bytes()
    broken = good.replace(b'"sender": "human"', b'"sender": "robot"', 1)
    export = await corpus.upload("claude.json", broken)
    job = await corpus.stub.IngestFiles(
        corpus_pb2.IngestFilesRequest(store=STORE, file_ids=[export.id])
    )
    record = await corpus.wait_job(job.id)
    assert [e.item_id for e in record.errors] == [export.id]
    assert "conversation 1 'Renaming the billing service'" in record.errors[0].message
    assert "message 1 has no sender" in record.errors[0].message
    failed = await corpus.stub.GetFile(corpus_pb2.GetFileRequest(store=STORE, file_id=export.id))
    assert failed.state == corpus_pb2.FILE_STATE_FAILED
    assert corpus.deps.stores.get(STORE.name).raw.count() == 0
