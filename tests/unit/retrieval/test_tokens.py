"""TokenCounter: the bundled WordPiece tokenizer, counted without truncation or special tokens."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.retrieval.tokens import TokenCounter


@pytest.fixture(scope="module")
def counter() -> TokenCounter:
    return TokenCounter.bundled()


LONG_TEXT = " ".join(f"word{n} decided on two-phase commit." for n in range(200))


def test_bundled_counter_loads_the_packaged_tokenizer_file(counter: TokenCounter) -> None:
    assert counter.path.name == "tokenizer.json", f"expected tokenizer.json, got {counter.path}"
    assert counter.path.is_file()


def test_empty_text_counts_zero(counter: TokenCounter) -> None:
    assert counter.count("") == 0


def test_special_tokens_are_not_counted(counter: TokenCounter) -> None:
    # "hello world" is two WordPiece tokens; [CLS] and [SEP] would make it four.
    got = counter.count("hello world")
    assert got == 2, f"expected 2 tokens without [CLS]/[SEP], got {got}"


def test_long_text_is_not_truncated_to_the_model_window(counter: TokenCounter) -> None:
    got = counter.count(LONG_TEXT)
    assert got > 1000, f"expected the full count (>1000), got {got}: the 128-token cut leaked"


def test_short_text_is_not_padded(counter: TokenCounter) -> None:
    got = counter.count("commit")
    assert got == 1, f"expected 1 token, got {got}: padding to 128 leaked"


def test_count_many_equals_count_of_each(counter: TokenCounter) -> None:
    texts = ["", "hello world", LONG_TEXT, "naïve café — 日本語 🎉"]
    assert counter.count_many(texts) == [counter.count(t) for t in texts]
    assert counter.count_many([]) == []


def test_truncate_keeps_at_most_the_asked_tokens(counter: TokenCounter) -> None:
    for limit in (1, 5, 17, 100):
        cut = counter.truncate(LONG_TEXT, limit)
        got = counter.count(cut)
        assert 0 < got <= limit, f"expected 1..{limit} tokens after truncate, got {got}"
        assert LONG_TEXT.startswith(cut), "expected a prefix of the original text"


def test_truncate_returns_short_text_unchanged(counter: TokenCounter) -> None:
    assert counter.truncate("hello world", 2) == "hello world"
    assert counter.truncate("hello world", 0) == ""


def test_truncate_never_splits_a_character(counter: TokenCounter) -> None:
    text = "日本語のテキスト 🎉🎉 naïve café"
    for limit in range(1, counter.count(text)):
        cut = counter.truncate(text, limit)
        assert text.startswith(cut), f"limit {limit}: {cut!r} is not a prefix"
        cut.encode("utf-8")  # a split surrogate or half character would fail here
        assert counter.count(cut) <= limit


def test_truncate_rejects_negative_limits(counter: TokenCounter) -> None:
    with pytest.raises(ValueError, match="max_tokens"):
        counter.truncate("hello", -1)


def test_missing_tokenizer_file_says_what_to_do(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="reinstall the bundled model"):
        TokenCounter(tmp_path / "nope.json")
