"""Ingest jobs end to end: files → raw chunks (markdown by heading, a Claude Code transcript as
arcs, plain text), search_raw / expand_raw / sessions, idempotent re-ingest, walkback, and a
bad file failing alone."""

from __future__ import annotations

import json

import grpc
import pytest
from engram.v1 import common_pb2, corpus_pb2

from services.corpus.ingest import INGEST_KIND
from services.runtime.embedding import RECORD, begin_reembed
from services.runtime.job_proto import job_payload
from tests.services.corpus.conftest import STORE, RunningCorpus

MARKDOWN = (
    b"# Engram\n\nIntro paragraph about memory.\n\n"
    b"## Storage\n\nThe Architect decided that every store gets its own Qdrant shard.\n\n"
    b"### Backups\n\nShards are snapshotted nightly and kept for thirty days.\n\n"
    b"## Retrieval\n\nSearch merges vector and keyword candidates before scoring.\n"
)


def _claude_code_transcript() -> bytes:
    lines = [
        {"type": "summary", "summary": "Fixing the flaky upload test", "leafUuid": "x"},
        {
            "type": "user",
            "sessionId": "cc-session-1",
            "uuid": "u1",
            "timestamp": "2026-05-01T10:00:00Z",
            "message": {"role": "user", "content": "Why does the upload test fail on CI?"},
        },
        {
            "type": "assistant",
            "sessionId": "cc-session-1",
            "uuid": "a1",
            "timestamp": "2026-05-01T10:00:05Z",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me look at the test output."},
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Bash",
                        "input": {"command": "pytest"},
                    },
                ],
            },
        },
        {
            "type": "user",
            "sessionId": "cc-session-1",
            "uuid": "u2",
            "timestamp": "2026-05-01T10:00:09Z",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "1 failed"}],
            },
        },
        {
            "type": "assistant",
            "sessionId": "cc-session-1",
            "uuid": "a2",
            "timestamp": "2026-05-01T10:00:20Z",
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "The temp directory is shared between workers."}
                ],
            },
        },
        {
            "type": "user",
            "sessionId": "cc-session-1",
            "uuid": "u3",
            "timestamp": "2026-05-01T10:01:00Z",
            "message": {"role": "user", "content": "Give each worker its own temp dir then."},
        },
        {
            "type": "assistant",
            "sessionId": "cc-session-1",
            "uuid": "a3",
            "timestamp": "2026-05-01T10:01:10Z",
            "message": {"role": "assistant", "content": "Done: tmp_path per worker fixes it."},
        },
    ]
    return ("\n".join(json.dumps(line) for line in lines) + "\n").encode()


async def _ingest(corpus: RunningCorpus, file_ids: list[str]) -> dict[str, object]:
    job = await corpus.stub.IngestFiles(
        corpus_pb2.IngestFilesRequest(store=STORE, file_ids=file_ids)
    )
    record = await corpus.wait_job(job.id)
    assert record.state == common_pb2.JOB_STATE_DONE, (
        f"ingest ended {record.state}: {record.error} {record.errors}"
    )
    return {"record": record}


async def test_ingest_turns_files_into_searchable_raw_chunks(corpus: RunningCorpus) -> None:
    md = await corpus.upload("engram.md", MARKDOWN)
    cc = await corpus.upload("session.jsonl", _claude_code_transcript())
    await _ingest(corpus, [md.id, cc.id])

    md_after = await corpus.stub.GetFile(corpus_pb2.GetFileRequest(store=STORE, file_id=md.id))
    assert md_after.state == corpus_pb2.FILE_STATE_INGESTED and md_after.chunk_count >= 3

    hits = await corpus.stub.SearchRaw(
        corpus_pb2.SearchRawRequest(store=STORE, query="where do shard snapshots go?", n_results=3)
    )
    top = hits.results[0].chunk
    assert top.file_id == md.id and "snapshotted" in top.content
    assert list(top.heading_path)[-1] == "Backups", "markdown chunks carry their heading path"
    assert MARKDOWN[top.byte_start : top.byte_end].decode().strip().endswith("thirty days."), (
        "the byte range points back into the file"
    )

    sessions = await corpus.stub.ListSessions(
        corpus_pb2.ListSessionsRequest(store=STORE, origin_kind="claude_code")
    )
    assert [s.descriptor.session_id for s in sessions.sessions] == ["cc-session-1"]
    arcs = await corpus.stub.GetSessionChunks(
        corpus_pb2.GetSessionChunksRequest(store=STORE, session_id="cc-session-1")
    )
    # Two user turns: the tool_result "user" line belongs to the first arc, not a new turn.
    assert len(arcs.chunks) == 2, [c.content for c in arcs.chunks]
    first_arc = arcs.chunks[0].content
    assert "upload test fail" in first_arc and "temp directory" in first_arc, (
        "a user turn is bundled with the assistant's reply, tool chatter summarised"
    )
    assert "[tool" in first_arc

    last = arcs.chunks[1]
    expanded = await corpus.stub.ExpandRaw(
        corpus_pb2.ExpandRawRequest(store=STORE, chunk_id=last.id, before=1, after=1)
    )
    assert [c.id for c in expanded.before] == [arcs.chunks[0].id]
    assert list(expanded.after) == []


