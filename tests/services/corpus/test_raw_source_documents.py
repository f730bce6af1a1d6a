"""Direct raw memories and sessions, source-set reconciliation, and query_document."""

from __future__ import annotations

import grpc
import pytest
from engram.v1 import corpus_pb2

from tests.services.corpus.conftest import STORE, RunningCorpus


async def test_a_session_of_turns_becomes_bundled_arcs(corpus: RunningCorpus) -> None:
    turns = [
        corpus_pb2.RawTurn(role="user", content="What should we cook on Friday?"),
        corpus_pb2.RawTurn(role="assistant", content="Maybe the pho you wanted to try."),
        corpus_pb2.RawTurn(role="user", content="Sounds good, no warm tomatoes please."),
        corpus_pb2.RawTurn(role="assistant", content="Noted: no warm tomatoes."),
    ]
    reply = await corpus.stub.AddRawSession(
        corpus_pb2.AddRawSessionRequest(
            store=STORE, session_id="dinner-1", turns=turns, bundle_turn_pairs=True
        )
    )
    assert [c.ordinal for c in reply.chunks] == [0, 1]
    assert "pho" in reply.chunks[0].content and "tomatoes" in reply.chunks[1].content
    again = await corpus.stub.AddRawSession(
        corpus_pb2.AddRawSessionRequest(
            store=STORE, session_id="dinner-1", turns=turns, bundle_turn_pairs=True
        )
    )
    assert [c.id for c in again.chunks] == [c.id for c in reply.chunks]
    assert corpus.deps.stores.get(STORE.name).raw.count() == 2, "re-sending replaces"
    hits = await corpus.stub.SearchRaw(
        corpus_pb2.SearchRawRequest(store=STORE, query="tomatoes", hybrid=True, n_results=2)
    )
    assert hits.results[0].keyword_hit


