"""Size tiers: inclusive decimal thresholds, a fixed hard limit, a message that helps."""

from __future__ import annotations

import pytest

from services.corpus.core import HARD_LIMIT_BYTES, SizeTier, SizeTierPolicy, check_size
from services.runtime.errors import TooLarge


@pytest.mark.parametrize(
    ("size", "tier"),
    [
        (0, SizeTier.FULL),
        (499_999, SizeTier.FULL),
        (500_000, SizeTier.FULL),
        (500_001, SizeTier.STREAMED),
        (7_999_999, SizeTier.STREAMED),
        (8_000_000, SizeTier.STREAMED),
        (8_000_001, SizeTier.DOCUMENT),
        (50_000_000, SizeTier.DOCUMENT),
    ],
)
def test_tier_boundaries_are_inclusive_upper_bounds(size: int, tier: SizeTier) -> None:
    assert SizeTierPolicy().tier_for(size) is tier


def test_one_byte_over_the_hard_limit_is_refused_with_the_exact_size() -> None:
    with pytest.raises(TooLarge) as caught:
        check_size(50_000_001, "dump.jsonl")
    assert caught.value.message == (
        "dump.jsonl is 50,000,001 bytes; the limit is 50 MB: split it or upload a summary"
    )
    with pytest.raises(TooLarge):
        SizeTierPolicy().tier_for(50_000_001)


def test_the_message_says_the_size_the_limit_and_what_to_do() -> None:
    with pytest.raises(TooLarge) as caught:
        check_size(61_000_000, "archive.md")
    assert caught.value.message == (
        "archive.md is 61.0 MB; the limit is 50 MB: split it or upload a summary"
    )


def test_the_hard_limit_itself_passes() -> None:
    check_size(HARD_LIMIT_BYTES, "edge.md")


def test_thresholds_are_settings_but_the_hard_limit_is_not() -> None:
    policy = SizeTierPolicy(full_max=1_000, stream_max=2_000)
    assert policy.tier_for(1_000) is SizeTier.FULL
    assert policy.tier_for(1_001) is SizeTier.STREAMED
    assert policy.tier_for(2_001) is SizeTier.DOCUMENT
    with pytest.raises(ValueError, match="stream_max"):
        SizeTierPolicy(full_max=1_000, stream_max=HARD_LIMIT_BYTES + 1)
    with pytest.raises(ValueError, match="full_max"):
        SizeTierPolicy(full_max=3_000, stream_max=2_000)


def test_tier_values_are_the_catalog_strings() -> None:
    assert [t.value for t in SizeTier] == ["full", "streamed", "document"]
    assert SizeTier("streamed") is SizeTier.STREAMED
