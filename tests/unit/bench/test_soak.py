"""The soak's pure parts: the mix, the written content, how failures are told apart, the
figures, the end-state comparison and the verdict (no stack: timings are never asserted)."""

from __future__ import annotations

import json
import math
import random
from collections import Counter

import httpx

from services.bench.soak import (
    CONTEXT_PACK,
    DRAWER_WRITE,
    KEEPALIVE_EXPIRY_S,
    MIX,
    RAW_ADD,
    SEARCH,
    Comparison,
    ErrorCount,
    IngestCheck,
    Ledger,
    OpFigures,
    Outcome,
    SoakApi,
    SoakReport,
    client_session,
    compare,
    drawer_draft,
    error_kind,
    errors_by_kind,
    failures,
    ingest_document,
    pick_operation,
    raw_memory,
    render,
    summarise,
)
from services.vocabulary.libraries import DEFAULT_TYPES

LIMITED = json.dumps(
    {
        "error": {
            "code": "overloaded",
            "message": "this token is over its rate limit (100 calls a second, bursts of 400): "
            "retry in 0.3 s",
        }
    }
)


def test_the_mix_is_drawn_by_its_weights() -> None:
    rng = random.Random(1)
    drawn = Counter(pick_operation(rng) for _ in range(20_000))
    assert set(drawn) == set(MIX)
    for op, weight in MIX.items():
        assert abs(drawn[op] / 20_000 - weight) < 0.02, op


def test_written_texts_are_unique_valid_drafts() -> None:
    drafts = [drawer_draft(client, seq) for client in range(64) for seq in range(1, 60)]
    assert len({d.content for d in drafts}) == len(drafts), "every write makes its own claim"
    assert all(d.memory_type in DEFAULT_TYPES for d in drafts)
    assert all(d.room.startswith("soak/") and d.room.count("/") == 1 for d in drafts)
    assert all(d.room.removeprefix("soak/") in d.content for d in drafts)
    memories = {raw_memory(client, seq) for client in range(64) for seq in range(1, 60)}
    assert len(memories) == 64 * 59
    assert drawer_draft(3, 7) == drawer_draft(3, 7), "the same (client, seq) gives the same text"


def test_the_ingest_document_has_headed_sections() -> None:
    text = ingest_document(sections=5).decode()
    assert text.startswith("# Soak handbook")
    assert text.count("\n## ") == 5


def test_only_the_token_bucket_429_is_deliberate() -> None:
    kind, deliberate = error_kind(429, LIMITED)
    assert deliberate and kind.startswith("429 overloaded: this token is over its rate limit")
    tier = json.dumps({"error": {"code": "overloaded", "message": "Qdrant is rate limiting"}})
    assert error_kind(429, tier) == ("429 overloaded: Qdrant is rate limiting", False)


def test_error_kinds_fold_numbers_and_name_what_failed() -> None:
    first = json.dumps({"error": {"code": "unavailable", "message": "retrieval: 12.5 s late"}})
    second = json.dumps({"error": {"code": "unavailable", "message": "retrieval: 3 s late"}})
    assert error_kind(503, first) == error_kind(503, second)
    assert error_kind(503, first)[0] == "503 unavailable: retrieval: # s late"
    assert error_kind(502, "Bad Gateway")[0] == "502: Bad Gateway"
    assert error_kind(None, "", "ReadTimeout") == ("no answer: ReadTimeout", False)
    long = json.dumps({"error": {"code": "internal", "message": "x" * 300}})
    assert len(error_kind(500, long)[0]) < 120


def _ok(op: str, ms: float) -> Outcome:
    return Outcome(op, ms, 200)


def test_figures_per_operation_count_apart_and_time_only_successes() -> None:
    outcomes = [
        *(_ok(SEARCH, float(ms)) for ms in range(1, 101)),
        Outcome(SEARCH, 5000.0, None, "no answer: ReadTimeout"),
        Outcome(SEARCH, 1.0, 429, "429 overloaded: …", 1.0, rate_limited=True),
        _ok(DRAWER_WRITE, 40.0),
        Outcome(DRAWER_WRITE, 30_000.0, 503, "503 unavailable: authoring"),
    ]
    figures = {f.op: f for f in summarise(outcomes, wall_s=10.0)}
    assert list(figures) == [SEARCH, DRAWER_WRITE, "all"]
    search = figures[SEARCH]
    assert (search.ok, search.rate_limited, search.errors) == (100, 1, 1)
    assert search.per_s == 10.0
    assert 50 <= search.p50_ms <= 51 and 99 <= search.p99_ms <= 100, "failures are not timed"
    everything = figures["all"]
    assert (everything.ok, everything.rate_limited, everything.errors) == (101, 1, 2)
    assert math.isnan(summarise([Outcome(RAW_ADD, 1.0, 500, "x")], 1.0)[0].p50_ms)