async def test_a_chunk_is_expanded_by_id_or_by_its_place_in_the_session(
    corpus: RunningCorpus,
) -> None:
    turns = [
        corpus_pb2.RawTurn(role="user", content=f"Turn number {n} of the talk.") for n in range(4)
    ]
    reply = await corpus.stub.AddRawSession(
        corpus_pb2.AddRawSessionRequest(store=STORE, session_id="talk-1", turns=turns)
    )
    by_id = await corpus.stub.ExpandRaw(
        corpus_pb2.ExpandRawRequest(store=STORE, chunk_id=reply.chunks[2].id, before=1, after=1)
    )
    by_place = await corpus.stub.ExpandRaw(
        corpus_pb2.ExpandRawRequest(store=STORE, session_id="talk-1", ordinal=2, before=1, after=1)
    )
    assert by_place == by_id
    assert "Turn number 2" in by_place.chunk.content
    assert [c.ordinal for c in (*by_place.before, *by_place.after)] == [1, 3]
    for bad, code in (
        (corpus_pb2.ExpandRawRequest(store=STORE, session_id="talk-1", ordinal=9), "NOT_FOUND"),
        (corpus_pb2.ExpandRawRequest(store=STORE, session_id="no-such-talk"), "NOT_FOUND"),
        (corpus_pb2.ExpandRawRequest(store=STORE), "INVALID_ARGUMENT"),
        (
            corpus_pb2.ExpandRawRequest(
                store=STORE, chunk_id=reply.chunks[0].id, session_id="talk-1"
            ),
            "INVALID_ARGUMENT",
        ),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await corpus.stub.ExpandRaw(bad)
        assert caught.value.code().name == code, (bad, caught.value.details())


async def test_direct_memories_append_to_their_session(corpus: RunningCorpus) -> None:
    first = await corpus.stub.AddRawMemory(
        corpus_pb2.AddRawMemoryRequest(store=STORE, content="Marco's band plays on July 18.")
    )
    second = await corpus.stub.AddRawMemory(
        corpus_pb2.AddRawMemoryRequest(
            store=STORE, content="The venue is the old brewery.", session_id=first.session_id
        )
    )
    assert (first.ordinal, second.ordinal) == (0, 1)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await corpus.stub.AddRawMemory(corpus_pb2.AddRawMemoryRequest(store=STORE, content="  "))
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT


def _files(contents: dict[str, str]) -> list[corpus_pb2.SourceFile]:
    return [corpus_pb2.SourceFile(path=p, content=c.encode()) for p, c in contents.items()]


async def test_source_sync_reembeds_only_what_changed(corpus: RunningCorpus) -> None:
    base = {
        "app/main.py": "def main():\n    return serve()\n",
        "app/db.py": "def connect():\n    return sqlite3.connect('x')\n",
        "README.md": "# App\n\nRun it with make run.\n",
    }
    first = await corpus.stub.SyncSource(
        corpus_pb2.SyncSourceRequest(store=STORE, source="app", files=_files(base))
    )
    assert (first.chunks_added, first.chunks_unchanged, first.chunks_removed) == (3, 0, 0)
    changed = dict(base)
    changed["app/main.py"] = "def main():\n    return serve(port=8080)\n"
    changed["README.md"] = "# App\n\nRun it with make run, test it with make test.\n"
    second = await corpus.stub.SyncSource(
        corpus_pb2.SyncSourceRequest(store=STORE, source="app", files=_files(changed))
    )
    assert (second.chunks_added, second.chunks_unchanged, second.chunks_removed) == (2, 1, 2)
    assert second.files_seen == 3
    hits = await corpus.stub.SearchSource(
        corpus_pb2.SearchSourceRequest(store=STORE, query="database connection", source="app")
    )
    assert hits.results[0].path == "app/db.py"


async def test_hybrid_source_search_finds_identifiers_and_stays_in_its_set(
    corpus: RunningCorpus,
) -> None:
    app = {
        "billing/jobs.py": "def settle_invoices_nightly(day):\n    return post(fetch(day))\n",
        "billing/README.md": "# Billing\n\nInvoices are settled every night by a scheduled job.\n",
        "web/views.py": "def index(request):\n    return render(request, 'home.html')\n",
    }
    other = {"ops/cron.py": "SCHEDULE = {'settle_invoices_nightly': '0 2 * * *'}\n"}
    await corpus.stub.SyncSource(
        corpus_pb2.SyncSourceRequest(store=STORE, source="app", files=_files(app))
    )
    await corpus.stub.SyncSource(
        corpus_pb2.SyncSourceRequest(store=STORE, source="ops", files=_files(other))
    )
    query = "settle_invoices_nightly"
    fused = await corpus.stub.SearchSource(
        corpus_pb2.SearchSourceRequest(store=STORE, query=query, source="app", hybrid=True)
    )
    top = fused.results[0]
    assert top.path == "billing/jobs.py", [h.path for h in fused.results]
    assert top.keyword_hit and top.score > top.similarity
    assert {h.source for h in fused.results} == {"app"}, "a keyword hit of another set leaked"
    everywhere = await corpus.stub.SearchSource(
        corpus_pb2.SearchSourceRequest(store=STORE, query=query, hybrid=True)
    )
    assert {"billing/jobs.py", "ops/cron.py"} <= {
        h.path for h in everywhere.results if h.keyword_hit
    }
    by_path = await corpus.stub.SearchSource(
        corpus_pb2.SearchSourceRequest(store=STORE, query="views", source="app", hybrid=True)
    )
    assert by_path.results[0].path == "web/views.py", "the file name is searchable"
    plain = await corpus.stub.SearchSource(
        corpus_pb2.SearchSourceRequest(store=STORE, query=query, source="app")
    )
    assert not any(h.keyword_hit for h in plain.results)
    assert all(h.score == h.similarity for h in plain.results)


async def test_source_sync_refuses_paths_outside_the_set(corpus: RunningCorpus) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await corpus.stub.SyncSource(
            corpus_pb2.SyncSourceRequest(
                store=STORE, source="app", files=_files({"../../etc/passwd": "x"})
            )
        )
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await corpus.stub.SyncSource(
            corpus_pb2.SyncSourceRequest(store=STORE, source="app", root="/etc")
        )
    assert caught.value.code() is grpc.StatusCode.PERMISSION_DENIED


async def test_query_document_returns_spans_under_the_budget(corpus: RunningCorpus) -> None:
    body = ("Filler line about nothing much. " * 30 + "\n") * 5
    body += "The retention policy keeps backups for ninety days.\n" + body
    uploaded = await corpus.upload("policy.txt", body.encode())
    reply = await corpus.stub.QueryDocument(
        corpus_pb2.QueryDocumentRequest(
            store=STORE,
            file_id=uploaded.id,
            pattern="ninety days",
            context_chars=40,
            char_budget=60,
        )
    )
    assert reply.matches_total == 1
    span = reply.spans[0]
    assert "ninety" in span.text and len(span.text) > 0
    assert reply.chars_used <= 60
    semantic = await corpus.stub.QueryDocument(
        corpus_pb2.QueryDocumentRequest(
            store=STORE,
            file_id=uploaded.id,
            semantic_query="how long are backups kept?",
            char_budget=2000,
        )
    )
    assert any("ninety" in s.text for s in semantic.spans if s.kind == "semantic")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await corpus.stub.QueryDocument(
            corpus_pb2.QueryDocumentRequest(
                store=STORE, file_id=uploaded.id, pattern="(", regex=True
            )
        )
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT


async def test_hybrid_raw_search_fuses_keyword_evidence_into_the_score(
    corpus: RunningCorpus,
) -> None:
    # The stemmed keyword index finds "retried" for "retries"; the hit's score is its cosine
    # plus 0.4 × keyword evidence (the best keyword hit counts fully) plus the 0.04 boost.
    turns = [
        corpus_pb2.RawTurn(role="user", content="Card refunds are retried five times."),
        corpus_pb2.RawTurn(role="user", content="The weather in Lisbon was lovely."),
        corpus_pb2.RawTurn(role="user", content="We talked about payment providers."),
    ]
    await corpus.stub.AddRawSession(
        corpus_pb2.AddRawSessionRequest(store=STORE, session_id="fusion", turns=turns)
    )
    dense = await corpus.stub.SearchRaw(
        corpus_pb2.SearchRawRequest(store=STORE, query="refund retries", n_results=3)
    )
    hybrid = await corpus.stub.SearchRaw(
        corpus_pb2.SearchRawRequest(store=STORE, query="refund retries", n_results=3, hybrid=True)
    )
    top = hybrid.results[0]
    assert "retried" in top.chunk.content and top.keyword_hit, "the stemmed match leads"
    assert top.score == pytest.approx(top.similarity + 0.4 + 0.04, abs=1e-6)
    assert not any(hit.keyword_hit for hit in dense.results), "dense search reads no keywords"
    assert all(h.score == pytest.approx(h.similarity) for h in hybrid.results if not h.keyword_hit)
