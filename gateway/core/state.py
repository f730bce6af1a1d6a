"""Where the gateway keeps its own state — tokens, the store registry, the audit log, rate
limits — picked by `state_backend`:

- `LocalState`: files under `<data_dir>/gateway` (SQLite tokens, `stores.json`, audit day
  files, buckets in memory); one gateway per directory, held by its lock.
- `RedisState`: `redis_url`, under `state_key_prefix`; any number of gateway replicas share
  it, so none takes a lock.

Either way the scratch directory for backups stays local. Opening does no I/O: `claim` is the
first touch of the state.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from gateway.core.audit import AuditBackend, AuditFiles, AuditLog
from gateway.core.lock import StateLock
from gateway.core.ratelimit import RateLimiter
from gateway.core.redis_state import (
    AuditStream,
    Keyspace,
    RedisBuckets,
    RedisStores,
    RedisTokens,
    open_keyspace,
)
from gateway.core.registry import RegistryBackend, StoreRegistry, StoresFile
from gateway.core.tokens import SqliteTokens, TokenStore, TokenTable
from gateway.settings import GatewaySettings


class GatewayState(Protocol):
    def claim(self, host: str, port: int) -> None:
        """Make the state this gateway's to use: refuse a second gateway on local state,
        prove that Redis answers."""

    def token_table(self) -> TokenTable: ...

    def registry_backend(self) -> RegistryBackend: ...

    def audit_backend(self) -> AuditBackend: ...

    def tokens(self) -> TokenStore: ...

    def registry(self) -> StoreRegistry: ...

    def audit_log(self) -> AuditLog: ...

    def rate_limiter(self, rate_per_s: float, burst: float) -> RateLimiter: ...

    def release(self) -> None: ...


class LocalState:
    """State files of one gateway under `state_dir`."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.lock = StateLock(state_dir)

    def claim(self, host: str, port: int) -> None:
        self.lock.acquire(host, port)

    def token_table(self) -> SqliteTokens:
        return SqliteTokens(self.state_dir / "tokens.sqlite3")

    def registry_backend(self) -> StoresFile:
        return StoresFile(self.state_dir / "stores.json")

    def audit_backend(self) -> AuditFiles:
        return AuditFiles(self.state_dir / "audit")

    def tokens(self) -> TokenStore:
        return TokenStore(self.token_table())

    def registry(self) -> StoreRegistry:
        return StoreRegistry(self.registry_backend())

    def audit_log(self) -> AuditLog:
        return AuditLog(self.audit_backend())

    def rate_limiter(self, rate_per_s: float, burst: float) -> RateLimiter:
        return RateLimiter(rate_per_s, burst)

    def release(self) -> None:
        self.lock.release()


class RedisState:
    """State every gateway replica shares in one Redis."""

    def __init__(self, url: str, prefix: str, audit_max_events: int) -> None:
        self.url, self.prefix, self.audit_max_events = url, prefix, audit_max_events
        self._keys: Keyspace | None = None

    @property
    def keys(self) -> Keyspace:
        if self._keys is None:
            self._keys = open_keyspace(self.url, self.prefix)
        return self._keys

    def claim(self, host: str, port: int) -> None:
        self.keys.ensure_answering()

    def token_table(self) -> RedisTokens:
        return RedisTokens(self.keys)

    def registry_backend(self) -> RedisStores:
        return RedisStores(self.keys)

    def audit_backend(self) -> AuditStream:
        return AuditStream(self.keys, self.audit_max_events)

    def tokens(self) -> TokenStore:
        return TokenStore(self.token_table())

    def registry(self) -> StoreRegistry:
        return StoreRegistry(self.registry_backend())

    def audit_log(self) -> AuditLog:
        return AuditLog(self.audit_backend())

    def rate_limiter(self, rate_per_s: float, burst: float) -> RateLimiter:
        return RateLimiter(rate_per_s, burst, RedisBuckets(self.keys))

    def release(self) -> None:
        if self._keys is not None:
            self._keys.client.close()
            self._keys = None


def open_state(settings: GatewaySettings) -> GatewayState:
    """The state `settings` name (no I/O yet)."""
    if settings.state_backend == "redis":
        return RedisState(settings.redis_url, settings.state_key_prefix, settings.audit_max_events)
    return LocalState(settings.state_dir)
