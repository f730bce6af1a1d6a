"""`OpenAIChatInvoker`: Chat Completions through the official `openai` SDK.

One non-streaming `chat.completions.create` per session: the authoring prompt as the
system message, the rendered session as the user message, JSON mode on.

Decisions:

- `response_format={"type": "json_object"}`: the API then guarantees syntactically valid
  JSON (it requires the word "JSON" in the messages, which every authoring prompt has).
  Not a `json_schema`: the schema's rules live in `parse_output`, the same for every
  invoker, and strict schemas would reject the optional fields' absence differently.
- `max_completion_tokens`, not the deprecated `max_tokens` that reasoning models refuse.
- `reasoning_effort` is sent only when set; a model without reasoning answers 400, which
  surfaces as `InvalidInput` with OpenAI's message.
- Chat Completions also fronts OpenAI-compatible servers (vLLM, llama.cpp, gateways) via
  `base_url`; nothing here is specific to api.openai.com.
- The client is built on first use with the key passed explicitly; a missing key is
  `FailedPrecondition` at `compose`. Errors: see `_errors.status_error`; a `length` finish
  or a refusal is `MalformedOutput` saying so.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Final, Literal

import openai

from services.authoring.core.invoker import ComposeInput, render_session
from services.authoring.invokers._errors import (
    provider_message,
    status_error,
    stopped_early,
    unreachable,
)
from services.authoring.invokers._keys import ApiKeys, reveal_key
from services.authoring.invokers._spec import OPENAI, ProviderSpec
from services.runtime.errors import EngramError, Unavailable

log = logging.getLogger(__name__)

_LABEL: Final = "OpenAI"
_EFFORTS: Final[Mapping[str, Literal["low", "medium", "high"]]] = {
    "low": "low",
    "medium": "medium",
    "high": "high",
}


class OpenAIChatInvoker:
    """Composes drafts with a chat model over the OpenAI Chat Completions API."""

    def __init__(self, spec: ProviderSpec, keys: ApiKeys) -> None:
        self.name = OPENAI
        self.model = spec.resolved_model
        self._spec = spec
        self._keys = keys
        self._client: openai.AsyncOpenAI | None = None

    def __repr__(self) -> str:
        return f"OpenAIChatInvoker(model={self.model!r}, base_url={self._spec.base_url!r})"

    def _get_client(self) -> openai.AsyncOpenAI:
        if self._client is None:
            self._client = openai.AsyncOpenAI(
                api_key=reveal_key(self._keys, OPENAI),
                base_url=self._spec.base_url or None,
                timeout=self._spec.timeout_s,
                max_retries=self._spec.max_retries,
            )
        return self._client

    async def compose(self, request: ComposeInput) -> str:
        """The content of the model's answer for `request`."""
        client = self._get_client()
        effort = self._spec.reasoning_effort
        started = time.monotonic()
        try:
            completion = await client.chat.completions.create(
                model=self.model,
                messages=[
                    {"role": "system", "content": request.prompt_text},
                    {"role": "user", "content": render_session(request)},
                ],
                response_format={"type": "json_object"},
                max_completion_tokens=self._spec.max_output_tokens,
                reasoning_effort=_EFFORTS[effort] if effort else openai.omit,
            )
        except openai.APIStatusError as error:
            raise self._mapped(error) from None
        except openai.APITimeoutError as error:
            raise unreachable(
                _LABEL, error, timeout_s=self._spec.timeout_s, timed_out=True
            ) from None
        except openai.APIConnectionError as error:
            raise unreachable(
                _LABEL, error, timeout_s=self._spec.timeout_s, timed_out=False
            ) from None
        except openai.APIError as error:  # e.g. a response that is not the documented shape
            raise Unavailable(
                f"the {_LABEL} API answered unexpectedly ({type(error).__name__})"
            ) from None
        if not completion.choices:
            raise Unavailable(f"the {_LABEL} API answered with no choices")
        choice = completion.choices[0]
        log.info(
            "openai compose: session %s, model %s, finish %s, %.2f s",
            request.session_id,
            completion.model,
            choice.finish_reason,
            time.monotonic() - started,
        )
        if choice.finish_reason == "length":
            raise stopped_early(_LABEL, "length", max_output_tokens=self._spec.max_output_tokens)
        if choice.message.refusal:
            raise stopped_early(_LABEL, choice.message.refusal, max_output_tokens=0)
        if choice.finish_reason == "content_filter":
            raise stopped_early(_LABEL, "content filter", max_output_tokens=0)
        return choice.message.content or ""

    def _mapped(self, error: openai.APIStatusError) -> EngramError:
        message = provider_message(error.body, error.message)
        return status_error(
            _LABEL, OPENAI, error.status_code, message, keys=self._keys, code=error.code or ""
        )

    async def aclose(self) -> None:
        """Close the SDK client's connections (a later `compose` opens new ones)."""
        if self._client is not None:
            client, self._client = self._client, None
            await client.close()
