"""The source excerpts a composed drawer's arcs carry (keyword evidence for search)."""

from __future__ import annotations

from services.authoring.compose import source_excerpts
from services.vocabulary import MAX_EXCERPT_CHARS, MAX_EXCERPTS_CHARS


def test_an_excerpt_is_the_chunk_text_with_its_whitespace_collapsed() -> None:
    assert source_excerpts(["Maya:  we decided\n\nrefunds go back"]) == [
        "Maya: we decided refunds go back"
    ]


def test_a_long_chunk_is_cut_at_a_word_within_the_limit() -> None:
    [excerpt] = source_excerpts(["word " * 1_000])
    assert len(excerpt) <= MAX_EXCERPT_CHARS
    assert excerpt.endswith("word") and len(excerpt) > MAX_EXCERPT_CHARS - 10


def test_a_drawers_excerpts_stop_at_the_total_limit_one_per_arc() -> None:
    excerpts = source_excerpts(["text " * 1_000] * 6)
    assert len(excerpts) == 6, "every arc keeps its place, an empty excerpt past the total"
    assert sum(map(len, excerpts)) <= MAX_EXCERPTS_CHARS
    assert excerpts[-1] == ""
