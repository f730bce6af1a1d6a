"""Raw memories added at once to one session each keep their own place: none overwrites
another (found by `make soak` with every client writing to one session)."""

from __future__ import annotations

import asyncio

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
