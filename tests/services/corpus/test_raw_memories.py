"""Raw memories added at once to one session each keep their own place: none overwrites
another (found by `make soak` with every client writing to one session)."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from engram.v1 import corpus_pb2

from tests.services.corpus.conftest import STORE, RunningCorpus


async def test_concurrent_adds_to_one_session_are_all_kept(corpus: RunningCorpus) -> None:
    contents = [f"Ticket {n}: the printer on floor {n} jams on duplex jobs." for n in range(12)]
    added = await asyncio.gather(
        *(
            corpus.stub.AddRawMemory(
                corpus_pb2.AddRawMemoryRequest(store=STORE, session_id="shared", content=text)
            )
            for text in contents
        )
    )
    assert len({chunk.id for chunk in added}) == len(contents), "each add its own id"
    stored = await corpus.stub.GetSessionChunks(
        corpus_pb2.GetSessionChunksRequest(store=STORE, session_id="shared")
    )
    assert sorted(c.content for c in stored.chunks) == sorted(contents)
    assert sorted(c.ordinal for c in stored.chunks) == list(range(len(contents)))


def _log(lines: int) -> str:
    return "\n".join(
        f"2026-11-24T10:{n // 60:02d}:{n % 60:02d} worker-{n % 7} retried batch {n} after a "
        f"timeout talking to the ledger (attempt {n % 5 + 1})"
        for n in range(lines)
    )


async def test_a_turn_over_the_raw_limit_is_cut_into_anchored_parts(corpus: RunningCorpus) -> None:
    pasted = _log(600)  # about 60,000 characters: over the 32,768 a raw memory may hold
    assert len(pasted) > corpus.deps.settings.max_raw_chars
    answer = await corpus.stub.AddRawSession(
        corpus_pb2.AddRawSessionRequest(
            store=STORE,
            session_id="long-turn",
            bundle_turn_pairs=True,
            turns=[
                corpus_pb2.RawTurn(role="user", content="Why does the exporter keep retrying?"),
                corpus_pb2.RawTurn(role="user", speaker="Maya", content=pasted),
                corpus_pb2.RawTurn(role="assistant", content="The ledger times out under load."),
            ],
        )
    )
    parts = [c for c in answer.chunks if "part" in c.attributes]
    assert len(parts) >= 30, "cut into parts of at most max_chunk_chars"
    limit = corpus.deps.settings.max_chunk_chars
    encoded = pasted.encode("utf-8")
    for number, chunk in enumerate(parts, start=1):
        assert (
            chunk.attributes["turn"] == "1" and chunk.attributes["part"] == f"{number}/{len(parts)}"
        )
        assert chunk.content.startswith(f"Maya (part {number} of {len(parts)}): ")
        piece = encoded[chunk.byte_start : chunk.byte_end].decode("utf-8")
        assert chunk.content.endswith(piece) and len(piece) <= limit, "the anchor is the text"
    joined = " ".join(encoded[c.byte_start : c.byte_end].decode() for c in parts).split()
    assert joined == pasted.split(), "the parts cover the turn, in order, nothing lost"
    others = [c.content for c in answer.chunks if "part" not in c.attributes]
    assert others == [
        "user: Why does the exporter keep retrying?",
        "assistant: The ledger times out under load.",
    ], "the long turn joins no arc; the reply after it stands on its own"

    found = await corpus.stub.SearchRaw(
        corpus_pb2.SearchRawRequest(
            store=STORE, query="worker-3 retried batch 451", hybrid=True, n_results=3
        )
    )
    assert "batch 451 " in found.results[0].chunk.content, "a part deep in the turn is found"


async def test_a_turn_over_the_turn_limit_is_refused_whole(corpus: RunningCorpus) -> None:
    too_long = "x" * (corpus.deps.settings.max_turn_chars + 1)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await corpus.stub.AddRawSession(
            corpus_pb2.AddRawSessionRequest(
                store=STORE,
                session_id="too-long",
                turns=[corpus_pb2.RawTurn(role="user", content=too_long)],
            )
        )
    assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    sessions = await corpus.stub.ListSessions(corpus_pb2.ListSessionsRequest(store=STORE))
    assert "too-long" not in [s.descriptor.session_id for s in sessions.sessions]
