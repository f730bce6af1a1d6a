"""Walking typed links (types, time, direction, depth) and reading supersession from them."""

from __future__ import annotations

import pytest

from services.retrieval.core.links import Link, traverse
from services.retrieval.core.supersession import supersession_of


def link(
    id_: str,
    src: str,
    dst: str,
    kind: str = "supersedes",
    start: float = 0.0,
    end: float | None = None,
) -> Link:
    return Link(id_, src, dst, kind, start, end, "tok", "", (), start)


# d3 supersedes d2, which supersedes d1; d2 was caused by d9;
# d4 relates to d3 (from 20, ended at 50).
LINKS = [
    link("a", "d3", "d2", start=10),
    link("b", "d2", "d1", start=5),
    link("c", "d2", "d9", "caused_by", start=5),
    link("d", "d4", "d3", "relates_to", start=20, end=50),
]


def links_of(drawer: str) -> list[Link]:
    return [x for x in LINKS if drawer in (x.from_id, x.to_id)]


def test_breadth_first_both_ways_to_the_depth() -> None:
    one = traverse("d2", links_of, depth=1)
    assert one.drawer_ids == ("d2", "d3", "d1", "d9")
    two = traverse("d2", links_of, depth=2)
    assert two.drawer_ids == ("d2", "d3", "d1", "d9", "d4")
    assert two.depth_of["d4"] == 2 and {x.id for x in two.links} == {"a", "b", "c", "d"}


def test_types_direction_and_time_select_what_is_walked() -> None:
    chain = traverse("d3", links_of, types={"supersedes"}, depth=5, direction="outgoing")
    assert chain.drawer_ids == ("d3", "d2", "d1"), "what d3 supersedes, transitively"
    back = traverse("d1", links_of, types={"supersedes"}, depth=5, direction="incoming")
    assert back.drawer_ids == ("d1", "d2", "d3"), "what supersedes d1, transitively"
    assert "d4" not in traverse("d3", links_of, at=60.0).drawer_ids, "d4's link ended at 50"
    assert "d4" in traverse("d3", links_of, at=30.0).drawer_ids
    assert traverse("d3", links_of, at=7.0).drawer_ids == ("d3",), "nothing held yet at 7"


def test_bad_depth_or_direction_is_refused() -> None:
    with pytest.raises(ValueError, match="depth"):
        traverse("d1", links_of, depth=0)
    with pytest.raises(ValueError, match="depth"):
        traverse("d1", links_of, depth=6)
    with pytest.raises(ValueError, match="direction"):
        traverse("d1", links_of, direction="sideways")


def test_an_ended_link_holds_until_its_end_only() -> None:
    ended = link("e", "x", "y", start=10, end=20)
    assert not ended.holds_at(9) and ended.holds_at(10) and ended.holds_at(19.9)
    assert not ended.holds_at(20)


def test_supersession_reads_only_holding_supersedes_links_and_follows_the_chain() -> None:
    links = [
        link("s1", "v2", "v1", start=0),
        link("s2", "v3", "v2", start=10),
        link("s3", "v9", "v1", start=0, end=5),  # ended: no longer binds
        link("r1", "v7", "v1", "relates_to"),  # another type: never binds
    ]
    at_20 = supersession_of(links, 20.0)
    assert at_20.superseded_by == {"v1": ("v2",), "v2": ("v3",)}
    assert at_20.supersedes == {"v2": ("v1",), "v3": ("v2",)}
    assert at_20.latest("v1") == ["v3"], "the chain ends at the drawer nothing replaces"
    assert at_20.latest("v3") == ["v3"]
    at_7 = supersession_of(links, 7.0)
    assert at_7.latest("v1") == ["v2"], "v3 did not supersede v2 yet at 7"
