"""Store names and the per-store data folder every tier keeps under its data root."""

from __future__ import annotations

import re
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from services.runtime.embedding import EmbeddingIdentity, check_store_embedding
from services.runtime.errors import InvalidInput, Unavailable

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


class Closable(Protocol):
    def close(self) -> None: ...
    def drop(self, *, keep_shared: bool = False) -> None: ...


T = TypeVar("T", bound=Closable)


class OpenStores(Generic[T]):
    """The per-store state a tier process serves (a drawer pool, a corpus), opened once on first
    use and kept. Opening needs the embedding dimension, known once the embedder answered;
    a tier that keeps no vectors passes `needs_dimension=False` (its opener gets 0)."""

    def __init__(
        self,
        data_root: Path,
        opener: Callable[[Path, int], T],
        *,
        needs_dimension: bool = True,
    ) -> None:
        self._root = data_root
        self._opener = opener
        self._dimension: int | None = None if needs_dimension else 0
        self._embedding: EmbeddingIdentity | None = None
        self._open: dict[str, T] = {}
        self._lock = threading.Lock()

    def set_dimension(self, dimension: int) -> None:
        """The embedding dimension (from the embedder's Info)."""
        self._dimension = dimension

    def set_embedding(self, model: str, fingerprint: str, dimension: int) -> None:
        """The model the embedder serves (its Info): each store records it when first opened
        and is refused when it was made with another (services.runtime.embedding). An
        embedder that gives no fingerprint (an older one) sets only the dimension."""
        self._dimension = dimension
        if fingerprint:
            self._embedding = EmbeddingIdentity(model, fingerprint, dimension)

    @property
    def embedding(self) -> EmbeddingIdentity | None:
        """The model the embedder serves, once known (None: the dimension alone, or not yet)."""
        return self._embedding

    def folder(self, name: str) -> Path:
        """Where a store's state lives (its name validated)."""
        return store_dir(self._root, name)

    def get(self, name: str) -> T:
        """The store's state, opened on first use."""
        with self._lock:
            opened = self._open.get(name)
            if opened is None:
                if self._dimension is None:
                    raise Unavailable("this tier is waiting for the embedder; retry shortly")
                if self._embedding is not None:
                    check_store_embedding(store_dir(self._root, name), name, self._embedding)
                opened = self._open[name] = self._opener(
                    store_dir(self._root, name), self._dimension
                )
            return opened

    def drop(self, name: str, *, keep_shared: bool = False) -> bool:
        """Delete a store's state from disk (and its collections, unless `keep_shared` and
        they live on a server every replica shares). True when there was any."""
        existed = store_dir(self._root, name).exists()
        opened = self.get(name)
        with self._lock:
            self._open.pop(name, None)
        opened.drop(keep_shared=keep_shared)
        return existed

    @property
    def root(self) -> Path:
        """The folder every store's state lives under."""
        return self._root

    def reopen(self, name: str) -> T:
        """Close the store's state and open it again from disk (after its files were
        written underneath it, as a restore does)."""
        with self._lock:
            opened = self._open.pop(name, None)
        if opened is not None:
            opened.close()
        return self.get(name)

    def discard(self, name: str) -> None:
        """Close the store's state if open and remove its folder, without opening it (a
        restore that failed half-way; a store this tier refuses to open)."""
        with self._lock:
            opened = self._open.pop(name, None)
        if opened is not None:
            opened.close()
        shutil.rmtree(store_dir(self._root, name), ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            opened, self._open = list(self._open.values()), {}
        for state in opened:
            state.close()
