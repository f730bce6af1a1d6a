"""How much of its sources a drawer may carry (`DerivedFromArc.excerpt`, decision 0027): one
rule for every way a drawer comes in, IndexDrawers and JSONL imports alike."""

from __future__ import annotations

from collections.abc import Sequence

from engram.v1 import common_pb2

from services.vocabulary import MAX_EXCERPT_CHARS, MAX_EXCERPTS_CHARS


def excerpt_problem(arcs: Sequence[common_pb2.DerivedFromArc]) -> str | None:
    """Why a drawer's derivation excerpts are too long, or None when they fit."""
    lengths = [len(arc.excerpt) for arc in arcs]
    for index, length in enumerate(lengths):
        if length > MAX_EXCERPT_CHARS:
            return (
                f"derived_from[{index}].excerpt is {length} characters; an excerpt of the "
                f"chunk a drawer was made from holds at most {MAX_EXCERPT_CHARS}"
            )
    if sum(lengths) > MAX_EXCERPTS_CHARS:
        return (
            f"the derived_from excerpts hold {sum(lengths)} characters; a drawer's hold at "
            f"most {MAX_EXCERPTS_CHARS} in all"
        )
    return None