def test_errors_by_kind_leave_out_the_rate_limit() -> None:
    outcomes = [
        Outcome(SEARCH, 1.0, 429, "429 overloaded: limit", 1.0, rate_limited=True),
        Outcome(SEARCH, 1.0, 503, "503 unavailable: x"),
        Outcome(SEARCH, 1.0, 503, "503 unavailable: x"),
        Outcome(CONTEXT_PACK, 1.0, 429, "429 overloaded: tier", 1.0, rate_limited=False),
    ]
    assert errors_by_kind(outcomes) == [
        ErrorCount(SEARCH, "503 unavailable: x", 2, 0.0, 0.0),
        ErrorCount(CONTEXT_PACK, "429 overloaded: tier", 1, 0.0, 0.0),
    ]


def test_errors_say_when_in_the_window_they_happened() -> None:
    outcomes = [Outcome(RAW_ADD, 1.0, None, "no answer: ReadError", at_s=at) for at in (9, 3, 5)]
    assert errors_by_kind(outcomes) == [ErrorCount(RAW_ADD, "no answer: ReadError", 3, 3, 9)]


def test_the_ledger_counts_duplicates_and_writes_that_may_have_landed() -> None:
    ledger = Ledger()
    ledger.drawer_written("d1", duplicate=False)
    ledger.drawer_written("d1", duplicate=True)
    ledger.drawer_written("d9", duplicate=True)
    assert (ledger.new_drawers, ledger.duplicate_answers, ledger.duplicates_of_others) == (1, 2, 1)
    assert set(ledger.drawers) == {"d1", "d9"}
    ledger.outcome(Outcome(DRAWER_WRITE, 1.0, None, "no answer: ReadTimeout"))
    ledger.outcome(Outcome(DRAWER_WRITE, 1.0, 503, "503 unavailable"))
    ledger.outcome(Outcome(DRAWER_WRITE, 1.0, 422, "422 invalid_input"))  # refused: not written
    ledger.outcome(Outcome(RAW_ADD, 1.0, 429, "429", 1.0, rate_limited=True))
    ledger.outcome(Outcome(SEARCH, 1.0, 503, "503 unavailable"))  # not a write
    assert ledger.unanswered_writes == Counter({DRAWER_WRITE: 2})


def test_a_new_write_answered_with_an_id_already_given_is_a_lost_write() -> None:
    ledger = Ledger()
    ledger.raw_added("r1", "s")
    ledger.raw_added("r1", "s")  # two memories, one id: the second overwrote the first
    ledger.drawer_written("d1", duplicate=False)
    ledger.drawer_written("d1", duplicate=True)  # the duplicate gate's answer: not a loss
    assert ledger.collisions == Counter({RAW_ADD: 1})
    ledger.drawer_written("d1", duplicate=False)
    assert ledger.collisions == Counter({RAW_ADD: 1, DRAWER_WRITE: 1})
    report = _report([], compare("drawers", {"d1"}, ["d1"]), drawer_count=1, ledger=ledger)
    assert failures(report) == [
        "1 drawer writes acknowledged as new under an id an earlier drawer write was given "
        "(overwritten: lost)",
        "1 raw adds acknowledged as new under an id an earlier raw add was given "
        "(overwritten: lost)",
    ]


def test_clients_have_their_own_raw_session_unless_shared() -> None:
    assert client_session("soak-1", 3) != client_session("soak-1", 4)
    assert client_session("soak-1", 3, shared=True) == client_session("soak-1", 4, shared=True)


def test_compare_finds_missing_repeated_and_unexplained_ids() -> None:
    clean = compare("drawers", {"a", "b"}, ["b", "a"])
    assert clean.ok and (clean.acknowledged, clean.listed) == (2, 2)
    lost = compare("drawers", {"a", "b", "c"}, ["a", "b", "b", "x"], may_exist=0)
    assert lost.missing == ("c",) and lost.repeated == ("b",) and lost.extra == ("x",)
    assert not lost.ok and lost.unexplained_extra == 1
    timed_out = compare("drawers", {"a"}, ["a", "x"], may_exist=1)
    assert timed_out.ok, "an extra id is explained by a write that got no answer"


