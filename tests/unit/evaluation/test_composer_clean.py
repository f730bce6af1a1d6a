"""The composer sets' "clean text" check: what a careful author would never leave in a drawer."""

from __future__ import annotations

import pytest

from services.authoring.core import DraftProposal
from services.evaluation.composer import is_clean

SPEAKERS = ["Maya", "coding-agent"]


def _draft(content: str) -> DraftProposal:
    return DraftProposal(
        content=content, memory_type="observation", wing="w", room="w/r", derived_from=("s:0",)
    )


@pytest.mark.parametrize(
    "content",
    [
        "Maya noted that the nightly export finished at 02:00 without errors.",
        "Maya signed the lease. Moving into the new place on the 15th.",
        "Okayama is where Maya's team runs the second plant.",
        "The team noted that the well-tested parser ships with 4.12 on Thursday.",
        "Maya noted that oh-so-careful reviews slowed the release down.",
        "Maya noted about 14 stops per shift in zone C.",
        "Maya noted that about 20% of orders fail at checkout.",
        "Ops-agent reported that 3.8.0 changed the logger config to read LOG_LEVEL.",
        "Earl noted that under 15.5% goes to pit 1 and straight to the concrete bins.",
    ],
)
def test_a_third_person_claim_is_clean(content: str) -> None:
    assert is_clean(_draft(content), SPEAKERS), content


@pytest.mark.parametrize(
    "content",
    [
        "Maya mentioned that okay Maya signed the lease on Friday.",
        "Maya mentioned that nah, Maya will stick with San Marzanos.",
        "Maya noted that the cat hides for a week. Oh wait, the rent is lower.",
        "Yeah the rollout went out to every region last night.",
        "Maya noted that coding-agent: Option A is simpler to build.",
        "Maya asked whether the export finished before the audit?",
        "I signed the lease on Friday and moved in on the 15th.",
        "Maya signed the lease.",
        "maya noted that the export finished at 02:00 without errors.",
        "Maya noted that about 14 stops per shift in zone C.",
        "Coding-agent reported that all on the Prusa bank B, all PETG jobs.",
        "Valentina mentioned that in Medellín Valentina never owned a coat lol.",
    ],
)
def test_interjections_labels_questions_first_person_and_fragments_are_not(content: str) -> None:
    assert not is_clean(_draft(content), SPEAKERS), content
