"""Forgetting holds across every tier: a drawer deleted and a file walked back (its raw chunks
and the drawers composed from it) stay gone when the retrieval, corpus and authoring tiers all
restart over the same data and the same job queues, and the jobs that wrote them run again
with the same payloads (what an at-least-once queue does after a crash)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from engram.v1 import authoring_pb2, common_pb2, corpus_pb2, retrieval_pb2

from services.authoring import compose
from services.corpus.ingest import INGEST_KIND
from services.runtime.job_proto import job_payload
from tests.services.authoring.conftest import STORE, Stack, clean_queues, running_stack
from tests.services.authoring.test_compose import TRANSCRIPT

pytestmark = pytest.mark.slow

BILLING = "\n".join(
    json.dumps({"speaker": speaker, "text": text, "timestamp": f"2025-03-04T10:0{i}:00Z"})
    for i, (speaker, text) in enumerate(
        [
            ("The_Architect", "We decided that invoices are issued on the first of the month."),
            ("The_Engineer", "The invoice exporter crashes when a customer has no address."),
        ]
    )
).encode()
DRAWER_QUESTION = "what does the API return when a drawer is missing?"
RAW_QUESTION = "when are invoices issued"


async def _drawer_ids(stack: Stack) -> set[str]:
    listed = await stack.retrieval.ListDrawers(
        retrieval_pb2.ListDrawersRequest(store=stack.store("read"))
    )
    return {d.id for d in listed.drawers}


async def _found(stack: Stack) -> tuple[list[str], list[str]]:
    """What a search for the drawer question and a raw search for the billing file return."""
    drawers = await stack.retrieval.Search(
        retrieval_pb2.SearchRequest(
            store=stack.store("read"), query=DRAWER_QUESTION, min_score=-1.0, n_results=50
        )
    )
    raw = await stack.corpus.SearchRaw(
        corpus_pb2.SearchRawRequest(
            store=stack.store("read"), query=RAW_QUESTION, n_results=50, hybrid=True
        )
    )
    return [h.drawer.id for h in drawers.results], [h.chunk.file_id for h in raw.results]


Payloads = tuple[dict[str, Any], dict[str, Any]]


async def _run_the_jobs(
    stack: Stack, file_ids: list[str], payloads: Payloads | None = None
) -> tuple[common_pb2.Job, common_pb2.Job, Payloads]:
    """Ingest, then compose, `file_ids`, through the queues: the jobs' payloads made as the
    tiers make them, or, for a replay, `payloads` delivered again as they were."""
    ingest = (
        payloads[0] if payloads else job_payload(corpus_pb2.IngestJobPayload(file_ids=file_ids))
    )
    job = await stack.corpus_jobs.enqueue(INGEST_KIND, STORE, ingest)
    ingested = await stack.wait(stack.corpus_jobs, job.id)
    if payloads is None:
        request = authoring_pb2.ComposeRequest(
            store=stack.store("write"), file_ids=file_ids, allow_new_wing=True
        )
        payloads = (ingest, await compose.plan(stack.deps, request))
    job = await stack.deps.jobs.enqueue(compose.COMPOSE_KIND, STORE, payloads[1])
    composed = await stack.wait(stack.deps.jobs, job.id)
    assert ingested.state == composed.state == common_pb2.JOB_STATE_DONE, (ingested, composed)
    return ingested, composed, payloads


async def test_what_was_forgotten_stays_gone_after_every_tier_restarts_and_the_jobs_replay(
    tmp_path: Path, embedder_addr: str, redis_url: str
) -> None:
    suffix = uuid.uuid4().hex[:8]
    try:
        async with running_stack(tmp_path, embedder_addr, redis_url, suffix) as first:
            sync = await first.upload("sync.jsonl", TRANSCRIPT)
            billing = await first.upload("billing.jsonl", BILLING)
            *_, payloads = await _run_the_jobs(first, [sync.id, billing.id])
            found_drawers, found_files = await _found(first)
            assert billing.id in found_files, "the billing file's chunks were searchable"
            answer = await first.retrieval.GetDrawer(
                retrieval_pb2.GetDrawerRequest(store=first.store("read"), id=found_drawers[0])
            )
            assert "404" in answer.content, answer

            await first.authoring.DeleteDrawer(
                authoring_pb2.DeleteDrawerRequest(
                    store=first.store("write"), id=answer.id, reason="superseded by a meeting"
                )
            )
            walked = await first.authoring.Walkback(
                authoring_pb2.WalkbackRequest(
                    store=first.store("write"), file_ids=[billing.id], delete_raw=True
                )
            )
            assert walked.drawers_deleted >= 1, walked
            kept = await _drawer_ids(first)
            pinned = sorted(kept)[0]
            await first.authoring.UpdateDrawer(
                authoring_pb2.UpdateDrawerRequest(
                    store=first.store("admin"),
                    id=pinned,
                    pin_status=common_pb2.PIN_STATUS_PINNED,
                    reason="an operator pins it",
                )
            )
            forgotten_drawers, forgotten_files = await _found(first)
            assert answer.id not in kept and answer.id not in forgotten_drawers
            assert billing.id not in forgotten_files

        async with running_stack(tmp_path, embedder_addr, redis_url, suffix) as again:
            assert await _drawer_ids(again) == kept, "a restart changed the drawers"
            reingested, replayed, _ = await _run_the_jobs(again, [], payloads)
            assert replayed.compose.drawers_written == 0, replayed
            assert replayed.compose.drawers_forgotten >= 1, replayed
            assert [e.item_id for e in reingested.errors] == [billing.id], reingested.errors
            assert await _drawer_ids(again) == kept, "a replay brought a drawer back"
            still = await again.retrieval.GetDrawer(
                retrieval_pb2.GetDrawerRequest(store=again.store("read"), id=pinned)
            )
            assert still.pin_status == common_pb2.PIN_STATUS_PINNED, "a replay undid a pin"
            after_drawers, after_files = await _found(again)
            assert answer.id not in after_drawers, "the deleted drawer is searchable again"
            assert billing.id not in after_files, "the walked-back file's chunks came back"
            assert sync.id in after_files or after_drawers, "the rest is still there"
    finally:
        clean_queues(redis_url, suffix)
