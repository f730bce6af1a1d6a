"""Context pack: compact headers, honest budget counting, greedy skipping, first-item overflow."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from services.retrieval.core.packing import (
    TRUNCATION_MARK,
    PackCandidate,
    SessionInfo,
    _greedy,
    build_pack,
    render_header,
)
from services.retrieval.tokens import TokenCounter

DAY = datetime(2026, 4, 14, 9, 30, tzinfo=UTC)


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter.bundled()


def words_count(text: str) -> int:
    """A transparent counter for arithmetic tests: one token per whitespace-separated word."""
    return len(text.split())


def words_truncate(text: str, max_tokens: int) -> str:
    return " ".join(text.split()[:max_tokens])


def candidate(
    drawer_id: str,
    content: str,
    *,
    score: float = 0.5,
    signature: str | None = None,
    sessions: tuple[SessionInfo, ...] = (),
    pin_status: str = "active",
    room: str = "projects/engram",
) -> PackCandidate:
    return PackCandidate(
        drawer_id=drawer_id,
        content=content,
        memory_type="decision",
        pin_status=pin_status,
        room=room,
        date=DAY,
        signature=signature,
        score=score,
        sessions=sessions,
    )


# ---------------------------------------------------------------- headers


def test_header_carries_type_pin_room_date_and_signature() -> None:
    header = render_header(candidate("d1", "x", signature="two-phase commit", pin_status="pinned"))
    expected = '[decision · pinned · projects/engram · 2026-04-14 · sig: "two-phase commit"]'
    assert header == expected, f"expected {expected!r}, got {header!r}"


def test_header_leaves_out_empty_room_and_missing_signature() -> None:
    header = render_header(candidate("d1", "x", room=""))
    assert header == "[decision · active · 2026-04-14]", f"got {header!r}"


def test_header_shows_the_utc_day_of_an_aware_date() -> None:
    late_evening_west = datetime(2026, 4, 14, 22, 0, tzinfo=timezone(timedelta(hours=-5)))
    base = candidate("d1", "x")
    shifted = PackCandidate(**{**base.__dict__, "date": late_evening_west})
    assert "2026-04-15" in render_header(shifted), "expected the UTC day, 2026-04-15"


def test_header_describes_sessions_without_raw_chunk_ids() -> None:
    session = SessionInfo(
        session_id="s-123",
        raw_chunk_count=14,
        span_start=datetime(2026, 3, 1, tzinfo=UTC),
        span_end=datetime(2026, 3, 3, tzinfo=UTC),
        origin_kind="claude_code",
    )
    header = render_header(candidate("d1", "x", sessions=(session,)))
    assert header.endswith(" · from session s-123 (14 raw chunks, 2026-03-01..2026-03-03)]"), (
        f"expected the session descriptor at the end, got {header!r}"
    )


def test_header_lists_at_most_three_sessions_and_counts_the_rest() -> None:
    sessions = tuple(SessionInfo(f"s-{n}", 1, None, None) for n in range(5))
    header = render_header(candidate("d1", "x", sessions=sessions))
    assert "from sessions s-0 (1 raw chunk), s-1 (1 raw chunk), s-2 (1 raw chunk), +2 more" in (
        header
    ), f"got {header!r}"


def test_header_stays_on_one_line_whatever_the_signature_holds() -> None:
    header = render_header(candidate("d1", "x", signature='a "quoted"\nphrase'))
    assert "\n" not in header
    assert "sig: \"a 'quoted' phrase\"" in header, f"got {header!r}"


# ---------------------------------------------------------------- budget


def test_items_keep_ranking_order_and_fit_the_budget() -> None:
    cands = [candidate(f"d{n}", "one two three") for n in range(3)]
    pack = build_pack(cands, token_budget=1000, count_tokens=words_count, truncate=words_truncate)
    assert [item.drawer_id for item in pack.items] == ["d0", "d1", "d2"]
    assert pack.omitted == 0
    assert pack.text.count("one two three") == 3


def test_tokens_used_equals_the_count_of_the_rendered_text(counter: TokenCounter) -> None:
    session = SessionInfo("s-9", 3, DAY - timedelta(days=2), DAY, "dialog")
    cands = [
        candidate(
            f"d{n}", f"Drawer {n}: the team chose option {n} — naïve café.", sessions=(session,)
        )
        for n in range(12)
    ]
    for budget in (30, 64, 120, 400):
        pack = build_pack(
            cands, token_budget=budget, count_tokens=counter.count, truncate=counter.truncate
        )
        honest = counter.count(pack.text)
        assert pack.tokens_used == honest, f"budget {budget}: {pack.tokens_used} != {honest}"
        assert pack.tokens_used <= budget, f"budget {budget} exceeded: {pack.tokens_used}"
        assert len(pack.items) + pack.omitted == len(cands)


def test_separators_are_counted_when_they_cost_tokens() -> None:
    cands = [candidate("a", "x"), candidate("b", "y")]
    header_words = len(render_header(cands[0]).split())
    one_item = header_words + 1
    # "\n---\n" is one word to the counter: two items need one more than twice one item.
    pack = build_pack(
        cands,
        token_budget=2 * one_item,
        count_tokens=words_count,
        truncate=words_truncate,
        separator="\n---\n",
    )
    assert [i.drawer_id for i in pack.items] == ["a"], "the separator should not fit"
    assert pack.omitted == 1


def test_an_item_that_does_not_fit_is_skipped_and_a_smaller_one_still_fits() -> None:
    big = candidate("big", " ".join(["w"] * 50))
    small = candidate("small", "tiny")
    first = candidate("first", "short one")
    header_words = len(render_header(first).split())
    budget = 2 * header_words + 2 + 1 + 5
    pack = build_pack(
        [first, big, small], token_budget=budget, count_tokens=words_count, truncate=words_truncate
    )
    assert [item.drawer_id for item in pack.items] == ["first", "small"]
    assert pack.omitted == 1
    assert not any(item.truncated for item in pack.items)


def test_first_item_too_big_is_truncated_with_a_mark(counter: TokenCounter) -> None:
    long = candidate("long", " ".join(f"sentence {n} about the design." for n in range(100)))
    later = candidate("later", "short")
    pack = build_pack(
        [long, later], token_budget=60, count_tokens=counter.count, truncate=counter.truncate
    )
    assert [item.drawer_id for item in pack.items][:1] == ["long"]
    item = pack.items[0]
    assert item.truncated, "expected the oversized best item to be cut, not dropped"
    assert item.content.endswith(TRUNCATION_MARK)
    assert long.content.startswith(item.content.removesuffix(TRUNCATION_MARK))
    assert pack.tokens_used == counter.count(pack.text) <= 60


def test_truncated_first_item_uses_as_much_of_the_budget_as_it_can() -> None:
    long = candidate("long", " ".join(f"w{n}" for n in range(100)))
    header_words = len(render_header(long).split())
    budget = header_words + 10
    pack = build_pack(
        [long], token_budget=budget, count_tokens=words_count, truncate=words_truncate
    )
    # The mark is glued to the last word, so ten content words fit exactly.
    assert pack.items[0].content == " ".join(f"w{n}" for n in range(10)) + TRUNCATION_MARK
    assert pack.tokens_used == budget


def test_budget_below_every_header_gives_an_empty_pack() -> None:
    cands = [candidate("a", "x"), candidate("b", "y")]
    pack = build_pack(cands, token_budget=2, count_tokens=words_count, truncate=words_truncate)
    assert pack.items == ()
    assert pack.text == ""
    assert pack.tokens_used == 0
    assert pack.omitted == 2


def test_later_items_are_never_truncated() -> None:
    first = candidate("first", "fits")
    long = candidate("long", " ".join(["w"] * 100))
    header_words = len(render_header(first).split())
    pack = build_pack(
        [first, long],
        token_budget=header_words * 2 + 10,
        count_tokens=words_count,
        truncate=words_truncate,
    )
    assert [item.drawer_id for item in pack.items] == ["first"]
    assert pack.omitted == 1


def test_item_tokens_count_its_own_block() -> None:
    cands = [candidate("a", "one two"), candidate("b", "three")]
    pack = build_pack(cands, token_budget=500, count_tokens=words_count, truncate=words_truncate)
    for item in pack.items:
        expected = words_count(item.header + "\n" + item.content)
        assert item.tokens == expected, f"{item.drawer_id}: expected {expected}, got {item.tokens}"


def test_items_carry_sessions_and_scores() -> None:
    session = SessionInfo("s-1", 2, None, None)
    pack = build_pack(
        [candidate("a", "x", score=0.9, sessions=(session,))],
        token_budget=500,
        count_tokens=words_count,
        truncate=words_truncate,
    )
    assert pack.items[0].sessions == (session,)
    assert pack.items[0].score == 0.9


def test_no_candidates_give_an_empty_pack() -> None:
    pack = build_pack([], token_budget=10, count_tokens=words_count, truncate=words_truncate)
    assert (pack.items, pack.text, pack.tokens_used, pack.omitted) == ((), "", 0, 0)
    assert pack.token_budget == 10


@pytest.mark.parametrize("budget", [0, -5])
def test_budget_must_be_positive(budget: int) -> None:
    with pytest.raises(ValueError, match="token_budget must be a positive"):
        build_pack(
            [candidate("a", "x")],
            token_budget=budget,
            count_tokens=words_count,
            truncate=words_truncate,
        )


def quarter_chars(text: str) -> int:
    """A counter that is not additive: ceil(chars / 4), so joining blocks can save tokens."""
    return -(-len(text) // 4)


@pytest.mark.parametrize("budget", [20, 45, 90, 200, 1000])
def test_a_non_additive_counter_still_gets_exact_counts(budget: int) -> None:
    cands = [candidate(f"d{n}", "x" * (3 + 7 * n)) for n in range(8)]
    pack = build_pack(
        cands, token_budget=budget, count_tokens=quarter_chars, truncate=words_truncate
    )
    honest = quarter_chars(pack.text)
    assert pack.tokens_used == honest, f"budget {budget}: {pack.tokens_used} != {honest}"
    assert pack.tokens_used <= budget
    assert len(pack.items) + pack.omitted == len(cands)


def test_the_fast_pass_matches_the_exact_pass_for_wordpiece(counter: TokenCounter) -> None:
    session = SessionInfo("s-1", 4, DAY, DAY, "dialog")
    cands = [
        candidate(
            f"d{n}", "Two-phase commit, per the (v2) design. " * (1 + n % 5), sessions=(session,)
        )
        for n in range(30)
    ]
    for budget in (50, 300, 1200):
        fast, exact = (
            _greedy(
                cands,
                token_budget=budget,
                count_tokens=counter.count,
                truncate=counter.truncate,
                separator="\n\n",
                additive=additive,
            )
            for additive in (True, False)
        )
        assert fast == exact, f"budget {budget}: the additive pass diverged from the exact one"
        assert fast.tokens_used == counter.count(fast.text)
