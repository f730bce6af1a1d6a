"""A new drawer's neighbours: the same claim is a duplicate, a near-copy with another number is
named, a differently worded drawer of the room close enough is named, the rest is left alone."""

from __future__ import annotations

from services.authoring.core.neighbours import Neighbour, classify

NEW = "Retries of the payment webhook are capped at 5 attempts."


def found(*neighbours: Neighbour[str]) -> tuple[str | None, list[str], list[str]]:
    result = classify(NEW, "decision", neighbours, duplicate=0.95, related=0.65, max_related=2)
    return result.duplicate, [i for i, _ in result.differing], [i for i, _ in result.related]


def test_the_same_claim_is_the_duplicate() -> None:
    same = Neighbour(
        "same", "The payment webhook retries are capped at 5 attempts.", "decision", 0.97
    )
    assert found(same) == ("same", [], [])
    exact = Neighbour("exact", "anything", "observation", 0.2, same_hash=True)
    assert found(exact)[0] == "exact", "an identical text is a duplicate whatever its type"


def test_a_near_copy_with_another_value_is_named_not_returned() -> None:
    other = Neighbour(
        "three", "Retries of the payment webhook are capped at 3 attempts.", "decision", 0.98
    )
    assert found(other) == (None, ["three"], [])


def test_a_related_drawer_of_any_type_is_named_closest_first_and_bounded() -> None:
    near = [
        Neighbour("a", "We allow three webhook retries.", "directive", 0.80),
        Neighbour("b", "Webhook retries stop after three tries.", "fact", 0.70),
        Neighbour("c", "Webhook retries are logged.", "observation", 0.66),
        Neighbour("old", "Webhook retries were unlimited.", "decision", 0.9, deprecated=True),
        Neighbour("far", "Webhooks are signed with HMAC.", "decision", 0.55),
    ]
    assert found(*near) == (None, [], ["a", "b"])
