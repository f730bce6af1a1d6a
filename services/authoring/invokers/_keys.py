"""API keys of the providers: where they come from, and how they are kept out of sight.

`ApiKeys` is built once, by the tier's wiring, from an explicit environment mapping and an
optional secrets directory; nothing reads `os.environ` at import time, and
`ApiKeys.from_environ` reads it only when called.

Decisions:

- Precedence, per provider: ENGRAM_AUTHORING_<P>_API_KEY, then the provider's own variable
  (ANTHROPIC_API_KEY, OPENAI_API_KEY), then the file `<p>_api_key` in the secrets directory
  (how Kubernetes mounts a Secret). The Engram-specific variable wins so one process can
  hold a key for Engram that differs from a developer's shell default. Blank values count
  as unset; surrounding whitespace (the trailing newline of a mounted file) is stripped.
- Files are read once, at construction: a rotated key takes effect on restart, which is
  also when every other setting takes effect.
- The key is never returned by a public method, never in repr/str (which say only where
  each key came from), and never logged. The invokers get it through `reveal_key`, a
  package-private function, right where they build the SDK client.
- A key that is needed but missing is `FailedPrecondition` naming what to set; a secrets
  file that exists but cannot be read says so, with the OS reason (never its content).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from services.runtime.errors import FailedPrecondition, InvalidInput

PROVIDERS: Final[tuple[str, ...]] = ("anthropic", "openai")
_LABELS: Final = {"anthropic": "Anthropic", "openai": "OpenAI"}
_MASK: Final = "[redacted]"
# Shapes of provider keys and bearer tokens, for text we did not write (a CLI's stderr).
_KEY_SHAPES: Final = re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}|(?i:bearer)\s+[A-Za-z0-9._~+/=\-]{8,}")


def env_names(provider: str) -> tuple[str, str]:
    """The variables read for `provider`, highest precedence first."""
    upper = provider.upper()
    return f"ENGRAM_AUTHORING_{upper}_API_KEY", f"{upper}_API_KEY"


def secret_file_name(provider: str) -> str:
    """The file name looked for in the secrets directory."""
    return f"{provider}_api_key"


def _check(provider: str) -> str:
    if provider not in PROVIDERS:
        raise InvalidInput(
            f"no API key is kept for {provider!r}: expected {' or '.join(PROVIDERS)}",
            field="provider",
        )
    return provider


@dataclass(frozen=True, slots=True)
class _Found:
    value: str = ""
    source: str = ""  # "environment variable X" or "secret file /path"
    problem: str = ""  # why an existing secret file could not be used


class ApiKeys:
    """The providers' API keys, resolved once; see the module docstring for the order."""

    __slots__ = ("_found", "_secrets_dir")

    def __init__(
        self, env: Mapping[str, str] | None = None, secrets_dir: str | Path | None = None
    ) -> None:
        environ: Mapping[str, str] = env if env is not None else {}
        self._secrets_dir = Path(secrets_dir) if secrets_dir else None
        self._found = {p: self._resolve(p, environ) for p in PROVIDERS}

    @classmethod
    def from_environ(cls, secrets_dir: str | Path | None = None) -> ApiKeys:
        """Keys from this process's environment (read now) and `secrets_dir`."""
        return cls(dict(os.environ), secrets_dir)

    def _resolve(self, provider: str, environ: Mapping[str, str]) -> _Found:
        for name in env_names(provider):
            value = environ.get(name, "").strip()
            if value:
                return _Found(value, f"environment variable {name}")
        if self._secrets_dir is None:
            return _Found()
        path = self._secrets_dir / secret_file_name(provider)
        try:
            value = path.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            return _Found()
        except (OSError, UnicodeDecodeError) as error:
            reason = error.strerror if isinstance(error, OSError) else "not UTF-8 text"
            return _Found(problem=f"the secret file {path} could not be read ({reason})")
        if not value:
            return _Found(problem=f"the secret file {path} is empty")
        return _Found(value, f"secret file {path}")

    def configured(self, provider: str) -> bool:
        """Whether a key for `provider` was found (says nothing of whether it is valid)."""
        return bool(self._found[_check(provider)].value)

    def source(self, provider: str) -> str:
        """Where `provider`'s key came from ("" when none): for status pages, not the key."""
        return self._found[_check(provider)].source

    def missing_message(self, provider: str) -> str:
        """What an operator must do to give `provider` a key."""
        found = self._found[_check(provider)]
        primary, fallback = env_names(provider)
        where = (
            f"a file named {secret_file_name(provider)} in {self._secrets_dir}"
            if self._secrets_dir is not None
            else f"a secret file named {secret_file_name(provider)} in the secrets directory"
        )
        lead = f"{found.problem}; " if found.problem else ""
        return (
            f"{lead}the {provider} invoker needs an {_LABELS[provider]} API key: set "
            f"{primary} (or {fallback}), or mount {where}"
        )

    def redact(self, text: str) -> str:
        """`text` with every known key, and anything shaped like a key, masked."""
        for found in self._found.values():
            if found.value:
                text = text.replace(found.value, _MASK)
        return _KEY_SHAPES.sub(_MASK, text)

    def __repr__(self) -> str:
        parts = (f"{p}={self._found[p].source or 'not set'}" for p in PROVIDERS)
        return f"ApiKeys({', '.join(parts)})"

    __str__ = __repr__

    def __reduce__(self) -> tuple[object, ...]:
        raise TypeError("ApiKeys cannot be pickled: it holds secrets")


def reveal_key(keys: ApiKeys, provider: str) -> str:
    """The key itself, for building an SDK client; `FailedPrecondition` when there is none.

    Package-private: only the invokers call it, and only to hand the key to their SDK.
    """
    found = keys._found[_check(provider)]
    if not found.value:
        raise FailedPrecondition(keys.missing_message(provider), field="api_key")
    return found.value


def redact_all(text: str, keys: ApiKeys | None, extra: Iterable[str] = ()) -> str:
    """`text` masked by `keys` (or by key shapes alone), and with `extra` values masked."""
    for value in extra:
        if value:
            text = text.replace(value, _MASK)
    return keys.redact(text) if keys is not None else _KEY_SHAPES.sub(_MASK, text)
