"""The product's vocabulary, one module every tier imports (docs/decisions/0015): the type
libraries (deployment modes, memory types, intents and the seed's type × intent matrices),
the names of pin statuses, caller tiers and authority tiers, and their proto enums.

Retrieval owns the scoring that uses it; authoring types and checks drafts with it; the
gateway teaches it to agents. Nothing here does I/O.
"""

from services.vocabulary.libraries import (
    COMPANION_INTENTS,
    COMPANION_LIBRARY,
    COMPANION_MODE,
    COMPANION_TYPES,
    DEFAULT_INTENTS,
    DEFAULT_LIBRARY,
    DEFAULT_MODE,
    DEFAULT_TYPES,
    GENERAL_INTENT,
    LEGACY_TYPES,
    MODES,
    V2_TYPES,
    TypeLibrary,
    library_for,
)
from services.vocabulary.names import (
    MAX_EXCERPT_CHARS,
    MAX_EXCERPTS_CHARS,
    PIN_ACTIVE,
    PIN_DEPRECATED,
    PIN_PINNED,
    PIN_STATUSES,
    TIER_ADMIN,
    TIER_READ,
    TIER_WRITE,
    TIERS,
    new_drawer_id,
)

__all__ = [
    "COMPANION_INTENTS",
    "COMPANION_LIBRARY",
    "COMPANION_MODE",
    "COMPANION_TYPES",
    "DEFAULT_INTENTS",
    "DEFAULT_LIBRARY",
    "DEFAULT_MODE",
    "DEFAULT_TYPES",
    "GENERAL_INTENT",
    "LEGACY_TYPES",
    "MAX_EXCERPTS_CHARS",
    "MAX_EXCERPT_CHARS",
    "MODES",
    "PIN_ACTIVE",
    "PIN_DEPRECATED",
    "PIN_PINNED",
    "PIN_STATUSES",
    "TIERS",
    "TIER_ADMIN",
    "TIER_READ",
    "TIER_WRITE",
    "V2_TYPES",
    "TypeLibrary",
    "library_for",
    "new_drawer_id",
]
