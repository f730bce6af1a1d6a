"""Consolidation: which drawers of a room say the same thing, and the one drawer that says it
once. Pure: the caller gathers a room's live drawers with their vectors, applies a proposal
and keeps what undoes it.

- A cluster is complete-link: every two members are of the same memory type and at
  `min_similarity` cosine or closer (conservative by default, 0.9), so a chain of small steps
  never joins two drawers that are not close themselves. Pinned and deprecated drawers are
  never members (a pin binds as written; a deprecated drawer is history).
- Members whose values differ (`claims.claim_values`: numbers, negation, names) contradict
  each other: the cluster is proposed for review and never merged.
- The merged text starts from the member that stands highest (signed first, then the
  newest) and adds, in order, every sentence of the others that asserts something the text
  does not yet assert (its claim words are not already there). The base's signature stays
  when its phrase survives. That is the offline, deterministic merge; the text depends only
  on the members.
- A store whose invoker is a model asks it for the merge instead (`merge_request`), and
  `read_merge` holds the answer to the deterministic merge's guarantees: one drawer of the
  base's type, every value of the members (numbers, negation, names) and nothing else, the
  base's signature phrase kept verbatim, within the length rule. An answer that breaks one
  is set aside with a note saying which, and the deterministic merge stands.
- A proposal's id is a digest of its members and their texts, so asking again proposes the
  same ids whoever writes the merge, a changed drawer makes a new proposal, and applying a
  proposal is idempotent.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
import numpy.typing as npt

from services.authoring.core.claims import claim_terms, claim_values
from services.authoring.core.invoker import (
    ComposeChunk,
    ComposeInput,
    MalformedOutput,
    parse_output,
)

EXTRACTIVE_MERGE: Final = "extractive"  # who wrote a merge that no model wrote
DEFAULT_MIN_SIMILARITY: Final = 0.9
LEAST_MIN_SIMILARITY: Final = 0.8  # below this, "the same thing" is a guess
_SENTENCE: Final = re.compile(r"[^.!?]+[.!?]*")


@dataclass(frozen=True, slots=True)
class Member:
    id: str
    content: str
    memory_type: str
    signature: str | None
    created_at: float  # epoch seconds


@dataclass(frozen=True, slots=True)
class Proposal:
    id: str
    members: tuple[Member, ...]  # the base first
    merged: str
    signature: str | None
    conflicts: tuple[str, ...]  # "a vs b: 3 → 5"; a proposal with any is never merged
    least_similarity: float

    @property
    def mergeable(self) -> bool:
        return not self.conflicts

    @property
    def base(self) -> Member:
        return self.members[0]


def clusters(
    members: Sequence[Member], vectors: npt.NDArray[np.float32], min_similarity: float
) -> list[list[int]]:
    """Groups of two or more member indexes, complete-link at `min_similarity`, same type."""
    similarity = vectors @ vectors.T if len(members) else np.zeros((0, 0), dtype=np.float32)
    groups: list[list[int]] = []
    for index, member in enumerate(members):
        for group in groups:
            if members[group[0]].memory_type == member.memory_type and all(
                similarity[index, other] >= min_similarity for other in group
            ):
                group.append(index)
                break
        else:
            groups.append([index])
    return [group for group in groups if len(group) > 1]


def _standing(member: Member) -> tuple[bool, float, str]:
    """Signed first, then the newest; the id breaks ties, so any order of input agrees."""
    return (member.signature is not None, member.created_at, member.id)


def conflicts(members: Sequence[Member]) -> tuple[str, ...]:
    """Every pair whose values differ, described ("a vs b: 3 → 5")."""
    found = []
    for i, left in enumerate(members):
        for right in members[i + 1 :]:
            a, b = claim_values(left.content), claim_values(right.content)
            if a != b:
                old = ", ".join(sorted(a - b)) or "—"
                new = ", ".join(sorted(b - a)) or "—"
                found.append(f"{left.id} vs {right.id}: {old} → {new}")
    return tuple(found)


def merge(members: Sequence[Member]) -> tuple[tuple[Member, ...], str, str | None]:
    """(members with the base first, the merged text, its signature)."""
    ordered = tuple(sorted(members, key=_standing, reverse=True))
    base = ordered[0]
    text = " ".join(base.content.split())
    said = {key for key, _ in claim_terms(text)}
    for member in ordered[1:]:
        for sentence in _SENTENCE.findall(member.content):
            sentence = " ".join(sentence.split())
            terms = {key for key, _ in claim_terms(sentence)}
            if sentence and terms and not terms <= said:
                text = (
                    f"{text} {sentence}"
                    if text.endswith((".", "!", "?"))
                    else f"{text}. {sentence}"
                )
                said |= terms
    signature = base.signature if base.signature and base.signature in text else None
    return ordered, text, signature


def propose(
    members: Sequence[Member], vectors: npt.NDArray[np.float32], min_similarity: float
) -> list[Proposal]:
    """Every cluster of `members` as a proposal (contradicting ones flagged), largest first."""
    similarity = vectors @ vectors.T if len(members) else np.zeros((0, 0), dtype=np.float32)
    proposals = []
    for group in clusters(members, vectors, min_similarity):
        chosen = [members[i] for i in group]
        ordered, text, signature = merge(chosen)
        least = min(float(similarity[a, b]) for a in group for b in group if a < b)
        digest = hashlib.sha256(
            "\x00".join(
                f"{m.id}\x01{m.content}" for m in sorted(chosen, key=lambda m: m.id)
            ).encode()
        ).hexdigest()
        proposals.append(
            Proposal(
                id=f"cp_{digest[:16]}",
                members=ordered,
                merged=text,
                signature=signature,
                conflicts=conflicts(ordered),
                least_similarity=least,
            )
        )
    return sorted(proposals, key=lambda p: (-len(p.members), p.id))


# ---------------------------------------------------------------- a merge written by a model


@dataclass(frozen=True, slots=True)
class MergedText:
    """The text a proposal would write, who wrote it, and why a model's text was set aside."""

    content: str
    signature: str | None
    merged_by: str  # "extractive", or the invoker and model ("openai:gpt-4o")
    notes: tuple[str, ...] = ()


