"""The write path's neighbour classification on pairs (eval/sets/updates/pairs.jsonl): for a
drawer already in a room and a new one written beside it, does the write name the old one as
what it may update (`updates`), hand it back as a duplicate or name it (`same_claim`), and
leave it alone (`distinct`)? The rule is the authoring tier's own (`core.neighbours`) with its
settings in force; cosines come from the bundled model, in this process."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from services.authoring.core.neighbours import Neighbour, classify
from services.authoring.settings import AuthoringSettings
from services.authoring.writes import MAX_RELATED

UPDATES_FILE = Path(__file__).resolve().parents[2] / "eval" / "sets" / "updates" / "pairs.jsonl"
RELATIONS = ("updates", "same_claim", "distinct")

Embed = Callable[[list[str]], Awaitable[npt.NDArray[np.float32]]]


def outcome(pair: dict[str, Any], similarity: float, settings: AuthoringSettings) -> str:
    """duplicate | near_copy | related | stored (nothing named)."""
    old, new = pair["existing"], pair["new"]
    found = classify(
        new["content"],
        new["memory_type"],
        [Neighbour(0, old["content"], old["memory_type"], similarity)],
        duplicate=settings.duplicate_similarity,
        related=settings.related_similarity,
        max_related=MAX_RELATED,
    )
    if found.duplicate is not None:
        return "duplicate"
    if found.differing:
        return "near_copy"
    return "related" if found.related else "stored"


def load_pairs(path: Path = UPDATES_FILE) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


async def run_updates(embed: Embed, pairs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    old = await embed([p["existing"]["content"] for p in pairs])
    new = await embed([p["new"]["content"] for p in pairs])
    similarity = (old * new).sum(axis=1)
    settings = AuthoringSettings()
    rows: dict[str, list[str]] = {relation: [] for relation in RELATIONS}
    for pair, cosine in zip(pairs, similarity, strict=True):
        rows[pair["relation"]].append(outcome(pair, float(cosine), settings))
    return {
        "pairs": len(pairs),
        "duplicate_similarity": settings.duplicate_similarity,
        "related_similarity": settings.related_similarity,
        "by_relation": {relation: _rates(found) for relation, found in rows.items()},
    }


def _rates(found: Sequence[str]) -> dict[str, float]:
    n = len(found) or 1
    return {
        "n": float(len(found)),
        "named": sum(f in ("near_copy", "related") for f in found) / n,
        "duplicate": sum(f == "duplicate" for f in found) / n,
        "stored_silently": sum(f == "stored" for f in found) / n,
    }