async def test_reingesting_replaces_chunks_without_duplicates(corpus: RunningCorpus) -> None:
    md = await corpus.upload("engram.md", MARKDOWN)
    await _ingest(corpus, [md.id])
    store = corpus.deps.stores.get(STORE.name)
    first = sorted(m.id for m in store.raw.of_file(md.id))
    await _ingest(corpus, [md.id])
    second = sorted(m.id for m in store.raw.of_file(md.id))
    assert first == second, "re-ingesting yields the same chunk ids"
    assert store.raw.count() == len(first), "no duplicates, nothing orphaned"


async def test_delete_with_walkback_removes_raw_chunks(corpus: RunningCorpus) -> None:
    md = await corpus.upload("engram.md", MARKDOWN)
    await _ingest(corpus, [md.id])
    reply = await corpus.stub.DeleteFile(
        corpus_pb2.DeleteFileRequest(store=STORE, file_id=md.id, delete_raw=True)
    )
    assert reply.raw_chunks_deleted >= 3
    assert corpus.deps.stores.get(STORE.name).raw.count() == 0


async def test_a_corrupt_pdf_fails_alone_and_the_job_goes_on(corpus: RunningCorpus) -> None:
    broken = await corpus.upload("broken.pdf", b"%PDF-1.7\n garbage that is no pdf at all")
    good = await corpus.upload("engram.md", MARKDOWN)
    job = await corpus.stub.IngestFiles(
        corpus_pb2.IngestFilesRequest(store=STORE, file_ids=[broken.id, good.id])
    )
    record = await corpus.wait_job(job.id)
    assert record.state == common_pb2.JOB_STATE_DONE
    assert [e.item_id for e in record.errors] == [broken.id]
    assert "pdf" in record.errors[0].message.lower()
    failed = await corpus.stub.GetFile(corpus_pb2.GetFileRequest(store=STORE, file_id=broken.id))
    assert failed.state == corpus_pb2.FILE_STATE_FAILED and failed.last_error
    ok = await corpus.stub.GetFile(corpus_pb2.GetFileRequest(store=STORE, file_id=good.id))
    assert ok.state == corpus_pb2.FILE_STATE_INGESTED


async def test_ingest_of_unknown_files_is_refused(corpus: RunningCorpus) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await corpus.stub.IngestFiles(
            corpus_pb2.IngestFilesRequest(store=STORE, file_ids=["f_missing"])
        )
    assert caught.value.code() is grpc.StatusCode.NOT_FOUND


async def test_a_replayed_ingest_of_a_deleted_file_brings_nothing_back(
    corpus: RunningCorpus,
) -> None:
    """Forgetting holds: the ingest job of a file deleted since (replayed from the queue, as
    after a crash) fails that file and writes no chunk for it."""
    md = await corpus.upload("engram.md", MARKDOWN)
    await _ingest(corpus, [md.id])
    await corpus.stub.DeleteFile(
        corpus_pb2.DeleteFileRequest(store=STORE, file_id=md.id, delete_raw=True)
    )
    replay = await corpus.deps.jobs.enqueue(
        INGEST_KIND, STORE.name, job_payload(corpus_pb2.IngestJobPayload(file_ids=[md.id]))
    )
    record = await corpus.wait_job(replay.id)
    assert [(e.item_id, e.code) for e in record.errors] == [(md.id, "not_found")], record
    assert corpus.deps.stores.get(STORE.name).raw.count() == 0


async def test_a_corpus_store_of_another_model_is_refused_then_reembedded(
    corpus: RunningCorpus,
) -> None:
    """Raw chunks made with another model: raw search is refused with the way out; the
    re-embed job rebuilds them (keyword matches meanwhile) and the model in force is the
    store's again."""
    md = await corpus.upload("engram.md", MARKDOWN)
    await _ingest(corpus, [md.id])
    chunks = corpus.deps.stores.get(STORE.name).raw.count()
    corpus.deps.stores.close()  # as after a restart with another model
    record = corpus.deps.stores.folder(STORE.name) / RECORD
    served = json.loads(record.read_text())
    record.write_text(json.dumps({**served, "model": "bge-small-en", "fingerprint": "0" * 32}))
    query = corpus_pb2.SearchRawRequest(store=STORE, query="how are vectors stored?")
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await corpus.stub.SearchRaw(query)
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "/reembed" in (refused.value.details() or "")

    store = corpus.deps.stores
    await store_moving(corpus)  # while it runs: keyword matches, said so
    job = await corpus.stub.ReembedStore(common_pb2.ReembedStoreRequest(store=STORE))
    done = await corpus.wait_job(job.id)
    assert done.state == common_pb2.JOB_STATE_DONE, done
    assert done.reembed.raw_chunks == chunks
    assert json.loads(record.read_text()) == served
    answer = await corpus.stub.SearchRaw(query)
    assert answer.results and not answer.notice
    assert store.get(STORE.name).reembedding_to is None


async def store_moving(corpus: RunningCorpus) -> None:
    """A store being re-embedded answers raw searches from its keyword index, with a notice."""
    folder = corpus.deps.stores.folder(STORE.name)
    identity = corpus.deps.stores.embedding
    assert identity is not None
    begin_reembed(folder, identity)
    opened = corpus.deps.stores.get(STORE.name)
    opened.reembedding_to = identity
    answer = await corpus.stub.SearchRaw(
        corpus_pb2.SearchRawRequest(store=STORE, query="Qdrant", hybrid=True)
    )
    assert "re-embedded" in answer.notice and answer.results
    assert all(hit.keyword_hit and hit.similarity == 0.0 for hit in answer.results)
