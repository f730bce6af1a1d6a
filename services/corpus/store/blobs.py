"""Content-addressed file bodies under `<store>/_corpus/`: `<sha256[:2]>/<sha256>`.

Uploads stream into `_corpus/.incoming/` while being hashed and measured; the hard size limit
is enforced while bytes arrive, so an oversized upload never lands. A finished upload is
renamed to its content address; the same bytes uploaded twice are stored once. Paths come
from hashes only, never from user input.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from services.corpus.core.tiers import HARD_LIMIT_BYTES, check_size

HEAD_BYTES = 8192


@dataclass(frozen=True)
class StoredBlob:
    sha256: str
    size: int
    head: bytes  # the first bytes, for type detection
    path: Path
    already_stored: bool


class BlobStore:
    """The `_corpus/` folder of one store."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._incoming = root / ".incoming"
        self._incoming.mkdir(parents=True, exist_ok=True)
        for stale in self._incoming.iterdir():  # left by a crash mid-upload
            stale.unlink(missing_ok=True)

    def path_of(self, sha256: str) -> Path:
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise ValueError(f"not a sha256 hex digest: {sha256!r}")
        return self.root / sha256[:2] / sha256

    async def write_stream(self, name: str, chunks: AsyncIterator[bytes]) -> StoredBlob:
        """Store a streamed body; raises TooLarge as soon as it passes the hard limit."""
        temp = self._incoming / uuid.uuid4().hex
        digest = hashlib.sha256()
        size = 0
        head = b""
        try:
            with temp.open("wb") as out:
                async for chunk in chunks:
                    size += len(chunk)
                    if size > HARD_LIMIT_BYTES:
                        check_size(size, name)  # raises TooLarge with the size and the limit
                    digest.update(chunk)
                    if len(head) < HEAD_BYTES:
                        head += chunk[: HEAD_BYTES - len(head)]
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
            sha = digest.hexdigest()
            final = self.path_of(sha)
            already = final.exists()
            if already:
                temp.unlink()
            else:
                final.parent.mkdir(parents=True, exist_ok=True)
                temp.replace(final)
            return StoredBlob(sha, size, head, final, already)
        finally:
            temp.unlink(missing_ok=True)

    @contextlib.contextmanager
    def open(self, sha256: str) -> Iterator[BinaryIO]:
        with self.path_of(sha256).open("rb") as body:
            yield body

    def stored(self, settled_s: float = 0.0) -> list[str]:
        """The digests of every stored body last written at least `settled_s` seconds ago
        (a younger one may belong to an upload whose catalog entry is still being made)."""
        cutoff = time.time() - settled_s
        return sorted(
            path.name
            for folder in self.root.iterdir()
            if folder.is_dir() and len(folder.name) == 2
            for path in folder.iterdir()
            if path.is_file()
            and path.name.startswith(folder.name)
            and len(path.name) == 64
            and path.stat().st_mtime <= cutoff
        )

    def exists(self, sha256: str) -> bool:
        return self.path_of(sha256).is_file()

    def delete(self, sha256: str) -> None:
        """Remove a body nobody references any more."""
        self.path_of(sha256).unlink(missing_ok=True)
