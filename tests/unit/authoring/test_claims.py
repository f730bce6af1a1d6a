"""The duplicate gate's claim comparison: which near-identical sentences are the same claim."""

from __future__ import annotations

import pytest

from services.authoring.core.claims import claim_difference

SAME = [
    ("The team uses Redis for the queue.", "The team is using Redis for the queue."),
    ("Deploys are blocked on Fridays.", "deploys are blocked on fridays"),
    ("The team does not use Redis.", "The team doesn't use Redis."),
    ("The nightly batch was exported at 02:00.", "At 02:00 the nightly batch was exported."),
]
DIFFERENT = [
    ("Card refunds are retried 103 times.", "Card refunds are retried 105 times.", "103 → 105"),
    ("The export runs at 02:00.", "The export runs at 03:00.", "02:00 → 03:00"),
    ("Release v2.1 fixes INC-4412.", "Release v2.1 fixes INC-4413.", "INC-4412 → INC-4413"),
    ("Maya decided to use Postgres.", "Raj decided to use Postgres.", "Maya → Raj"),
    ("The team uses Redis.", "The team doesn't use Redis.", "+ doesn't"),
    ("Refunds go to the card.", "Refunds never go to the card.", "+ never"),
    ("Refunds go to the card.", "Refunds go to the card within 5 days.", "+ within, 5, days"),
    ("Backups run on 2026-05-01.", "Backups run on 2026-06-01.", "2026-05-01 → 2026-06-01"),
]


@pytest.mark.parametrize(("new", "existing"), SAME)
def test_rewordings_of_one_claim_are_the_same(new: str, existing: str) -> None:
    difference = claim_difference(new, existing)
    assert difference.same, f"{new!r} vs {existing!r}: {difference.describe()}"


@pytest.mark.parametrize(("existing", "new", "described"), DIFFERENT)
def test_one_differing_detail_makes_a_different_claim(
    existing: str, new: str, described: str
) -> None:
    difference = claim_difference(new, existing)
    assert not difference.same, f"{new!r} was read as the same claim as {existing!r}"
    assert difference.describe() == described
    # Symmetric: neither direction reads as a duplicate.
    assert not claim_difference(existing, new).same
