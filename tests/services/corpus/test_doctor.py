"""CheckStore (`engram doctor`) on the corpus tier: a clean store reports nothing; drift put
into each part by hand (raw keyword rows, the in-memory chunk index, the catalog's counts,
missing and unreferenced bodies) is found, mended by a repair, and gone after it."""

from __future__ import annotations

import hashlib
import os
import time

from engram.v1 import common_pb2, corpus_pb2

from services.corpus import store as corpus_parts
from services.corpus.store import raw as raw_parts
from tests.services.corpus.conftest import STORE, RunningCorpus
from tests.services.corpus.test_ingest import MARKDOWN, _ingest


async def _check(corpus: RunningCorpus, *, repair: bool = False) -> common_pb2.StoreCheck:
    return await corpus.stub.CheckStore(common_pb2.CheckStoreRequest(store=STORE, repair=repair))


def _by_part(check: common_pb2.StoreCheck) -> dict[str, set[str]]:
    parts: dict[str, set[str]] = {}
    for drift in check.drift:
        parts.setdefault(drift.part, set()).update(drift.examples)
    return parts


async def test_corpus_drift_is_found_then_repaired(corpus: RunningCorpus) -> None:
    md = await corpus.upload("engram.md", MARKDOWN)
    lost = await corpus.upload("lost.md", b"# Lost\n\nA body that a disk failure will take.\n")
    await _ingest(corpus, [md.id])
    clean = await _check(corpus)
    assert clean.tier == "corpus" and list(clean.parts) == list(corpus_parts.CHECKED_PARTS)
    assert not clean.drift, f"a fresh store has no drift: {list(clean.drift)}"

    store = corpus.deps.stores.get(STORE.name)
    chunks = sorted(m.id for m in store.raw.of_file(md.id))
    assert len(chunks) >= 3
    raw_keywords = store.raw.collection.keywords
    assert raw_keywords is not None
    raw_keywords.delete([chunks[0]])  # a chunk without its keyword row
    store.raw._meta.pop(chunks[1])  # the in-memory index lost a chunk
    store.catalog.update(md.id, chunk_count=99)  # the catalog's count is wrong
    store.blobs.path_of(lost.sha256).unlink()  # a body gone from the disk
    stray = hashlib.sha256(b"a body no file refers to").hexdigest()
    stray_path = store.blobs.path_of(stray)
    stray_path.parent.mkdir(parents=True, exist_ok=True)
    stray_path.write_bytes(b"a body no file refers to")
    hour_ago = time.time() - 3600
    os.utime(stray_path, (hour_ago, hour_ago))
    fresh = hashlib.sha256(b"an upload still being catalogued").hexdigest()
    store.blobs.path_of(fresh).parent.mkdir(parents=True, exist_ok=True)
    store.blobs.path_of(fresh).write_bytes(b"an upload still being catalogued")

    reported = await _check(corpus)
    assert _by_part(reported) == {
        raw_parts.PART_KEYWORDS: {chunks[0]},
        raw_parts.PART_INDEX: {chunks[1]},
        corpus_parts.PART_CHUNKS: {md.id},
        corpus_parts.PART_BODIES: {lost.id, stray},
    }, f"each injected drift is named where it lives (a fresh body is left alone): {reported}"

    repaired = await _check(corpus, repair=True)
    assert all(d.repaired for d in repaired.drift) and len(repaired.drift) == 5
    assert not (await _check(corpus)).drift, "nothing is left after a repair"

    after = await corpus.stub.GetFile(corpus_pb2.GetFileRequest(store=STORE, file_id=md.id))
    assert after.chunk_count == len(chunks), "the count is the chunks stored"
    gone = await corpus.stub.GetFile(corpus_pb2.GetFileRequest(store=STORE, file_id=lost.id))
    assert gone.state == corpus_pb2.FILE_STATE_FAILED and "upload the file again" in gone.last_error
    assert not stray_path.exists() and store.blobs.exists(fresh)
    assert {m.id for m in store.raw.of_file(md.id)} == set(chunks)
