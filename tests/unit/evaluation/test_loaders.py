"""The dataset loaders: the real shared files (skipped when ../shared/eval is absent) and the
LoCoMo quirks by hand."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from engram.v1 import common_pb2

from services.evaluation.locomo import (
    load_locomo,
    parse_date,
    parse_evidence,
    session_of,
    session_request,
)
from services.evaluation.scifact import load_beir, uniform_drawers
from services.evaluation.thesis import (
    NOTHING_STORED,
    NOTHING_STORED_DIR,
    load_thesis_set,
    nothing_stored_files,
)
from tests.evaluation.tiny import write_tiny_data

EVAL = Path(__file__).resolve().parents[4] / "shared" / "eval"
needs_shared = pytest.mark.skipif(not EVAL.exists(), reason=f"no shared eval data at {EVAL}")


@needs_shared
def test_thesis_sets_load_with_their_kinds() -> None:
    default = load_thesis_set(EVAL / "dev_default.json")
    companion = load_thesis_set(EVAL / "dev_companion.json")
    assert (len(default.drawers), len(default.queries)) == (97, 37)
    assert (len(companion.drawers), len(companion.queries)) == (40, 15)
    assert companion.deployment_mode == common_pb2.DEPLOYMENT_MODE_COMPANION
    assert sum(q.kind == "silence" for q in default.queries) == 5
    assert any(q.kind == "narrative" for q in companion.queries)


@needs_shared
def test_scifact_test_split_loads() -> None:
    beir = load_beir(EVAL / "scifact")
    assert len(beir.corpus) == 5183
    assert len(beir.queries) == len(beir.qrels) == 300
    assert all(doc in beir.corpus for docs in beir.qrels.values() for doc in docs)
    drawers = uniform_drawers(beir)
    kinds = {(d.memory_type, d.room, d.added_by, d.pin_status, d.salience) for d in drawers}
    assert len(kinds) == 1, f"metadata must be uniform, got {kinds}"
    assert len({d.created_at.seconds for d in drawers}) == 1
    small = beir.subset(10, 50)
    assert len(small.queries) == 10 and all(
        d in small.corpus for q in small.qrels.values() for d in q
    )


@needs_shared
def test_locomo_loads_sessions_speakers_dates_and_questions() -> None:
    conversations = load_locomo(EVAL / "locomo" / "locomo10.json")
    assert len(conversations) == 10
    first = conversations[0]
    assert first.speakers == ("Caroline", "Melanie")
    assert first.sessions[0].occurred_at == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert first.sessions[0].turns[0].dia_id == "D1:1"
    questions = [q for c in conversations for q in c.questions]
    assert {q.category for q in questions} == {1, 2, 3, 4}, "category 5 is left out"
    assert len(questions) == 1536, "categories 1-4 less the four without evidence"
    known = {t.dia_id for c in conversations for s in c.sessions for t in s.turns}
    assert all(e in known for q in questions for e in q.evidence)


def test_evidence_entries_with_several_or_stray_ids() -> None:
    assert parse_evidence(["D8:6; D9:17", "D", "D:11:26", "D1:3", "D1:3"]) == (
        "D8:6",
        "D9:17",
        "D1:3",
    )
    assert parse_evidence(["D22:1 D22:2"]) == ("D22:1", "D22:2")
    assert session_of("D12:4") == 12
    with pytest.raises(ValueError, match="dialog id"):
        session_of("D:4")


def test_dates_parse_or_are_none() -> None:
    assert parse_date("7:09 pm on 1 October, 2023") == datetime(2023, 10, 1, 19, 9, tzinfo=UTC)
    assert parse_date("") is None and parse_date("yesterday") is None


def test_a_session_becomes_one_chunk_per_turn_with_speakers_and_date(tmp_path: Path) -> None:
    data = write_tiny_data(tmp_path)
    (conversation,) = load_locomo(data / "locomo" / "locomo10.json")
    assert conversation.skipped_questions == 1
    multi = next(q for q in conversation.questions if q.category == 1)
    assert multi.evidence == ("D1:2", "D2:1") and multi.evidence_sessions == {1, 2}
    request = session_request(conversation, conversation.sessions[0])
    assert request.session_id == "conv-tiny-s1" and not request.bundle_turn_pairs
    assert [t.speaker for t in request.turns] == ["Ana", "Ben", "Ana", "Ben"]
    assert request.turns[3].content == "Look at him. [shares a photo of a beagle on a sofa]"
    assert request.turns[0].occurred_at.ToDatetime(tzinfo=UTC) == datetime(
        2023, 5, 8, 13, 56, tzinfo=UTC
    )


def test_nothing_stored_questions_join_their_thesis_set() -> None:
    own = Path(__file__).resolve().parents[3] / "eval" / "sets" / "thesis"
    sets = sorted(own.glob("*.json"))
    assert sets, f"no thesis sets under {own}"
    for path in sets:
        extra = nothing_stored_files(path)
        assert extra, f"{path.name}: no nothing-stored questions in {NOTHING_STORED_DIR}"
        plain = load_thesis_set(path)
        joined = load_thesis_set(path, extra_queries=extra)
        added = joined.queries[len(plain.queries) :]
        assert joined.drawers == plain.drawers
        assert len(added) >= 18, f"{path.name}: {len(added)} nothing-stored questions"
        assert all(q.kind == NOTHING_STORED and not q.relevant for q in added), path.name


def test_repeated_query_ids_are_refused(tmp_path: Path) -> None:
    own = Path(__file__).resolve().parents[3] / "eval" / "sets" / "thesis" / "default_a.json"
    (tmp_path / "again.json").write_text(own.read_text())
    with pytest.raises(ValueError, match="query ids repeat"):
        load_thesis_set(own, extra_queries=[tmp_path / "again.json"])
