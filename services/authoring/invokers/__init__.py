"""The authoring tier's invokers: the offline extractive one and the four providers.

`build_invoker(spec, keys, embed=…)` is the one way in: the servicer holds a `ProviderSpec` (the
provider tab: invoker, model, reasoning effort, base URL, limits) and an `ApiKeys` built
once at startup, and gets an `Invoker` whose `compose` returns the model's raw text for
`parse_output`.

- "extractive": `ExtractiveInvoker`, offline and deterministic; needs no key, only the
  embedder tier (it types sentences by their embedding).
- "anthropic": the Messages API via the `anthropic` SDK (`AnthropicInvoker`).
- "openai": Chat Completions via the `openai` SDK (`OpenAIChatInvoker`), also for
  OpenAI-compatible servers through `base_url`.
- "claude_code": the Claude Code CLI in print mode (`ClaudeCodeInvoker`).
- "codex": the Codex CLI's `codex exec` (`CodexInvoker`).

Building never needs the key or the executable: both are checked when `compose` runs, and
their absence is `FailedPrecondition` saying what to set or install. So a provider can be
configured before its secret is mounted, and a smoke test reports the problem plainly.
The SDK invokers hold an HTTP client; call their `aclose()` when replacing them.
"""

from __future__ import annotations

from services.authoring.core.extractive import EXTRACTIVE_NAME, Embed, ExtractiveInvoker
from services.authoring.core.invoker import Invoker
from services.authoring.invokers._keys import PROVIDERS, ApiKeys
from services.authoring.invokers._spec import (
    ANTHROPIC,
    CLAUDE_CODE,
    CLI_DEFAULT_MODEL,
    CODEX,
    INVOKER_NAMES,
    OPENAI,
    REASONING_EFFORTS,
    ProviderSpec,
    default_model,
)
from services.authoring.invokers.anthropic import AnthropicInvoker
from services.authoring.invokers.cli import ClaudeCodeInvoker, CodexInvoker
from services.authoring.invokers.openai_chat import OpenAIChatInvoker
from services.runtime.errors import InvalidInput

__all__ = [
    "ANTHROPIC",
    "CLAUDE_CODE",
    "CLI_DEFAULT_MODEL",
    "CODEX",
    "INVOKER_NAMES",
    "OPENAI",
    "PROVIDERS",
    "REASONING_EFFORTS",
    "AnthropicInvoker",
    "ApiKeys",
    "ClaudeCodeInvoker",
    "CodexInvoker",
    "Invoker",
    "OpenAIChatInvoker",
    "ProviderSpec",
    "build_invoker",
    "default_model",
    "key_provider",
]


def key_provider(invoker: str) -> str:
    """The provider whose API key `invoker` needs ("" for those that need none)."""
    return invoker if invoker in PROVIDERS else ""


def build_invoker(spec: ProviderSpec, keys: ApiKeys, *, embed: Embed) -> Invoker:
    """The invoker `spec` names. Keys and executables are checked at `compose`, not here;
    `embed` (the embedder tier's client) is what the offline extractive invoker types with."""
    if spec.invoker == EXTRACTIVE_NAME:
        return ExtractiveInvoker(embed)
    if spec.invoker == ANTHROPIC:
        return AnthropicInvoker(spec, keys)
    if spec.invoker == OPENAI:
        return OpenAIChatInvoker(spec, keys)
    if spec.invoker == CLAUDE_CODE:
        return ClaudeCodeInvoker(spec, keys)
    if spec.invoker == CODEX:
        return CodexInvoker(spec, keys)
    # ProviderSpec refuses unknown names; this guards a spec built around its checks.
    raise InvalidInput(
        f"unknown invoker {spec.invoker!r}: expected one of {', '.join(INVOKER_NAMES)}",
        field="invoker",
    )