def _ingest(**changes: object) -> IngestCheck:
    base: dict[str, object] = {
        "job_state": "JOB_STATE_DONE",
        "job_error": "",
        "job_chunks": 3,
        "file_state": "FILE_STATE_INGESTED",
        "file_chunks": 3,
        "chunk_ids": ("c1", "c2", "c3"),
    }
    base.update(changes)
    return IngestCheck(**base)  # type: ignore[arg-type]


def test_the_ingest_check_wants_a_done_job_and_each_chunk_once() -> None:
    assert _ingest().problems == []
    assert _ingest(job_state="JOB_STATE_FAILED", job_error="boom").problems == [
        "ingest job ended JOB_STATE_FAILED (boom)"
    ]
    assert _ingest(job_state="").problems == ["ingest job ended never started"]
    twice = _ingest(chunk_ids=("c1", "c2", "c3", "c3"))
    assert twice.problems == ["1 chunk ids listed twice"]
    assert "catalog says 4" in _ingest(file_chunks=4).problems[0]
    assert _ingest(job_chunks=0, file_chunks=0, chunk_ids=()).problems, "no chunks is a failure"


def _report(
    errors: list[ErrorCount],
    drawers: Comparison,
    drawer_count: int,
    ledger: Ledger | None = None,
) -> SoakReport:
    return SoakReport(
        url="http://127.0.0.1:8080",
        store="soak-x",
        clients=4,
        seconds=1.0,
        wall_s=1.2,
        figures=[OpFigures("all", 10, 2, sum(e.count for e in errors), 8.3, 12.0, 40.0)],
        errors=errors,
        rate_limited={SEARCH: 2},
        ledger=ledger or Ledger(),
        drawers=drawers,
        drawer_count=drawer_count,
        raw=compare("raw memories", {"r1"}, ["r1"]),
        ingest=_ingest(),
    )


def test_the_verdict_passes_only_a_clean_run() -> None:
    clean = _report([], compare("drawers", {"a"}, ["a"]), drawer_count=1)
    assert failures(clean) == []
    assert render(clean).endswith("PASS")
    assert "No errors other than the rate limit" in render(clean)

    broken = _report(
        [ErrorCount(SEARCH, "503 unavailable: retrieval", 2, 1.5, 7.0)],
        compare("drawers", {"a", "b"}, ["a"]),
        drawer_count=5,
    )
    reasons = failures(broken)
    assert reasons == [
        "2 requests failed other than by the rate limit",
        "1 acknowledged drawers missing",
        "the store counts 5 drawers, its listing has 1",
    ]
    text = render(broken)
    assert "503 unavailable: retrieval" in text and "missing drawers: b" in text
    assert text.splitlines()[-1].startswith("FAIL: ")


async def test_the_api_tells_a_deliberate_429_and_its_retry_after() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        assert request.headers["Authorization"] == "Bearer t0ken"
        if request.url.path.endswith("/search"):
            return httpx.Response(429, content=LIMITED, headers={"Retry-After": "1"})
        return httpx.Response(200, json={"drawer": {"id": "d1"}})

    api = SoakApi(
        "http://soak.test",
        "t0ken",
        connections=2,
        timeout_s=5,
        transport=httpx.MockTransport(answer),
    )
    limited, body = await api.call(SEARCH, "POST", "/v1/stores/s/search", json={})
    assert limited.rate_limited and not limited.error and body is None
    assert (limited.status, limited.retry_after_s) == (429, 1.0)
    written, body = await api.call(DRAWER_WRITE, "POST", "/v1/stores/s/drawers", json={})
    assert written.ok and body == {"drawer": {"id": "d1"}}
    await api.aclose()


def test_the_client_lets_go_of_idle_connections_before_the_gateway_does() -> None:
    # uvicorn closes a kept-alive connection after 5 s idle; reusing one at that moment
    # fails with no answer, which would be the client's doing, not the stack's.
    assert KEEPALIVE_EXPIRY_S < 5.0


async def test_a_request_without_an_answer_is_an_error_that_says_why() -> None:
    def reset(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadError("[Errno 104] Connection reset by peer", request=request)

    api = SoakApi(
        "http://soak.test", "t", connections=1, timeout_s=5, transport=httpx.MockTransport(reset)
    )
    failed, body = await api.call(RAW_ADD, "POST", "/v1/stores/s/raw/memories", json={})
    assert body is None and failed.status is None and failed.error
    assert failed.kind.startswith("no answer: ReadError ([Errno 104] Connection reset by peer)")
    await api.aclose()
