"""Store names and the per-store data folder every tier keeps under its data root."""

from __future__ import annotations

import re
from pathlib import Path

from services.runtime.errors import InvalidInput

STORE_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}\Z")


def validate_store_name(name: str) -> str:
    """A store name is a slug: it becomes a folder name, so nothing else is accepted."""
    if not STORE_NAME.match(name or "") or ".." in name:
        raise InvalidInput(
            f"store name {name!r} is not valid: use 1-63 characters of a-z, 0-9, '.', '_' or '-', "
            "starting with a letter or digit",
            field="store.name",
        )
    return name


def store_dir(data_root: Path, name: str) -> Path:
    """`<data_root>/<store>`; the name is validated first, so the path cannot escape the root."""
    return data_root / validate_store_name(name)
