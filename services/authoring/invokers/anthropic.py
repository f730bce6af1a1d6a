"""`AnthropicInvoker`: the Messages API through the official `anthropic` SDK.

One non-streaming `messages.create` per session: the authoring prompt as `system`, the
rendered session (`render_session`) as the one user turn, `max_tokens` from the spec. The
answer is the concatenation of the response's text blocks; thinking blocks, if a model
sends them, are not part of the answer.

Decisions:

- `reasoning_effort` maps to `output_config={"effort": …}`, which this SDK (2.x) types and
  sends as is. It is sent only when the operator set it: models that do not take an
  effort answer 400, which surfaces as `InvalidInput` with Anthropic's message, telling the
  operator to clear it. Extended thinking (`thinking=`) is not turned on: it would need a
  token budget of its own and adds nothing the effort setting does not.
- The client is built on first use, with the key passed explicitly (so the SDK does not
  go looking in the environment or in profile files for credentials), the spec's
  base_url (empty: the SDK default), timeout and max_retries. A missing key is therefore
  `FailedPrecondition` at `compose`, not at construction: the provider tab can be saved
  before the secret is mounted.
- Errors: see `_errors.status_error`; an answer cut off at max_tokens, or a refusal, is
  `MalformedOutput` with a message that says so instead of a confusing JSON error.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Final, Literal

import anthropic
from anthropic.types import OutputConfigParam

from services.authoring.core.invoker import ComposeInput, render_session
from services.authoring.invokers._errors import (
    provider_message,
    status_error,
    stopped_early,
    unreachable,
)
from services.authoring.invokers._keys import ApiKeys, reveal_key
from services.authoring.invokers._spec import ANTHROPIC, ProviderSpec
from services.runtime.errors import EngramError, Unavailable

log = logging.getLogger(__name__)

_LABEL: Final = "Anthropic"
_EFFORTS: Final[Mapping[str, Literal["low", "medium", "high"]]] = {
    "low": "low",
    "medium": "medium",
    "high": "high",
}


class AnthropicInvoker:
    """Composes drafts with a Claude model over the Anthropic Messages API."""

    def __init__(self, spec: ProviderSpec, keys: ApiKeys) -> None:
        self.name = ANTHROPIC
        self.model = spec.resolved_model
        self._spec = spec
        self._keys = keys
        self._client: anthropic.AsyncAnthropic | None = None

    def __repr__(self) -> str:
        return f"AnthropicInvoker(model={self.model!r}, base_url={self._spec.base_url!r})"

    def _get_client(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            self._client = anthropic.AsyncAnthropic(
                api_key=reveal_key(self._keys, ANTHROPIC),
                base_url=self._spec.base_url or None,
                timeout=self._spec.timeout_s,
                max_retries=self._spec.max_retries,
            )
        return self._client

    async def compose(self, request: ComposeInput) -> str:
        """The text of Claude's answer for `request`."""
        client = self._get_client()
        effort = self._spec.reasoning_effort
        started = time.monotonic()
        output_config: OutputConfigParam | anthropic.Omit = anthropic.omit
        if effort:
            output_config = {"effort": _EFFORTS[effort]}
        try:
            message = await client.messages.create(
                model=self.model,
                max_tokens=self._spec.max_output_tokens,
                system=request.prompt_text,
                messages=[{"role": "user", "content": render_session(request)}],
                output_config=output_config,
            )
        except anthropic.APIStatusError as error:
            raise self._mapped(error) from None
        except anthropic.APITimeoutError as error:
            raise unreachable(
                _LABEL, error, timeout_s=self._spec.timeout_s, timed_out=True
            ) from None
        except anthropic.APIConnectionError as error:
            raise unreachable(
                _LABEL, error, timeout_s=self._spec.timeout_s, timed_out=False
            ) from None
        except anthropic.APIError as error:  # e.g. a response that is not the documented shape
            raise Unavailable(
                f"the {_LABEL} API answered unexpectedly ({type(error).__name__})"
            ) from None
        log.info(
            "anthropic compose: session %s, model %s, stop %s, %.2f s",
            request.session_id,
            message.model,
            message.stop_reason,
            time.monotonic() - started,
        )
        if message.stop_reason == "max_tokens":
            raise stopped_early(_LABEL, "length", max_output_tokens=self._spec.max_output_tokens)
        if message.stop_reason == "refusal":
            raise stopped_early(_LABEL, "refusal", max_output_tokens=self._spec.max_output_tokens)
        return "".join(block.text for block in message.content if block.type == "text")

    def _mapped(self, error: anthropic.APIStatusError) -> EngramError:
        message = error.api_message or provider_message(error.body, error.message)
        return status_error(_LABEL, ANTHROPIC, error.status_code, message, keys=self._keys)

    async def aclose(self) -> None:
        """Close the SDK client's connections (a later `compose` opens new ones)."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
