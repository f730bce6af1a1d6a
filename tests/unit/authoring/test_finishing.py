"""The post-processing every invoker's drafts share (services/authoring/core/finishing.py)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from services.authoring.core import ComposeChunk, DraftProposal, finish_draft, finished_output

DAY = datetime(2026, 2, 11, 9, 30, tzinfo=UTC)
CHUNKS = {
    "c1": ComposeChunk("c1", "Kyle", "Kyle: going to the pho place tomorrow", DAY),
    "c2": ComposeChunk("c2", "assistant", "assistant: enjoy it!", DAY),
    "c3": ComposeChunk("c3", "Kyle", "Kyle: [shares a photo of a bowl] so good", None),
}


def draft(
    content: str, *cited: str, speaker: str = "", signature: str | None = None
) -> DraftProposal:
    return DraftProposal(
        content=content, memory_type="want", wing="life", room="life/food",
        derived_from=cited, speaker=speaker, signature=signature,
    )  # fmt: skip


def test_a_relative_time_is_dated_after_the_sentence_that_says_it() -> None:
    done = finish_draft(
        draft("Kyle is going to the pho place tomorrow. Worth asking how it went.", "c1"), CHUNKS
    )
    assert done.content == (
        "Kyle is going to the pho place tomorrow (as of 2026-02-11). Worth asking how it went."
    )
    assert finish_draft(done, CHUNKS) == done, "finishing twice changes nothing more"


def test_an_undated_chunk_or_a_timeless_claim_stays_as_written() -> None:
    assert finish_draft(draft("Kyle loves pho tomorrow and always.", "c3"), CHUNKS).content == (
        "Kyle loves pho tomorrow and always."
    )
    assert finish_draft(draft("Kyle loves pho.", "c1"), CHUNKS).content == "Kyle loves pho."


def test_stage_directions_leave_the_content_unless_the_signature_needs_them() -> None:
    shown = draft("Kyle loved the bowl [shares a photo of a bowl] at the new place.", "c3")
    assert finish_draft(shown, CHUNKS).content == "Kyle loved the bowl at the new place."
    signed = draft(
        "Kyle decided [shares a photo] on pho.", "c3", signature="decided [shares a photo] on"
    )
    assert finish_draft(signed, CHUNKS).content == signed.content


def test_a_draft_without_a_speaker_takes_the_one_speaker_it_cites() -> None:
    assert finish_draft(draft("Kyle loves pho.", "c1", "c3"), CHUNKS).speaker == "Kyle"
    assert finish_draft(draft("They talked about pho.", "c1", "c2"), CHUNKS).speaker == ""
    named = draft("Kyle loves pho.", "c1", speaker="kyle")
    assert finish_draft(named, CHUNKS).speaker == "kyle", "the model's own answer stands"


def test_a_providers_output_is_parsed_and_finished_like_the_offline_composers() -> None:
    output = json.dumps(
        {
            "drawers": [
                {
                    "content": "Kyle is trying the pho place tomorrow.",
                    "memory_type": "want",
                    "wing": "life",
                    "room": "life/food",
                    "derived_from": ["c1"],
                }
            ]
        }
    )
    parsed = finished_output(output, mode="companion", chunks=list(CHUNKS.values()))
    [done] = parsed.drafts
    assert done.content == "Kyle is trying the pho place tomorrow (as of 2026-02-11)."
    assert done.speaker == "Kyle"
