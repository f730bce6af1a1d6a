"""Topical neighbourhoods (services/retrieval/core/topical.py): who discusses the same thing."""

from __future__ import annotations

import numpy as np

from services.retrieval.core.topical import TopicalMember, neighbourhoods, topic_mates


def test_topic_mates_share_a_topic_tag_in_one_wing() -> None:
    # The seed's example: the decision in the project's room and the diary entries about it
    # in the diary room are one topic.
    members = [
        TopicalMember("decision", room="projects/engram", topic="auth", wing="projects"),
        TopicalMember("diary", room="projects/engram-diary", topic="auth", wing="projects"),
        TopicalMember("elsewhere", room="personal/notes", topic="auth", wing="personal"),
        TopicalMember("untagged", room="projects/engram", wing="projects"),
        TopicalMember("also-untagged", room="projects/engram", wing="projects"),
    ]
    mates = topic_mates(members)
    assert mates["decision"] == {"diary"} and mates["diary"] == {"decision"}
    assert mates["elsewhere"] == frozenset(), "the same tag in another wing is another topic"
    assert mates["untagged"] == frozenset(), "no tag, no mates: an empty topic is not a topic"


def test_without_a_wing_the_room_scopes_the_topic() -> None:
    members = [
        TopicalMember("date", room="life/wedding", topic="sister-wedding"),
        TopicalMember("toast", room="life/wedding", topic="sister-wedding"),
        TopicalMember("elsewhere", room="life/work", topic="sister-wedding"),
        TopicalMember("winged", room="life/wedding", topic="sister-wedding", wing="life"),
        TopicalMember("nowhere", topic="sister-wedding"),
    ]
    mates = topic_mates(members)
    assert mates["date"] == {"toast"} and mates["toast"] == {"date"}
    assert mates["elsewhere"] == frozenset(), "without wings, another room is another topic"
    assert mates["winged"] == frozenset(), "a wing's topic is not a wingless room's"
    assert mates["nowhere"] == frozenset(), "a tag with neither wing nor room scopes nothing"


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
