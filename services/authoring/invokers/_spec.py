"""What an operator chooses for the authoring tier's provider: `ProviderSpec`.

Decisions:

- One frozen record for every invoker, checked when it is made: an unknown invoker name,
  reasoning effort, or a non-positive limit is `InvalidInput` naming the valid values, so
  a bad provider tab fails at save time and not on the first session of a bulk run.
- `model` "" means `default_model(name)`. The defaults are concrete ids (recorded with the
  drafts): the newest Sonnet and small GPT that the installed SDKs name and do not mark
  deprecated (the Anthropic SDK warns on deprecated ids). Codex is the exception: its
  default is "default", which passes no `-m` and lets the CLI use its own configured
  model, because Codex model names change faster than this code.
- `base_url` "" means the SDK's own default (which honours ANTHROPIC_BASE_URL /
  OPENAI_BASE_URL, read by the SDK when the client is built, never here).
- `executable` "" means the CLI's usual name ("claude", "codex") looked up on PATH; it is
  ignored by the API invokers. `max_retries` is the SDKs' own retry count (their default
  is 2); the CLIs are never retried, since a CLI run may be slow and is not idempotent.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from services.authoring.core.extractive import EXTRACTIVE_MODEL, EXTRACTIVE_NAME
from services.runtime.errors import InvalidInput

ANTHROPIC: Final = "anthropic"
OPENAI: Final = "openai"
CLAUDE_CODE: Final = "claude_code"
CODEX: Final = "codex"
INVOKER_NAMES: Final[tuple[str, ...]] = (EXTRACTIVE_NAME, ANTHROPIC, OPENAI, CLAUDE_CODE, CODEX)
REASONING_EFFORTS: Final[tuple[str, ...]] = ("", "low", "medium", "high")
CLI_DEFAULT_MODEL: Final = "default"

_DEFAULT_MODELS: Final[Mapping[str, str]] = MappingProxyType(
    {
        EXTRACTIVE_NAME: EXTRACTIVE_MODEL,
        ANTHROPIC: "claude-sonnet-5-5",
        OPENAI: "gpt-5.4-mini",
        CLAUDE_CODE: "sonnet",  # Claude Code's own alias for the current Sonnet
        CODEX: CLI_DEFAULT_MODEL,
    }
)


def _unknown_invoker(name: str) -> InvalidInput:
    return InvalidInput(
        f"unknown invoker {name!r}: expected one of {', '.join(INVOKER_NAMES)}", field="invoker"
    )


def default_model(name: str) -> str:
    """The model an invoker uses when the spec names none."""
    try:
        return _DEFAULT_MODELS[name]
    except KeyError:
        raise _unknown_invoker(name) from None


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderSpec:
    """The provider tab: which invoker, which model, how hard it thinks, and its limits."""

    invoker: str = EXTRACTIVE_NAME
    model: str = ""
    reasoning_effort: str = ""
    base_url: str = ""
    timeout_s: float = 120.0
    max_output_tokens: int = 8192
    max_retries: int = 2
    executable: str = ""

    def __post_init__(self) -> None:
        if self.invoker not in INVOKER_NAMES:
            raise _unknown_invoker(self.invoker)
        if self.reasoning_effort not in REASONING_EFFORTS:
            raise InvalidInput(
                f"unknown reasoning effort {self.reasoning_effort!r}: expected low, medium, "
                "high, or empty for the model's default",
                field="reasoning_effort",
            )
        if not (math.isfinite(self.timeout_s) and self.timeout_s > 0):
            raise InvalidInput(
                f"timeout_s must be a positive number of seconds (got {self.timeout_s})",
                field="timeout_s",
            )
        if self.max_output_tokens < 1:
            raise InvalidInput(
                f"max_output_tokens must be at least 1 (got {self.max_output_tokens})",
                field="max_output_tokens",
            )
        if not 0 <= self.max_retries <= 10:
            raise InvalidInput(
                f"max_retries must be 0..10 (got {self.max_retries})", field="max_retries"
            )
        if self.model != self.model.strip() or any(c.isspace() for c in self.model):
            raise InvalidInput(f"model {self.model!r} must not contain spaces", field="model")
        if self.base_url and not self.base_url.startswith(("http://", "https://")):
            raise InvalidInput(
                f"base_url {self.base_url!r} must start with http:// or https://",
                field="base_url",
            )

    @property
    def resolved_model(self) -> str:
        """`model`, or the invoker's default when it is empty."""
        return self.model or default_model(self.invoker)
