"""One runner per dataset: load it into a throw-away store through an `EvalTarget`, ask every
question, score the answers with `metrics`, drop the store. Each returns a plain dict (the
`results.json` section of its set); nothing here knows whether the target is REST or gRPC.

Decisions:

- Rankers are compared on the same store and the same candidates: only `ranker` changes
  between the requests of one question.
- Thesis: topical questions are asked with `min_score = -1` (rank everything; the metric
  decides) and again with the store's default floor, which is how silence is scored and how
  often a right answer would be silenced ("answered at the default floor"). nDCG@5 gives the
  best id gain 2 and the acceptable alternatives gain 1; narrative questions score set
  recall@5 (every listed drawer counts the same).
- SciFact: candidate depth and n_results are 100 (Recall@100 needs a hundred answers); every
  drawer and the search share one instant, so salience^w_sal is exactly 1 and full scoring
  can only differ from hybrid through the dampened signals, which uniform metadata flattens.
- LoCoMo: one companion store per conversation, each session one raw session, one chunk per
  turn, so a hit's (session, ordinal) names the dialog turn. Recall of evidence turns and of
  evidence sessions at 5 and 10, for the dense and the hybrid raw search; then drawers are
  composed from every session (the store's invoker: offline extractive unless configured)
  and searched with full scoring, a drawer's turns being its `derived_from` arcs, so recall@k
  counts the turns the top k drawers were made from. The authored block also says how many
  evidence turns any authored drawer was made from (listed, not searched): the ceiling of
  that mode, which separates what extraction lost from what ranking lost.
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, TypeVar

from engram.v1 import authoring_pb2, common_pb2, corpus_pb2, gateway_pb2, retrieval_pb2

from services.evaluation.locomo import (
    CATEGORIES,
    LocomoConversation,
    LocomoQuestion,
    session_request,
)
from services.evaluation.metrics import (
    ndcg_at,
    recall_at,
    reciprocal_rank,
    right_at_1,
    silence_correct,
)
from services.evaluation.scifact import SCIFACT_NOW, BeirSet, uniform_drawers
from services.evaluation.supersession import SupersessionSet
from services.evaluation.target import EvalTarget, throwaway_store_name, wait_for_job
from services.evaluation.thesis import (
    NOTHING_STORED,
    SILENCE,
    THESIS_NOW,
    UNANSWERABLE_KINDS,
    ThesisQuery,
    ThesisSet,
)
from services.retrieval.pool.records import to_timestamp

T = TypeVar("T")
Progress = Callable[[str], None]

THESIS_RANKERS: dict[str, int] = {
    "cosine": retrieval_pb2.RANKER_MODE_COSINE,
    "hybrid": retrieval_pb2.RANKER_MODE_HYBRID,
    "full": retrieval_pb2.RANKER_MODE_FULL,
    # The full ranker as most agents use it: no intent passed, the engine infers one.
    "full_inferred": retrieval_pb2.RANKER_MODE_FULL,
}
# Rankers asked without the labelled intent; their rows also report intent accuracy.
INFERRED_INTENT_RANKERS = frozenset({"full_inferred"})
SCIFACT_RANKERS: dict[str, int] = {
    "keyword": retrieval_pb2.RANKER_MODE_KEYWORD,
    "dense": retrieval_pb2.RANKER_MODE_DENSE,
    "hybrid": retrieval_pb2.RANKER_MODE_HYBRID,
    "full": retrieval_pb2.RANKER_MODE_FULL,
}
RAW_MODES: dict[str, bool] = {"dense": False, "hybrid": True}
# LoCoMo through drawers composed from the raw sessions, searched with full scoring.
AUTHORED_MODE = "authored"

# Published nDCG@10 on BEIR SciFact (test), for the report.
PUBLISHED_SCIFACT: dict[str, dict[str, Any]] = {
    "BM25": {
        "ndcg_at_10": 0.665,
        "source": "BEIR paper (Thakur et al., 2021), Table 2",
    },
    "all-MiniLM-L6-v2": {
        "ndcg_at_10": 0.674,
        "source": (
            "MTEB results repository (embeddings-benchmark/results, "
            "sentence-transformers__all-MiniLM-L6-v2/1b0428f…/SciFact.json, NDCG@10 0.67393); "
            "other MTEB revisions list different figures"
        ),
    },
}
SCIFACT_DEPTH = 100


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else float("nan")


async def _gather_bounded(jobs: Sequence[Callable[[], Awaitable[T]]], limit: int) -> list[T]:
    """Run `jobs` with at most `limit` in flight; results in job order."""
    gate = asyncio.Semaphore(max(1, limit))

    async def one(job: Callable[[], Awaitable[T]]) -> T:
        async with gate:
            return await job()

    return list(await asyncio.gather(*(one(job) for job in jobs)))


def _search_request(
    query: str,
    ranker: int,
    *,
    n_results: int,
    min_score: float | None,
    intent: str = "",
    as_of: datetime | None = None,
    depth: int = 0,
) -> retrieval_pb2.SearchRequest:
    request = retrieval_pb2.SearchRequest(
        query=query,
        intent=intent,
        n_results=n_results,
        ranker=ranker,  # type: ignore[arg-type]
        candidate_depth=depth,
    )
    if min_score is not None:
        request.min_score = min_score
    if as_of is not None:
        request.as_of.CopyFrom(to_timestamp(as_of))
    return request


async def _ids(target: EvalTarget, store: str, request: retrieval_pb2.SearchRequest) -> list[str]:
    answer = await target.search(store, request)
    return [hit.drawer.id for hit in answer.results]


# ---------------------------------------------------------------- thesis sets


def _thesis_gains(query: ThesisQuery) -> dict[str, float]:
    if query.kind == "narrative":
        return dict.fromkeys(query.relevant, 1.0)
    return {item: (2.0 if index == 0 else 1.0) for index, item in enumerate(query.relevant)}


def _score_thesis(
    query: ThesisQuery, ranked: list[str], floored: list[str], inferred_intent: str | None = None
) -> dict[str, float]:
    intent = {}
    if inferred_intent is not None and query.intent:
        intent = {"intent_correct": 1.0 if inferred_intent == query.intent else 0.0}
    if query.kind in UNANSWERABLE_KINDS:
        return {"silence_correct": silence_correct(floored), **intent}
    scores = {
        **intent,
        "mrr": reciprocal_rank(ranked, query.relevant),
        "ndcg_at_5": ndcg_at(ranked, _thesis_gains(query), 5),
        "answered": 1.0 if floored else 0.0,
    }
    if query.kind == "narrative":
        scores["set_recall_at_5"] = recall_at(ranked, query.relevant, 5)
        scores["set_recall_at_5_floor"] = recall_at(floored, query.relevant, 5)
    else:
        scores["right_at_1"] = right_at_1(ranked, query.relevant)
    return scores


def _summarise_thesis(per_query: list[tuple[ThesisQuery, dict[str, float]]]) -> dict[str, Any]:
    by_kind: dict[str, list[dict[str, float]]] = defaultdict(list)
    for query, scores in per_query:
        by_kind[query.kind].append(scores)
    kinds: dict[str, dict[str, float]] = {}
    for kind, rows in sorted(by_kind.items()):
        names = sorted({name for row in rows for name in row})
        kinds[kind] = {name: _mean(row[name] for row in rows if name in row) for name in names}
        kinds[kind]["n"] = len(rows)
    topical = [s for q, s in per_query if q.kind not in (*UNANSWERABLE_KINDS, "narrative")]
    narrative = [s for q, s in per_query if q.kind == "narrative"]
    silence = [s for q, s in per_query if q.kind == SILENCE]
    nothing_stored = [s for q, s in per_query if q.kind == NOTHING_STORED]
    answerable = [s for q, s in per_query if q.kind not in UNANSWERABLE_KINDS]
    return {
        "right_at_1": _mean(s["right_at_1"] for s in topical),
        "mrr": _mean(s["mrr"] for s in topical),
        "ndcg_at_5": _mean(s["ndcg_at_5"] for s in topical),
        "topical_n": len(topical),
        "silence_accuracy": _mean(s["silence_correct"] for s in silence),
        "silence_n": len(silence),
        "nothing_stored_silence": _mean(s["silence_correct"] for s in nothing_stored),
        "nothing_stored_n": len(nothing_stored),
        "answered_at_default_floor": _mean(s["answered"] for s in answerable),
        "narrative_set_recall_at_5": _mean(s["set_recall_at_5"] for s in narrative),
        "narrative_set_recall_at_5_floor": _mean(s["set_recall_at_5_floor"] for s in narrative),
        "narrative_n": len(narrative),
        "intent_accuracy": _mean(
            s["intent_correct"] for _, s in per_query if "intent_correct" in s
        ),
        "by_kind": kinds,
    }


async def run_thesis(
    target: EvalTarget,
    thesis: ThesisSet,
    *,
    concurrency: int = 4,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """right@1, MRR, nDCG@5, silence accuracy and narrative set recall@5 per ranker."""
    started = time.perf_counter()
    store = throwaway_store_name(f"thesis-{thesis.name}")
    await target.create_store(
        gateway_pb2.StoreSpec(
            name=store,
            deployment_mode=thesis.deployment_mode,  # type: ignore[arg-type]
            description=f"engram eval: {thesis.name} (throw-away)",
        )
    )
    try:
        await target.import_drawers(store, thesis.drawers)
        loaded = time.perf_counter()

        def job(
            query: ThesisQuery, ranker: int, infer: bool
        ) -> Callable[[], Awaitable[dict[str, float]]]:
            intent = "" if infer else query.intent

            async def run() -> dict[str, float]:
                answer = await target.search(
                    store,
                    _search_request(
                        query.text,
                        ranker,
                        n_results=10,
                        min_score=None,
                        intent=intent,
                        as_of=THESIS_NOW,
                    ),
                )
                floored = [hit.drawer.id for hit in answer.results]
                ranked = floored
                if query.kind not in UNANSWERABLE_KINDS:
                    ranked = await _ids(
                        target,
                        store,
                        _search_request(
                            query.text,
                            ranker,
                            n_results=10,
                            min_score=-1.0,
                            intent=intent,
                            as_of=THESIS_NOW,
                        ),
                    )
                return _score_thesis(query, ranked, floored, answer.intent if infer else None)

            return run

        rankers: dict[str, Any] = {}
        for name, ranker in THESIS_RANKERS.items():
            infer = name in INFERRED_INTENT_RANKERS
            scores = await _gather_bounded(
                [job(q, ranker, infer) for q in thesis.queries], concurrency
            )
            rankers[name] = _summarise_thesis(list(zip(thesis.queries, scores, strict=True)))
            if progress:
                progress(f"thesis {thesis.name}: {name} right@1 {rankers[name]['right_at_1']:.3f}")
    finally:
        await target.drop_store(store)
    return {
        "name": thesis.name,
        "deployment": thesis.deployment,
        "drawers": len(thesis.drawers),
        "queries": len(thesis.queries),
        "load_s": round(loaded - started, 2),
        "wall_s": round(time.perf_counter() - started, 2),
        "rankers": rankers,
    }


# ---------------------------------------------------------------- BEIR SciFact


async def run_scifact(
    target: EvalTarget,
    beir: BeirSet,
    *,
    subset: bool = False,
    concurrency: int = 4,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """nDCG@10 and Recall@100 per ranker over uniform metadata, and how often full scoring
    ranked exactly like hybrid."""
    started = time.perf_counter()
    store = throwaway_store_name("scifact")
    await target.create_store(
        gateway_pb2.StoreSpec(name=store, description="engram eval: BEIR SciFact (throw-away)")
    )
    try:
        drawers = uniform_drawers(beir)
        if progress:
            progress(f"scifact: importing {len(drawers)} drawers")
        await target.import_drawers(store, drawers)
        loaded = time.perf_counter()
        if progress:
            progress(f"scifact: imported in {loaded - started:.1f} s")
        query_ids = list(beir.queries)
        rankings: dict[str, list[list[str]]] = {}
        rankers: dict[str, Any] = {}
        for name, ranker in SCIFACT_RANKERS.items():

            def job(query_id: str, ranker: int = ranker) -> Callable[[], Awaitable[list[str]]]:
                request = _search_request(
                    beir.queries[query_id],
                    ranker,
                    n_results=SCIFACT_DEPTH,
                    min_score=-1.0,
                    as_of=SCIFACT_NOW,
                    depth=SCIFACT_DEPTH,
                )
                return lambda: _ids(target, store, request)

            ranker_started = time.perf_counter()
            ranked = await _gather_bounded([job(q) for q in query_ids], concurrency)
            rankings[name] = ranked
            rankers[name] = {
                "ndcg_at_10": _mean(
                    ndcg_at(r, beir.qrels[q], 10) for q, r in zip(query_ids, ranked, strict=True)
                ),
                "recall_at_100": _mean(
                    recall_at(r, list(beir.qrels[q]), 100)
                    for q, r in zip(query_ids, ranked, strict=True)
                ),
                "mrr_at_10": _mean(
                    reciprocal_rank(r[:10], list(beir.qrels[q]))
                    for q, r in zip(query_ids, ranked, strict=True)
                ),
                "search_s": round(time.perf_counter() - ranker_started, 2),
            }
            if progress:
                progress(f"scifact: {name} nDCG@10 {rankers[name]['ndcg_at_10']:.3f}")
    finally:
        await target.drop_store(store)
    full, hybrid = rankings["full"], rankings["hybrid"]
    return {
        "corpus": len(beir.corpus),
        "queries": len(query_ids),
        "subset": subset,
        "load_s": round(loaded - started, 2),
        "wall_s": round(time.perf_counter() - started, 2),
        "rankers": rankers,
        "full_vs_hybrid": {
            "queries": len(query_ids),
            "identical_top100": sum(1 for a, b in zip(full, hybrid, strict=True) if a == b),
            "identical_top10": sum(
                1 for a, b in zip(full, hybrid, strict=True) if a[:10] == b[:10]
            ),
        },
        "published": PUBLISHED_SCIFACT,
    }


# ---------------------------------------------------------------- LoCoMo


def _recall_scores(
    hits: list[tuple[str, int]], evidence: Sequence[str], sessions: frozenset[int]
) -> dict[str, float]:
    """Turn and session recall at 5 and 10 from hits as (dialog id, session number)."""
    turns = [dia for dia, _ in hits]
    scores: dict[str, float] = {}
    for k in (5, 10):
        scores[f"turn_recall_at_{k}"] = recall_at(turns, evidence, k)
        found = {session for _, session in hits[:k]}
        scores[f"session_recall_at_{k}"] = len(found & sessions) / len(sessions)
    return scores


def _drawer_recall_scores(
    cited: list[list[tuple[str, int]]], evidence: Sequence[str], sessions: frozenset[int]
) -> dict[str, float]:
    """Turn and session recall at 5 and 10 drawers: what the top k drawers were authored from
    (each drawer's `derived_from` turns, as (dialog id, session number))."""
    scores: dict[str, float] = {}
    wanted = set(evidence)
    for k in (5, 10):
        found = {turn for drawer in cited[:k] for turn in drawer}
        scores[f"turn_recall_at_{k}"] = len({dia for dia, _ in found} & wanted) / len(wanted)
        scores[f"session_recall_at_{k}"] = len({s for _, s in found} & sessions) / len(sessions)
    return scores


async def _authored_rows(
    target: EvalTarget,
    store: str,
    conversation: LocomoConversation,
    asked: Sequence[LocomoQuestion],
    turn_of: dict[tuple[str, int], tuple[str, int]],
    concurrency: int,
) -> tuple[list[tuple[int, dict[str, float]]], dict[str, float]]:
    """Compose drawers from every session (the store's offline invoker), then ask each
    question of the drawer pool with full scoring; a drawer's hits are its source turns."""
    sessions = [conversation.session_id(s.number) for s in conversation.sessions]
    job = await target.compose(
        store, authoring_pb2.ComposeRequest(session_ids=sessions, allow_new_wing=True)
    )
    await wait_for_job(target, job)

    def job_of(text: str) -> Callable[[], Awaitable[retrieval_pb2.SearchResponse]]:
        request = retrieval_pb2.SearchRequest(
            query=text, n_results=10, min_score=-1.0, ranker=retrieval_pb2.RANKER_MODE_FULL
        )
        return lambda: target.search(store, request)

    answers = await _gather_bounded([job_of(q.question) for q in asked], concurrency)
    rows: list[tuple[int, dict[str, float]]] = []
    surfaced: set[str] = set()
    for question, answer in zip(asked, answers, strict=True):
        surfaced.update(hit.drawer.id for hit in answer.results)
        cited = [_source_turns(hit.drawer, turn_of) for hit in answer.results]
        scores = _drawer_recall_scores(cited, question.evidence, question.evidence_sessions)
        rows.append((question.category, scores))
    # The ceiling: evidence turns that any authored drawer was made from, found or not.
    authored = await _all_drawers(target, store)
    covered = {dia for drawer in authored for dia, _ in _source_turns(drawer, turn_of)}
    evidence = {e for q in asked for e in q.evidence}
    stats = {
        "drawers_authored": float(len(authored)),
        "drawers_surfaced": float(len(surfaced)),
        "evidence_turns": float(len(evidence)),
        "evidence_turns_in_a_drawer": float(len(evidence & covered)),
    }
    return rows, stats


def _source_turns(
    drawer: common_pb2.Drawer, turn_of: dict[tuple[str, int], tuple[str, int]]
) -> list[tuple[str, int]]:
    """The (dialog id, session number) turns a drawer was made from (its derived_from arcs)."""
    return [
        turn_of[key]
        for arc in drawer.derived_from
        if (key := (arc.session_id, arc.ordinal)) in turn_of
    ]


async def _all_drawers(target: EvalTarget, store: str) -> list[common_pb2.Drawer]:
    """Every drawer of the store, page by page."""
    drawers: list[common_pb2.Drawer] = []
    token = ""
    while True:
        page = await target.list_drawers(
            store,
            retrieval_pb2.ListDrawersRequest(
                page=common_pb2.PageRequest(page_size=500, page_token=token)
            ),
        )
        drawers.extend(page.drawers)
        token = page.page.next_page_token
        if not token:
            return drawers


async def _locomo_conversation(
    target: EvalTarget,
    conversation: LocomoConversation,
    questions: int | None,
    concurrency: int,
    authored: bool,
) -> tuple[dict[str, list[tuple[int, dict[str, float]]]], dict[str, float]]:
    store = throwaway_store_name(f"locomo-{conversation.sample_id}")
    # A conversation between two people is companion memory (wants, preferences, opinions).
    await target.create_store(
        gateway_pb2.StoreSpec(
            name=store,
            deployment_mode=common_pb2.DEPLOYMENT_MODE_COMPANION,
            description=f"engram eval: LoCoMo {conversation.sample_id} (throw-away)",
        )
    )
    try:
        turn_of: dict[tuple[str, int], tuple[str, int]] = {}
        for session in conversation.sessions:
            request = session_request(conversation, session)
            answer = await target.add_raw_session(store, request)
            for chunk in answer.chunks:
                turn = session.turns[chunk.ordinal]
                turn_of[(chunk.session_id, chunk.ordinal)] = (turn.dia_id, session.number)
        asked = conversation.questions[:questions] if questions else conversation.questions
        per_mode: dict[str, list[tuple[int, dict[str, float]]]] = {}
        for mode, hybrid in RAW_MODES.items():

            def job(text: str, hybrid: bool = hybrid) -> Callable[[], Awaitable[Any]]:
                request = corpus_pb2.SearchRawRequest(query=text, n_results=10, hybrid=hybrid)
                return lambda: target.search_raw(store, request)

            answers = await _gather_bounded([job(q.question) for q in asked], concurrency)
            rows = []
            for question, answer in zip(asked, answers, strict=True):
                hits = [
                    turn_of[key]
                    for hit in answer.results
                    if (key := (hit.chunk.session_id, hit.chunk.ordinal)) in turn_of
                ]
                scores = _recall_scores(hits, question.evidence, question.evidence_sessions)
                rows.append((question.category, scores))
            per_mode[mode] = rows
        stats: dict[str, float] = {}
        if authored:
            per_mode[AUTHORED_MODE], stats = await _authored_rows(
                target, store, conversation, asked, turn_of, concurrency
            )
        return per_mode, stats
    finally:
        await target.drop_store(store)


def _summarise_locomo(rows: list[tuple[int, dict[str, float]]]) -> dict[str, Any]:
    names = (
        "turn_recall_at_5",
        "turn_recall_at_10",
        "session_recall_at_5",
        "session_recall_at_10",
    )

    def block(selected: list[dict[str, float]]) -> dict[str, float]:
        summary = {name: _mean(s[name] for s in selected) for name in names}
        summary["n"] = len(selected)
        return summary

    by_category = {
        label: block([s for c, s in rows if c == number])
        for number, label in CATEGORIES.items()
        if any(c == number for c, _ in rows)
    }
    return {"overall": block([s for _, s in rows]), "by_category": by_category}


async def run_locomo(
    target: EvalTarget,
    conversations: Sequence[LocomoConversation],
    *,
    questions_per_conversation: int | None = None,
    concurrency: int = 4,
    authored: bool = True,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Recall@5/@10 of evidence turns and sessions through search_raw (dense, hybrid) and,
    with `authored`, through drawers composed from the sessions, per category."""
    started = time.perf_counter()
    modes = [*RAW_MODES, *([AUTHORED_MODE] if authored else [])]
    rows: dict[str, list[tuple[int, dict[str, float]]]] = {mode: [] for mode in modes}
    authored_stats: dict[str, float] = defaultdict(float)
    for conversation in conversations:
        per_mode, stats = await _locomo_conversation(
            target, conversation, questions_per_conversation, concurrency, authored
        )
        for mode, found in per_mode.items():
            rows[mode].extend(found)
        for name, value in stats.items():
            authored_stats[name] += value
        if progress:
            progress(f"locomo {conversation.sample_id}: {len(per_mode['dense'])} questions")
    result: dict[str, Any] = {
        "conversations": len(conversations),
        "sessions": sum(len(c.sessions) for c in conversations),
        "turns": sum(len(s.turns) for c in conversations for s in c.sessions),
        "questions": len(rows["dense"]),
        "skipped_questions": sum(c.skipped_questions for c in conversations),
        "wall_s": round(time.perf_counter() - started, 2),
        "note": "retrieval only, no LLM-judged QA",
        "modes": {mode: _summarise_locomo(found) for mode, found in rows.items()},
    }
    if authored:
        result["authored"] = {
            "invoker": "the store's active invoker (offline extractive by default)",
            **{name: int(value) for name, value in authored_stats.items()},
        }
    return result


# ---------------------------------------------------------------- supersession scenarios

SUPERSESSION_DEPTH = 5  # stale drawers shown / chain recall within the first five results
# The modes a supersession set is asked in: its links absent, then created.
LINK_MODES = ("links_off", "links_on")


def _score_supersession(
    query: ThesisQuery, stale: frozenset[str], ranked: list[str], shown: list[str]
) -> dict[str, float]:
    """`ranked`: every candidate ranked (min_score -1); `shown`: what an agent gets (the
    store's default floor)."""
    if query.kind == "history":
        return {"chain_recall_at_5": recall_at(ranked, query.relevant, SUPERSESSION_DEPTH)}
    scores = {
        "right_at_1": right_at_1(ranked, query.relevant),
        "right_at_1_shown": right_at_1(shown, query.relevant),
    }
    if query.kind == "current":
        top = shown[:SUPERSESSION_DEPTH]
        scores["stale_shown"] = 1.0 if stale & set(top) else 0.0
        above = ranked[: ranked.index(query.relevant[0])] if query.relevant[0] in ranked else ranked
        scores["stale_above_current"] = 1.0 if stale & set(above) else 0.0
    return scores


def _summarise_supersession(
    per_query: list[tuple[ThesisQuery, dict[str, float]]],
) -> dict[str, Any]:
    def mean_of(kind: str, name: str) -> float:
        return _mean(s[name] for q, s in per_query if q.kind == kind and name in s)

    return {
        "current_right_at_1": mean_of("current", "right_at_1"),
        "current_right_at_1_shown": mean_of("current", "right_at_1_shown"),
        "current_stale_shown": mean_of("current", "stale_shown"),
        "current_stale_above": mean_of("current", "stale_above_current"),
        "history_chain_recall_at_5": mean_of("history", "chain_recall_at_5"),
        "stable_right_at_1": mean_of("stable", "right_at_1"),
        "stable_right_at_1_shown": mean_of("stable", "right_at_1_shown"),
        "current_n": sum(1 for q, _ in per_query if q.kind == "current"),
        "history_n": sum(1 for q, _ in per_query if q.kind == "history"),
        "stable_n": sum(1 for q, _ in per_query if q.kind == "stable"),
    }


async def run_supersession(
    target: EvalTarget,
    scenario: SupersessionSet,
    *,
    concurrency: int = 4,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Each query with the full ranker (intent labelled, then inferred), first without the
    set's supersedes links, then with them: how often the current decision is first, how
    often a stale one is shown to the agent or ranked above it, and whether history questions
    still reach the whole chain."""
    thesis = scenario.thesis
    started = time.perf_counter()
    store = throwaway_store_name(f"supersession-{thesis.name}")
    await target.create_store(
        gateway_pb2.StoreSpec(
            name=store,
            deployment_mode=thesis.deployment_mode,  # type: ignore[arg-type]
            description=f"engram eval: {thesis.name} (throw-away)",
        )
    )
    stale = {
        query.id: scenario.older_than(query.relevant[0]) if query.relevant else frozenset()
        for query in thesis.queries
    }

    def job(query: ThesisQuery, infer: bool) -> Callable[[], Awaitable[dict[str, float]]]:
        intent = "" if infer else query.intent

        async def run() -> dict[str, float]:
            def ask(min_score: float | None) -> retrieval_pb2.SearchRequest:
                return _search_request(
                    query.text,
                    retrieval_pb2.RANKER_MODE_FULL,
                    n_results=10,
                    min_score=min_score,
                    intent=intent,
                    as_of=THESIS_NOW,
                )

            shown = await _ids(target, store, ask(None))
            ranked = await _ids(target, store, ask(-1.0))
            return _score_supersession(query, stale[query.id], ranked, shown)

        return run

    created = {drawer.id: drawer.created_at for drawer in thesis.drawers}
    modes: dict[str, Any] = {}
    try:
        await target.import_drawers(store, thesis.drawers)
        for mode in LINK_MODES:
            if mode == "links_on":
                for link in scenario.links:
                    await target.create_link(
                        store,
                        retrieval_pb2.CreateLinkRequest(
                            from_id=link.newer,
                            to_id=link.older,
                            type=retrieval_pb2.LINK_TYPE_SUPERSEDES,
                            reason=link.reason,
                            valid_from=created[link.newer],  # it holds since it was written
                        ),
                    )
            modes[mode] = {}
            for intent_mode, infer in (("given", False), ("inferred", True)):
                scores = await _gather_bounded([job(q, infer) for q in thesis.queries], concurrency)
                summary = _summarise_supersession(list(zip(thesis.queries, scores, strict=True)))
                modes[mode][intent_mode] = summary
                if progress:
                    progress(
                        f"supersession {thesis.name} {mode} ({intent_mode} intent): current "
                        f"right@1 {summary['current_right_at_1']:.3f}, stale shown "
                        f"{summary['current_stale_shown']:.3f}"
                    )
    finally:
        await target.drop_store(store)
    return {
        "name": thesis.name,
        "drawers": len(thesis.drawers),
        "links": len(scenario.links),
        "queries": len(thesis.queries),
        "wall_s": round(time.perf_counter() - started, 2),
        "modes": modes,
    }
