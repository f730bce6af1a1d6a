"""Topical neighbourhoods (services/retrieval/core/topical.py): who discusses the same thing."""

from __future__ import annotations

import numpy as np

from services.retrieval.core.topical import TopicalMember, neighbourhoods, topic_mates


def test_topic_mates_share_room_and_topic_tag() -> None:
    members = [
        TopicalMember("date", room="life/wedding", topic="sister-wedding"),
        TopicalMember("toast", room="life/wedding", topic="sister-wedding"),
        TopicalMember("elsewhere", room="life/work", topic="sister-wedding"),
        TopicalMember("untagged", room="life/wedding"),
        TopicalMember("also-untagged", room="life/wedding"),
    ]
    mates = topic_mates(members)
    assert mates["date"] == {"toast"} and mates["toast"] == {"date"}
    assert mates["elsewhere"] == frozenset(), "the same tag in another room is another topic"
    assert mates["untagged"] == frozenset(), "no tag, no mates: an empty topic is not a topic"


def test_neighbourhoods_add_near_restatements_in_one_wing() -> None:
    members = [
        TopicalMember("a", room="r/1", wing="work"),
        TopicalMember("b", room="r/2", wing="work"),
        TopicalMember("c", room="r/3", wing="life"),
        TopicalMember("d", room="r/1", wing="work"),
    ]
    near = np.array([1.0, 0.1, 0.0])
    vectors = {"a": near, "b": near * 2, "c": near, "d": np.array([0.0, 0.0, 1.0])}
    links = neighbourhoods(members, vectors)
    assert links["a"] == {"b"}, "a and b point the same way in one wing; c is in another wing"
    assert links["d"] == frozenset()
    assert topic_mates(members)["a"] == frozenset(), "vectors never make topic mates"
