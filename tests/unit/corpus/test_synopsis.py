"""Synopsis: 8 KiB verbatim cut at a character, an h1/h2 outline of at most 2 KiB."""

from __future__ import annotations

from services.corpus.core import HeadingCollector, SynopsisBuilder, build_synopsis
from services.corpus.core.synopsis import OUTLINE_MAX_BYTES, SYNOPSIS_HEAD_BYTES


def test_head_is_the_first_8_kib_cut_at_a_character_boundary() -> None:
    body = ("x" + "€" * 4000).encode()  # the 8 KiB mark falls inside a €
    synopsis = build_synopsis(body[:9000], [])
    assert synopsis == "x" + "€" * 2730
    assert len(synopsis.encode()) <= SYNOPSIS_HEAD_BYTES


def test_outline_lists_h1_and_h2_only_after_the_head() -> None:
    synopsis = build_synopsis(b"# Guide\nbody\n", [(1, "Guide"), (2, "Install"), (1, "Ops")])
    assert synopsis == "# Guide\nbody\n\n## Outline\n- Guide\n  - Install\n- Ops"


def test_no_headings_means_no_outline() -> None:
    assert build_synopsis("plain text\n", []) == "plain text\n"


def test_a_long_outline_is_cut_at_a_line_and_says_how_many_are_left() -> None:
    headings = [(1 + i % 2, f"Heading number {i}") for i in range(500)]
    synopsis = build_synopsis(b"head", headings)
    outline = synopsis.split("\n\n## Outline\n", 1)[1]
    assert len(outline.encode()) <= OUTLINE_MAX_BYTES
    last = outline.split("\n")[-1]
    shown = outline.count("Heading number")
    assert last == f"… ({500 - shown} more headings)"


def test_the_collector_skips_fences_and_deeper_headings_and_counts_what_it_drops() -> None:
    collector = HeadingCollector()
    for line in [b"# One\n", b"```\n", b"# not me\n", b"```\n", b"### too deep\n", b"## Two\n"]:
        collector.feed(line)
    assert collector.headings == [(1, "One"), (2, "Two")]
    many = HeadingCollector(max_bytes=100)
    for index in range(1000):
        many.feed(f"# H{index}\n")
    assert many.total == 1000
    assert len(many.headings) < 30
    synopsis = build_synopsis("", many.headings, total_headings=many.total)
    assert synopsis.endswith(f"… ({1000 - synopsis.count('- H')} more headings)")


def test_the_builder_keeps_the_head_one_verbatim_run() -> None:
    builder = SynopsisBuilder(outline=True)
    builder.feed("# Title\n")
    builder.feed("a" * 9000 + "\n")  # cut: nothing after it may join the head
    builder.feed("## Later\n")
    assert builder.head_full
    synopsis = builder.synopsis()
    head, outline = synopsis.split("\n\n## Outline\n")
    assert head == ("# Title\n" + "a" * 9000)[:SYNOPSIS_HEAD_BYTES]
    assert outline == "- Title\n  - Later"
