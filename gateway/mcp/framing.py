"""The framing schema Engram teaches agents through its MCP tool descriptions.

Both ends of Engram are agents that share an embedder's vocabulary (seed: "the system can
teach its own framing schema via MCP tool descriptions"), so the tool descriptions are where
the authoring discipline lives: the store's type library and intents, what a wing and a room
are, third-person framing, when to sign, and when silence is the right answer.

Every vocabulary here is read from the code that enforces it — the type libraries and the
type × intent matrices (`services/vocabulary/`), the retrieval constants, the pin
statuses, the diary rule, the signature length of the authoring tier — so a type added to a
library reaches the descriptions without anyone copying a list by hand.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from services.authoring.settings import AuthoringSettings
from services.vocabulary import (
    COMPANION_LIBRARY,
    DEFAULT_LIBRARY,
    LEGACY_TYPES,
    PIN_STATUSES,
    V2_TYPES,
    TypeLibrary,
)
from services.vocabulary.libraries import (
    DEPRECATED_VISIBLE_INTENTS,
    DIARY_EXEMPT_INTENTS,
    DIARY_ROOM_MARKER,
)

# The authoring tier's default: what MCP schemas say until the tier has told the gateway its
# setting in force (`EngramTools.follow_rules`); the tier enforces its own setting either way.
DEFAULT_MIN_SIGNATURE_CHARS: Final[int] = int(
    AuthoringSettings.model_fields["min_signature_chars"].default
)


def _join(values: Iterable[str]) -> str:
    return ", ".join(values)


def library_summary(library: TypeLibrary) -> dict[str, object]:
    """A store's vocabulary as data, for engram_store_info's answer."""
    return {
        "mode": library.name,
        "memory_types": list(library.types),
        "intents": list(library.intents),
    }


def _v2_only(library: TypeLibrary) -> list[str]:
    return [t for t in library.types if t in V2_TYPES]


TYPE_LIBRARY: Final[str] = (
    "TYPE LIBRARY. A drawer's memory_type comes from its store's library, by the store's mode "
    "(engram_list_stores shows it). "
    f"default mode (multi-agent work): {_join(_v2_only(DEFAULT_LIBRARY))} (legacy "
    f"{_join(t for t in DEFAULT_LIBRARY.types if t in LEGACY_TYPES)} still accepted). "
    f"companion mode (one companion, one user; speech acts): {_join(COMPANION_LIBRARY.types)}. "
    "Choose the type by the question the memory should answer: the resource "
    "engram://vocabulary/<mode> lists the intents each type ranks highest for."
)

INTENTS: Final[str] = (
    "INTENTS. A search's intent is the kind of question; it weights each type. "
    f"default: {_join(DEFAULT_LIBRARY.intents)}. "
    f"companion: {_join(COMPANION_LIBRARY.intents)}. "
    "Leave it empty to have it inferred (the answer says which was used and how sure)."
)

WINGS_AND_ROOMS: Final[str] = (
    "WINGS AND ROOMS. A wing is a kind of memory (projects, work, philosophy): few and stable. "
    "A room is a long-lived identity inside it, written wing/name (projects/rev-engram): not a "
    "topic, not a session. Reuse the store's (resource engram://stores/<store>/rooms); a new "
    "wing needs "
    f"allow_new_wing. A room whose name contains {DIARY_ROOM_MARKER!r} holds personal notes, "
    f"ranked below canonical answers except for {_join(sorted(DIARY_EXEMPT_INTENTS))} "
    "questions."
)

FRAMING: Final[str] = (
    "FRAMING. A drawer is one memory of 1–3 sentences, written in the third person and "
    "naming who — 'The Architect decided that the gateway only translates.' — so it reads "
    "correctly on its own, to another agent, long after the conversation. Keep the user's own "
    "words (the reader searches with them); never paste a transcript, write in the first "
    "person, or turn a memory into a command ('always do X'): memories guide, the reader "
    "judges."
)


def signing(min_signature_chars: int | None = None) -> str:
    """When to sign, with the signature rule of the authoring tier (its minimum length when
    known; the server-level instructions point at the tool schema, which follows the tier)."""
    least = (
        f"at least {min_signature_chars} characters"
        if min_signature_chars is not None
        else "the least length its schema gives"
    )
    return (
        "SIGNING. Use engram_add_drawer_signed for a canonical claim — a decision, directive, "
        "or settled fact later questions should resolve to — and engram_add_drawer for ambient "
        f"context. The signature is a distinctive phrase of {least}, copied verbatim from the "
        "content (whole words, case kept): keyword search finds the claim by it."
    )


SILENCE: Final[str] = (
    "SILENCE. When nothing stored is relevant enough, the answer is empty on purpose (min_score "
    "sets your own floor, -1 for everything). Empty means nothing relevant is stored: say so or "
    "ask; never invent a memory or stretch a near-miss into an answer."
)

PINS: Final[str] = (
    f"PINS. {_join(PIN_STATUSES)}: pinned is explicit authority, never decays and wins over "
    "active drawers on its topic (admin by default); deprecated drawers are superseded, left "
    f"out of search but for {_join(sorted(DEPRECATED_VISIBLE_INTENTS))} questions."
)

TIERS: Final[str] = (
    "TOKENS. Read tokens search and read; write tokens also write (not the directive type and "
    "no pinning, by default); admin tokens may do all; a token may be scoped to some stores."
)


# What the tool descriptions say in a line where the server instructions say it in full
# (issue 19: the framing schema taught once; every tool listing costs the agent's context).
TYPES_BRIEF: Final[str] = (
    "memory_type comes from the store's library (default or companion mode, engram_store_info); "
    "pick it by the question the memory should answer. The server instructions list each type "
    "with the intents it ranks highest for."
)
INTENTS_BRIEF: Final[str] = (
    "Leave intent empty to infer it from the query (the answer says which was used); pass it "
    "when you know the kind of question."
)
WINGS_BRIEF: Final[str] = (
    "room is wing/name, a long-lived identity; reuse the store's (engram_list_rooms); a new "
    "wing needs allow_new_wing."
)
SILENCE_BRIEF: Final[str] = (
    "Empty means nothing relevant is stored: say so; do not invent a memory."
)
PINS_BRIEF: Final[str] = (
    "pinned: explicit authority, does not decay (admin by default); deprecated: superseded, "
    "left out of search unless asked for."
)


def instructions() -> str:
    """The server-level instructions: the whole framing schema in one text."""
    return "\n\n".join(
        (
            "Engram is a provenance-aware memory: it returns the right memory, not merely a "
            "similar one. Start with engram_list_stores, then engram_prime or engram_search; "
            "every tool but engram_list_stores and engram_job_status takes `store`. Listed "
            "are the memory tools: add ?tools=all to the /mcp URL (engram-mcp: "
            "ENGRAM_MCP_TOOLS=all) for the browse, lifecycle and ingest ones.",
            TYPE_LIBRARY,
            INTENTS,
            WINGS_AND_ROOMS,
            FRAMING,
            signing(),
            SILENCE,
            PINS,
            TIERS,
        )
    )
