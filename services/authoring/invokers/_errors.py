"""One mapping from a provider's HTTP failure to Engram's domain errors.

Both SDKs raise a status error carrying the HTTP status and the provider's own message;
the invokers pull those two out and call `status_error`, so Anthropic and OpenAI failures
read alike. Decisions:

- 401 is the operator's configuration, not the caller's identity: `FailedPrecondition`
  ("the Anthropic API key was refused"), naming the variables to check. 403 is
  `PermissionDenied` (the key is valid but not allowed this model or request).
- 429 and Anthropic's 529 are `Overloaded` (retry later works), except a 429 whose code is
  `insufficient_quota` or a 402: billing, which waiting does not fix (`FailedPrecondition`).
- 408, 5xx and connection failures are `Unavailable`; 413 is `TooLarge`.
- Any other 4xx is `InvalidInput` with the provider's message, which usually names the
  field at fault (an unknown model, an effort the model does not take).
- Messages are for people: clipped, with every known key and key-shaped token masked.
"""

from __future__ import annotations

from typing import Final

from services.authoring.core.invoker import MalformedOutput
from services.authoring.invokers._keys import ApiKeys, env_names, redact_all
from services.runtime.errors import (
    EngramError,
    FailedPrecondition,
    InvalidInput,
    Overloaded,
    PermissionDenied,
    TooLarge,
    Unavailable,
)

_CLIP: Final = 400
QUOTA_CODES: Final = frozenset({"insufficient_quota", "billing_hard_limit_reached"})


def clip(text: str, limit: int = _CLIP) -> str:
    """`text` on one line, at most `limit` characters (the end is kept: errors end there)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else "…" + flat[-(limit - 1) :]


def provider_message(body: object, fallback: str) -> str:
    """The human message in an error body ({"error": {"message": …}} or {"message": …})."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return fallback


def status_error(
    label: str, provider: str, status: int, message: str, *, keys: ApiKeys | None, code: str = ""
) -> EngramError:
    """The domain error for an HTTP `status` from `label`'s API (e.g. "Anthropic")."""
    said = clip(redact_all(message, keys)) or "no message"
    where = f"the {label} API answered {status}: {said}"
    if status == 401:
        primary, fallback = env_names(provider)
        return FailedPrecondition(
            f"the {label} API key was refused ({where}); check {primary} / {fallback} or the "
            f"{provider}_api_key secret file",
            field="api_key",
        )
    if status == 403:
        return PermissionDenied(f"the {label} API key is not allowed this request ({where})")
    if status == 402 or (status == 429 and code in QUOTA_CODES):
        return FailedPrecondition(
            f"the {label} account cannot pay for this request ({where}); check its billing"
        )
    if status in (429, 529):
        return Overloaded(f"the {label} API is rate-limiting or overloaded ({where}); retry later")
    if status == 413:
        return TooLarge(f"the session is too large for the {label} API ({where})")
    if status == 408 or status >= 500:
        return Unavailable(f"the {label} API failed ({where})")
    return InvalidInput(f"the {label} API rejected the request ({where})", field="provider")


def unreachable(label: str, error: Exception, *, timeout_s: float, timed_out: bool) -> Unavailable:
    """The error for a request that got no HTTP answer at all."""
    if timed_out:
        return Unavailable(f"the {label} API did not answer within {timeout_s:g} s")
    cause = error.__cause__ or error.__context__
    detail = f" ({clip(type(cause).__name__ + ': ' + str(cause), 200)})" if cause else ""
    return Unavailable(f"the {label} API could not be reached{detail}")


def stopped_early(label: str, why: str, *, max_output_tokens: int) -> MalformedOutput:
    """The error for an answer the model did not finish (so its JSON cannot be whole)."""
    if why == "length":
        return MalformedOutput(
            f"the {label} model stopped at the max_output_tokens limit ({max_output_tokens}) "
            "before finishing; raise max_output_tokens or split the session"
        )
    return MalformedOutput(f"the {label} model declined to answer ({clip(why, 200)})")
