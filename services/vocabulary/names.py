"""Names every tier speaks: pin statuses, caller tiers, authority tiers.

Strings, not proto enums: the cores work on these; `services.vocabulary.enums` maps them to
and from the proto enums at the edges.
"""

from __future__ import annotations

import uuid
from typing import Final

# ---------------------------------------------------------------- pin status

PIN_ACTIVE: Final = "active"
PIN_PINNED: Final = "pinned"
PIN_DEPRECATED: Final = "deprecated"
PIN_STATUSES: Final = (PIN_ACTIVE, PIN_PINNED, PIN_DEPRECATED)

# ---------------------------------------------------------------- caller tiers

# What a token may do: read; write (drawers, raw memories, files, compose); admin (everything).
TIER_READ: Final = "read"
TIER_WRITE: Final = "write"
TIER_ADMIN: Final = "admin"
TIERS: Final = (TIER_READ, TIER_WRITE, TIER_ADMIN)

# ---------------------------------------------------------------- authority tiers

# An author's standing in a store's authority profile, strongest first (seed: Authority).
AUTHORITY_DIRECTIVE: Final = "directive"
AUTHORITY_ADVISORY: Final = "advisory"
AUTHORITY_EXECUTION: Final = "execution"
AUTHORITY_WORKER: Final = "worker"
AUTHORITY_TIERS: Final = (
    AUTHORITY_DIRECTIVE,
    AUTHORITY_ADVISORY,
    AUTHORITY_EXECUTION,
    AUTHORITY_WORKER,
)

# ---------------------------------------------------------------- derivation excerpts

# A composed drawer's arcs carry the text of the chunks it was made from, for keyword search
# (DerivedFromArc.excerpt): authoring cuts them to these sizes, retrieval refuses longer.
MAX_EXCERPT_CHARS: Final = 2_000  # one arc
MAX_EXCERPTS_CHARS: Final = 8_000  # all of a drawer's arcs

# ---------------------------------------------------------------- drawer ids


def new_drawer_id() -> str:
    """A fresh drawer id. The writer names it before the write, so a write retried after a
    lost answer (a tier killed between committing and answering) upserts the same drawer
    instead of adding a second one."""
    return f"d_{uuid.uuid4().hex}"
