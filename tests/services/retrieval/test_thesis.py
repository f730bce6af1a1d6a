"""The thesis test: on the "decisions over discussion" sets, full Engram scoring puts the right
drawer first more often than raw cosine on authority and supersession queries, and silence
queries come back empty with the store's default min_score."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from engram.v1 import common_pb2, retrieval_pb2

from services.evaluation.metrics import right_at_1
from services.evaluation.thesis import THESIS_NOW, ThesisSet, load_thesis_set
from services.retrieval.pool.records import to_timestamp
from tests.services.retrieval.conftest import RunningRetrieval

EVAL = Path(__file__).resolve().parents[4] / "shared" / "eval"
RANKERS = {
    "cosine": retrieval_pb2.RANKER_MODE_COSINE,
    "hybrid": retrieval_pb2.RANKER_MODE_HYBRID,
    "full": retrieval_pb2.RANKER_MODE_FULL,
}


async def _load(r: RunningRetrieval, thesis: ThesisSet) -> common_pb2.StoreContext:
    store = common_pb2.StoreContext(
        name=thesis.name.lower().replace(" ", "-")[:60] or "thesis",
        deployment_mode=thesis.deployment_mode,
    )
    await r.stub.IndexDrawers(
        retrieval_pb2.IndexDrawersRequest(store=store, drawers=list(thesis.drawers))
    )
    return store


async def _run(
    r: RunningRetrieval, store: common_pb2.StoreContext, thesis: ThesisSet
) -> dict[str, dict[str, list[float]]]:
    """right@1 per ranker per query kind (silence: 1.0 when empty with the default floor)."""
    scores: dict[str, dict[str, list[float]]] = {name: defaultdict(list) for name in RANKERS}
    for query in thesis.queries:
        for name, ranker in RANKERS.items():
            request = retrieval_pb2.SearchRequest(
                store=store, query=query.text, intent=query.intent, ranker=ranker
            )
            request.as_of.CopyFrom(to_timestamp(THESIS_NOW))
            if query.kind != "silence":
                request.min_score = -1.0  # rank everything; silence uses the store default
            reply = await r.stub.Search(request)
            ids = [hit.drawer.id for hit in reply.results]
            if query.kind == "silence":
                scores[name]["silence"].append(1.0 if not ids else 0.0)
            else:
                scores[name][query.kind].append(right_at_1(ids, query.relevant))
    return scores


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


@pytest.mark.slow
async def test_full_scoring_beats_cosine_on_authority_and_supersession(
    retrieval: RunningRetrieval,
) -> None:
    thesis = load_thesis_set(EVAL / "dev_default.json")
    store = await _load(retrieval, thesis)
    scores = await _run(retrieval, store, thesis)
    kinds = ("authority", "supersession")
    table = {
        name: {kind: _mean(per_kind[kind]) for kind in (*kinds, "situational", "pinned_vs_recent")}
        for name, per_kind in scores.items()
    }
    print("\nright@1 on dev_default:", table)
    full = _mean([v for k in kinds for v in scores["full"][k]])
    cosine = _mean([v for k in kinds for v in scores["cosine"][k]])
    assert full > cosine, f"full scoring right@1 {full:.2f} must beat cosine {cosine:.2f}"


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["dev_default.json", "dev_companion.json"])
async def test_silence_queries_come_back_empty(retrieval: RunningRetrieval, dataset: str) -> None:
    thesis = load_thesis_set(EVAL / dataset)
    store = await _load(retrieval, thesis)
    scores = await _run(retrieval, store, thesis)
    silence = scores["full"]["silence"]
    assert silence, "the set has silence queries"
    assert all(v == 1.0 for v in silence), f"silence queries answered: {silence}"
