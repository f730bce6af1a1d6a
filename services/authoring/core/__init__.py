"""The authoring tier's pure core: drawer rules, the invoker interface, and the prompts.

No I/O and no gRPC here: the servicer translates `DrawerDraft` to `DraftInput`, runs an
`Invoker`, and writes what `validate_draft` lets through.
"""

from services.authoring.core._text import (
    choose_signature,
    normalise_space,
    signature_in,
    split_sentences,
    third_person,
)
from services.authoring.core.extractive import (
    EXTRACTIVE_MODEL,
    EXTRACTIVE_NAME,
    ExtractiveInvoker,
    choose_room,
    compose_json,
    extract_drafts,
)
from services.authoring.core.finishing import finish_draft, finished_output
from services.authoring.core.invoker import (
    ComposeChunk,
    ComposeInput,
    DraftProposal,
    Invoker,
    MalformedOutput,
    ParsedDrafts,
    parse_output,
    render_session,
)
from services.authoring.core.prompts import (
    COMPANION_PROMPT_VERSION,
    DEFAULT_PROMPT_VERSION,
    PromptTemplate,
    default_prompt,
    diff_prompts,
)
from services.authoring.core.rules import (
    DEFAULT_DRAFT_RULES,
    DEFAULT_WRITE_POLICY,
    DraftInput,
    DraftRules,
    Validation,
    WritePolicy,
    shape_warnings,
    validate_draft,
)

__all__ = [
    "COMPANION_PROMPT_VERSION",
    "DEFAULT_DRAFT_RULES",
    "DEFAULT_PROMPT_VERSION",
    "DEFAULT_WRITE_POLICY",
    "EXTRACTIVE_MODEL",
    "EXTRACTIVE_NAME",
    "ComposeChunk",
    "ComposeInput",
    "DraftInput",
    "DraftProposal",
    "DraftRules",
    "ExtractiveInvoker",
    "Invoker",
    "MalformedOutput",
    "ParsedDrafts",
    "PromptTemplate",
    "Validation",
    "WritePolicy",
    "choose_room",
    "choose_signature",
    "compose_json",
    "default_prompt",
    "diff_prompts",
    "extract_drafts",
    "finish_draft",
    "finished_output",
    "normalise_space",
    "parse_output",
    "render_session",
    "shape_warnings",
    "signature_in",
    "split_sentences",
    "third_person",
    "validate_draft",
]
