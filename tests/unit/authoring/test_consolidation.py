"""Consolidation's pure core: complete-link clusters of one type, conflicts flagged by value,
a merge that starts from the drawer standing highest and keeps what the others add."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from services.authoring.core.claims import claim_values
from services.authoring.core.consolidation import (
    Member,
    MergedText,
    Proposal,
    clusters,
    merge,
    merge_request,
    propose,
    read_merge,
)
from services.authoring.core.invoker import render_session
from services.authoring.state import AuthoringState, ConsolidationRecord
from services.runtime.errors import Conflict


def unit(*values: float) -> npt.NDArray[np.float32]:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def member(
    id: str, content: str, *, kind: str = "decision", signed: str | None = None, at: float = 0
) -> Member:
    return Member(id, content, kind, signed, at)


def test_values_read_numbers_negation_and_names_whatever_the_wording() -> None:
    assert claim_values("Retries are capped at five attempts.") == claim_values(
        "We cap retries at 5 attempts."
    )
    assert claim_values("The ledger is exported to Glacier.") != claim_values(
        "The ledger is exported to Backblaze."
    )
    assert "not" in claim_values("The export does not run on Sundays.")
    assert claim_values("There are 1,200 meters.") == {"1200"}


def test_clusters_are_complete_link_and_of_one_type() -> None:
    a, b, c = unit(1, 0, 0), unit(0.95, 0.31, 0), unit(0.8, 0.6, 0)  # a~b 0.95, b~c 0.95, a~c 0.8
    members = [member("a", "x"), member("b", "x"), member("c", "x"), member("d", "x", kind="bug")]
    vectors = np.stack([a, b, c, a])
    assert clusters(members, vectors, 0.9) == [[0, 1]], "c is close to b, not to a; d is a bug"


def test_the_merge_starts_from_the_signed_newest_and_adds_only_what_is_new() -> None:
    old = member("old", "The API returns 404 for missing drawers. Clients retry once.", at=1)
    signed = member(
        "sig",
        "The Architect decided the API returns 404 for missing drawers.",
        signed="returns 404",
        at=0,
    )
    ordered, text, signature = merge([old, signed])
    assert [m.id for m in ordered] == ["sig", "old"]
    assert text == (
        "The Architect decided the API returns 404 for missing drawers. Clients retry once."
    )
    assert signature == "returns 404"


def test_a_cluster_whose_values_differ_is_flagged_not_mergeable() -> None:
    two = member("two", "File uploads are capped at 2 GB per file.")
    three = member("three", "File uploads are capped at 3 GB per file.")
    (proposal,) = propose([two, three], np.stack([unit(1, 0), unit(0.99, 0.14)]), 0.9)
    assert not proposal.mergeable
    assert proposal.conflicts == ("two vs three: 2 → 3",)
    again = propose([three, two], np.stack([unit(0.99, 0.14), unit(1, 0)]), 0.9)[0]
    assert again.id == proposal.id, "the same members make the same proposal id"


def test_a_replayed_job_repeats_nothing_even_after_an_undo(tmp_path: Path) -> None:
    """The state answers what applying a proposal again would repeat: the same job's record
    (a replay, even once undone) or any live one; a new job after an undo may apply again."""
    state = AuthoringState(tmp_path / "store")
    try:
        record = ConsolidationRecord(
            id="cons_1",
            proposal_id="cp_1",
            merged_id="d_m",
            sources={"d_a": "active"},
            link_ids=["l_1"],
            applied_at=datetime(2026, 7, 1, tzinfo=UTC),
            applied_by="w",
            reason="r",
            job_id="job-1",
        )
        state.record_consolidation(record)
        assert state.applied_consolidation("cp_1", "job-2") == record, "live: nobody repeats it"
        state.mark_undone("cons_1", by="admin")
        assert state.applied_consolidation("cp_1", "job-1") is not None, "its own replay"
        assert state.applied_consolidation("cp_1", "job-2") is None, "a new request may"
        with pytest.raises(Conflict):
            state.mark_undone("cons_1", by="admin")
    finally:
        state.close()


# ---------------------------------------------------------------- a model's merge, held


def _proposal() -> Proposal:
    signed = member(
        "sig",
        "The Architect decided the API returns 404 for missing drawers.",
        signed="returns 404 for missing drawers",
        at=2,
    )
    other = member("old", "For a missing drawer the API answers 404; clients retry once.", at=1)
    (proposal,) = propose([signed, other], np.stack([unit(1, 0), unit(0.99, 0.14)]), 0.9)
    return proposal


def _answer(content: str, **fields: object) -> str:
    drawer = {
        "content": content,
        "memory_type": "decision",
        "wing": "projects",
        "room": "projects/api",
        "derived_from": ["sig", "old"],
        **fields,
    }
    return json.dumps({"drawers": [drawer]})


def test_the_model_is_asked_with_the_members_as_chunks_and_what_to_keep() -> None:
    proposal = _proposal()
    request = merge_request(
        proposal, mode="default", wing="projects", room="projects/api", prompt_text="merge"
    )
    assert [c.chunk_id for c in request.chunks] == ["sig", "old"], "the base comes first"
    rendered = render_session(request)
    for line in (
        "Keep memory_type: decision",
        "Keep room: projects/api",
        "Keep signature: returns 404 for missing drawers",
    ):
        assert line in rendered, rendered


def test_a_faithful_merge_from_the_model_is_taken() -> None:
    text = "The Architect decided the API returns 404 for missing drawers; clients retry once."
    merged = read_merge(
        _answer(text), _proposal(), mode="default", merged_by="openai:m", max_chars=500
    )
    assert merged == MergedText(text, "returns 404 for missing drawers", "openai:m")


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("Sure! Here is the merged drawer.", "malformed"),
        (_answer("The Architect decided the API returns 404 for missing drawers.")[:-5],
         "malformed"),
        (_answer("The Architect decided the API returns 410 for missing drawers."), "410"),
        (_answer("The Architect decided the API never returns 404 for drawers."), "adds not"),
        (_answer("The API returns 404 for missing drawers, Priya decided."), "architect"),
        (_answer("The Architect decided the API answers 404 for missing drawers."),
         "signature phrase"),
        (
            _answer("The Architect decided the API returns 404 for missing drawers.",
                    memory_type="observation"),
            "memory_type",
        ),
        (
            json.dumps({"drawers": []}),
            "0 drawers",
        ),
        (_answer("The Architect decided the API returns 404 for missing drawers. " * 9), "over"),
    ],
    ids=["prose", "truncated", "changed-number", "negated", "changed-name", "no-signature",
         "retyped", "nothing", "too-long"],
)  # fmt: skip
def test_a_merge_that_breaks_a_guarantee_is_set_aside_for_the_deterministic_one(
    answer: str, why: str
) -> None:
    proposal = _proposal()
    merged = read_merge(answer, proposal, mode="default", merged_by="openai:m", max_chars=300)
    assert merged.content == proposal.merged and merged.merged_by == "extractive", merged
    (note,) = merged.notes
    assert note.startswith("openai:m's merge was set aside") and why in note.lower(), note


def test_a_proposal_id_depends_on_the_members_as_they_read_not_on_who_merges() -> None:
    first = _proposal()
    assert _proposal().id == first.id
    edited = member("old", "For a missing drawer the API answers 404; clients retry twice.")
    signed = first.members[0]
    (again,) = propose([signed, edited], np.stack([unit(1, 0), unit(0.99, 0.14)]), 0.9)
    assert again.id != first.id, "a drawer edited since makes a new proposal"


def test_a_model_merge_is_kept_once_per_proposal_and_invoker(tmp_path: Path) -> None:
    state = AuthoringState(tmp_path / "store")
    try:
        first = MergedText("one text", None, "openai:m")
        state.keep_merge_draft("cp_1", "openai:m", first)
        state.keep_merge_draft("cp_1", "openai:m", MergedText("another", None, "openai:m"))
        assert state.merge_draft("cp_1", "openai:m") == first, "the first answer stays"
        assert state.merge_draft("cp_1", "anthropic:m") is None
    finally:
        state.close()