def extractive_merge(proposal: Proposal, *, notes: Sequence[str] = ()) -> MergedText:
    """The deterministic merge of `proposal`, with any notes on why it stands."""
    return MergedText(proposal.merged, proposal.signature, EXTRACTIVE_MERGE, tuple(notes))


def merge_request(
    proposal: Proposal, *, mode: str, wing: str, room: str, prompt_text: str
) -> ComposeInput:
    """What a model is asked for one proposal: its members as the chunks (the base first),
    the type, wing, room and signature to keep named in the header."""
    base = proposal.base
    lines = [f"Keep memory_type: {base.memory_type}", f"Keep wing: {wing}", f"Keep room: {room}"]
    if proposal.signature is not None:
        lines.append(f"Keep signature: {proposal.signature}")
    return ComposeInput(
        session_id=f"consolidation {proposal.id}",
        chunks=[ComposeChunk(m.id, "", m.content) for m in proposal.members],
        prompt_text=prompt_text,
        mode=mode,
        wings=(wing,),
        rooms=(room,),
        header_lines=lines,
    )


def _words(text: str) -> set[str]:
    return {key for key, _ in claim_terms(text)} | {
        surface.lower() for _, surface in claim_terms(text)
    }


def _value_changes(members: Sequence[Member], content: str) -> list[str]:
    """What `content` asserts that no member does, or drops that the members assert. A name
    counts as kept when its word appears in any case (a model may start a sentence with it)."""
    said = frozenset().union(*(claim_values(m.content) for m in members))
    written = claim_values(content)
    written_words = _words(content)
    member_words = frozenset().union(*(_words(m.content) for m in members))
    dropped = sorted(v for v in said - written if v not in written_words)
    added = sorted(v for v in written - said if v not in member_words)
    changes = []
    if dropped:
        changes.append(f"drops {', '.join(dropped)}")
    if added:
        changes.append(f"adds {', '.join(added)}")
    return changes


def read_merge(
    text: str, proposal: Proposal, *, mode: str, merged_by: str, max_chars: int
) -> MergedText:
    """A model's answer for `proposal`, held to the deterministic merge's guarantees; the
    deterministic merge, with a note saying why, when the answer breaks one."""

    def set_aside(reason: str) -> MergedText:
        return extractive_merge(proposal, notes=[f"{merged_by}'s merge was set aside: {reason}"])

    ids = [m.id for m in proposal.members]
    try:
        parsed = parse_output(text, mode=mode, chunk_ids=ids)
    except MalformedOutput as error:
        return set_aside(error.message)
    if len(parsed.drafts) != 1:
        problems = f" ({'; '.join(parsed.problems)})" if parsed.problems else ""
        return set_aside(f"it proposed {len(parsed.drafts)} drawers, not one{problems}")
    (draft,) = parsed.drafts
    content = " ".join(draft.content.split())
    if draft.memory_type != proposal.base.memory_type:
        return set_aside(
            f"its memory_type is {draft.memory_type}, the members' is {proposal.base.memory_type}"
        )
    if not content:
        return set_aside("its content is empty")
    if len(content) > max_chars:
        return set_aside(f"it is {len(content)} characters, over the {max_chars} allowed")
    changes = _value_changes(proposal.members, content)
    if changes:
        return set_aside(f"it {' and '.join(changes)}")
    if proposal.signature is not None and proposal.signature not in content:
        return set_aside(f"it drops the signature phrase {proposal.signature!r}")
    return MergedText(content, proposal.signature, merged_by)
