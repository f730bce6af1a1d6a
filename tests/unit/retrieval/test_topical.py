"""Topical neighbourhoods (services/retrieval/core/topical.py): who discusses the same thing."""

from __future__ import annotations

import numpy as np

from services.retrieval.core.topical import TopicalMember, neighbourhoods, topic_mates


def test_topic_mates_share_a_topic_tag_wherever_they_are_filed() -> None:
    # The seed's example: the decision in the project's room and the diary entries about it
    # in a diary room (here another wing) are one topic.
    members = [
        TopicalMember("decision", topic="auction-timeout", wing="projects"),
        TopicalMember("diary", topic="auction-timeout", wing="personal"),
        TopicalMember("same-wing", topic="auction-timeout", wing="projects"),
        TopicalMember("other", topic="tile-rendering", wing="projects"),
        TopicalMember("untagged", wing="projects"),
        TopicalMember("also-untagged", wing="projects"),
    ]
    mates = topic_mates(members)
    assert mates["decision"] == {"diary", "same-wing"}, "one tag is one subject of the store"
    assert mates["diary"] == {"decision", "same-wing"}
    assert mates["other"] == frozenset(), "another tag is another topic"
    assert mates["untagged"] == frozenset(), "no tag, no mates: an empty topic is not a topic"


def test_neighbourhoods_add_near_restatements_in_one_wing() -> None:
    members = [
        TopicalMember("a", wing="work"),
        TopicalMember("b", wing="work"),
        TopicalMember("c", wing="life"),
        TopicalMember("d", wing="work"),
    ]
    near = np.array([1.0, 0.1, 0.0])
    vectors = {"a": near, "b": near * 2, "c": near, "d": np.array([0.0, 0.0, 1.0])}
    links = neighbourhoods(members, vectors)
    assert links["a"] == {"b"}, "a and b point the same way in one wing; c is in another wing"
    assert links["d"] == frozenset()
    assert topic_mates(members)["a"] == frozenset(), "vectors never make topic mates"
