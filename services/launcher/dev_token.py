"""The development admin token of `engram up`.

The gateway stores tokens only hashed and shows a token it creates just once, which is wrong
for a laptop stack restarted all day. So, unless the operator sets an admin token, the
launcher keeps one in `<data_dir>/run/dev-token` (created once, mode 0600, reused on every
later start), hands it to the gateway as its bootstrap admin token and prints it. This is for
`engram up` only: a deployment sets ENGRAM_ADMIN_TOKEN from a secret.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# The gateway reads either; the first one set wins (see gateway/settings.py).
ADMIN_TOKEN_VARS = ("ENGRAM_GATEWAY_ADMIN_TOKEN", "ENGRAM_ADMIN_TOKEN")
TOKEN_FILE = "dev-token"
_PREFIX = "egm_dev_"
# The gateway refuses a bootstrap token shorter than 16 characters.
_MIN_CHARS = 16


@dataclass(frozen=True)
class AdminToken:
    """Where the gateway's bootstrap admin token comes from this run."""

    value: str | None  # the development token; None when the environment supplies one
    source: str  # the variable that was set, or the path of the token file
    created: bool = False  # the token file was written by this start

    @property
    def from_environment(self) -> bool:
        return self.value is None


def admin_token(run_dir: Path, environ: Mapping[str, str]) -> AdminToken:
    """The operator's token if one of ADMIN_TOKEN_VARS is set, else the development token
    kept in `run_dir`, created on first use."""
    for variable in ADMIN_TOKEN_VARS:
        if environ.get(variable):
            return AdminToken(None, variable)
    path = run_dir / TOKEN_FILE
    existing = _read(path)
    if existing is not None:
        return AdminToken(existing, str(path))
    return AdminToken(_create(path), str(path), created=True)


def saved_dev_token(run_dir: Path) -> str | None:
    """The development token an earlier `engram up` kept in `run_dir`, if any (for clients on
    the same machine, such as `engram eval`)."""
    return _read(run_dir / TOKEN_FILE)


def _read(path: Path) -> str | None:
    try:
        token = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return None
    if len(token) < _MIN_CHARS:  # truncated or hand-edited: make a fresh one
        return None
    os.chmod(path, 0o600)  # tighten a file someone loosened; it is an admin credential
    return token


def _create(path: Path) -> str:
    token = _PREFIX + secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    # Created 0600 from the start, never readable by others even for a moment.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token
