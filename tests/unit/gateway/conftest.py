"""The gateway's state on both backends: files under a temporary directory, and the real Redis
under a key prefix of the test's own (its keys deleted afterwards, never FLUSHDB)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gateway.core.audit import AuditFiles, AuditLog
from gateway.core.redis_state import (
    AuditStream,
    Keyspace,
    RedisStores,
    RedisTokens,
    open_keyspace,
)
from gateway.core.registry import StoreRegistry, StoresFile
from gateway.core.tokens import SqliteTokens, TokenStore

BACKENDS = ["local", "redis"]


@pytest.fixture
def keyspace(redis_url: str) -> Iterator[Keyspace]:
    """The gateway's keys under a prefix no other test uses; deleted afterwards."""
    keys = open_keyspace(redis_url, f"engram-test:{uuid.uuid4().hex[:12]}")
    try:
        yield keys
    finally:
        leftover = list(keys.client.scan_iter(match=f"{keys.prefix}:*", count=1000))
        if leftover:
            keys.client.delete(*leftover)
        keys.client.close()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def open_tokens(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Iterator[Callable[[], TokenStore]]:
    """Opens the token table of one state: every call another instance over the same rows
    (another gateway, or the CLI beside it)."""
    opened: list[TokenStore] = []
    keys = request.getfixturevalue("keyspace") if backend == "redis" else None

    def open_one() -> TokenStore:
        table = RedisTokens(keys) if keys else SqliteTokens(tmp_path / "tokens.sqlite3")
        opened.append(TokenStore(table))
        return opened[-1]

    yield open_one
    for store in opened:
        store.close()


@pytest.fixture
def tokens(open_tokens: Callable[[], TokenStore]) -> TokenStore:
    return open_tokens()


@pytest.fixture
def open_registry(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Callable[[], StoreRegistry]:
    """Opens the registry of one state: every call another instance (a restarted gateway on
    local state, another replica on Redis)."""
    keys = request.getfixturevalue("keyspace") if backend == "redis" else None

    def open_one() -> StoreRegistry:
        if keys:
            return StoreRegistry(RedisStores(keys))
        return StoreRegistry(StoresFile(tmp_path / "stores.json"))

    return open_one


@pytest.fixture
def open_audit(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> Callable[[], AuditLog]:
    """Opens the audit log of one state: every call another writer of the same log."""
    keys = request.getfixturevalue("keyspace") if backend == "redis" else None

    def open_one() -> AuditLog:
        if keys:
            return AuditLog(AuditStream(keys, max_events=1_000_000))
        return AuditLog(AuditFiles(tmp_path / "audit"))

    return open_one
