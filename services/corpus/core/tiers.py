"""Size tiers (seed 004): how much of a file is chunked, decided once from its size.

Sizes are decimal, as the issue writes them: 1 KB = 1,000 bytes, 1 MB = 1,000,000 bytes.
Every upper bound is inclusive:

============================  ==========  ==================================================
size in bytes                 tier        what happens
============================  ==========  ==================================================
0 … 500,000                   FULL        the full body is chunked
500,001 … 8,000,000           STREAMED    synopsis kept; chunks streamed from the full body
8,000,001 … 50,000,000        DOCUMENT    synopsis chunked; body kept as a raw document
50,000,001 and more           (refused)   TooLarge before anything is written
============================  ==========  ==================================================

The first two thresholds are settings (`SizeTierPolicy`); the hard limit is fixed on purpose
(`HARD_LIMIT_BYTES`): it bounds what one request can make the tier hold, read and store, and
no deployment gets to raise it by accident.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from services.runtime.errors import TooLarge

HARD_LIMIT_BYTES: Final = 50_000_000
DEFAULT_FULL_MAX_BYTES: Final = 500_000
DEFAULT_STREAM_MAX_BYTES: Final = 8_000_000


class SizeTier(StrEnum):
    """Stored as its value in the catalog; maps to the proto's SIZE_TIER_* by name."""

    FULL = "full"
    STREAMED = "streamed"
    DOCUMENT = "document"


def format_size(size: int) -> str:
    """A size for people, in decimal units: "61.0 MB", "734.2 KB", "12 bytes"."""
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f} MB"
    if size >= 1_000:
        return f"{size / 1_000:.1f} KB"
    return f"{size} bytes"


def check_size(size: int, name: str) -> None:
    """Raise TooLarge if `size` is over the fixed hard limit (50 MB); nothing else."""
    if size < 0:
        raise ValueError(f"a size cannot be negative: {size}")
    if size <= HARD_LIMIT_BYTES:
        return
    shown = format_size(size)
    if round(size / 1_000_000, 1) * 1_000_000 <= HARD_LIMIT_BYTES:
        # "50.0 MB; the limit is 50 MB" would read as a contradiction: be exact instead.
        shown = f"{size:,} bytes"
    raise TooLarge(
        f"{name} is {shown}; the limit is {HARD_LIMIT_BYTES // 1_000_000} MB: "
        "split it or upload a summary",
        field="size",
    )


@dataclass(frozen=True, slots=True)
class SizeTierPolicy:
    """The two configurable thresholds, in bytes, inclusive (see the module docstring)."""

    full_max: int = DEFAULT_FULL_MAX_BYTES
    stream_max: int = DEFAULT_STREAM_MAX_BYTES

    def __post_init__(self) -> None:
        if not 0 < self.full_max <= self.stream_max <= HARD_LIMIT_BYTES:
            raise ValueError(
                "size tiers need 0 < full_max <= stream_max <= "
                f"{HARD_LIMIT_BYTES:,} bytes, got full_max={self.full_max:,} "
                f"and stream_max={self.stream_max:,}"
            )

    def tier_for(self, size: int) -> SizeTier:
        """The tier of a file of `size` bytes; TooLarge past the hard limit."""
        check_size(size, "the file")
        if size <= self.full_max:
            return SizeTier.FULL
        if size <= self.stream_max:
            return SizeTier.STREAMED
        return SizeTier.DOCUMENT
