"""Bearer tokens: created, listed, revoked and checked here, stored only as SHA-256 hashes.

A token is `egm_` + 32 random bytes (URL-safe base64); it is shown once, when created. The
table keeps its hash, tier, store scope, when it was last used and, optionally, when it
expires. Rotating a token gives its grant a new secret; the old secret's hash is kept with the
end of its grace period and keeps working until then, so a deployment can roll the new secret
out first. Lookups go by hash (a hash of a high-entropy secret tells nothing about the secret)
and the match is confirmed with a constant-time compare.

`TokenStore` holds every rule; a `TokenTable` only keeps rows: `SqliteTokens` (one gateway's
state directory, WAL, shared with `engram token ...`) or `RedisTokens` (`redis_state.py`,
shared by every gateway replica). Nothing is cached between requests, so a token revoked
anywhere stops working at the next request on every gateway.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Protocol

from gateway.core.principal import Principal, Tier
from services.runtime.errors import InvalidInput, NotFound, Unauthenticated
from services.runtime.stores import validate_store_name

TOKEN_PREFIX = "egm_"
BOOTSTRAP_ID = "tok_env_admin"
# Writing last_used_at on every request would make each read a write; once a minute is plenty.
_TOUCH_EVERY_S = 60.0
_MIN_BOOTSTRAP_CHARS = 16
_MAX_LABEL = 200
DEFAULT_GRACE_S = 3600
MAX_GRACE_S = 7 * 86400


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _now() -> datetime:
    return datetime.now(UTC)


def _new_secret() -> str:
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def _not_found(token_id: str) -> NotFound:
    return NotFound(f"no token {token_id!r}: list them with GET /v1/tokens")


@dataclass(frozen=True)
class TokenRecord:
    """A token as the store knows it (never the token itself)."""

    id: str
    tier: Tier
    stores: tuple[str, ...] | None
    label: str
    created_at: datetime
    last_used_at: datetime | None
    expires_at: datetime | None = None
    previous_valid_until: datetime | None = None  # a rotated-out secret still works until

    def principal(self) -> Principal:
        scope = None if self.stores is None else frozenset(self.stores)
        return Principal(token_id=self.id, tier=self.tier, stores=scope)


@dataclass(frozen=True)
class Found:
    """What a table holds for a presented hash: the grant and both secrets' stored hashes."""

    record: TokenRecord
    current_hash: str
    previous_hash: str | None


class TokenTable(Protocol):
    """Where token rows are kept. Each method is one atomic change or one consistent read."""

    def insert(self, record: TokenRecord, digest: str, *, only_if_empty: bool = False) -> bool:
        """Keep a new token with secret hash `digest`; with `only_if_empty`, only when the
        table has no token at all. False when nothing was kept."""

    def hash_of(self, token_id: str) -> str | None:
        """The current secret's hash of `token_id` (None: no such token)."""

    def rotate(self, token_id: str, digest: str, previous_until: datetime | None) -> bool:
        """Give `token_id` the secret hash `digest`; the replaced one keeps working until
        `previous_until` (None: not at all), an older one no longer. False: no such token."""

    def delete(self, token_id: str) -> bool:
        """Forget a token and its secrets; False when there was none."""

    def get(self, token_id: str) -> TokenRecord | None: ...

    def list(self) -> list[TokenRecord]:
        """Every token, oldest first."""

    def find(self, digest: str) -> Found | None:
        """The token whose current or rotated-out secret has hash `digest`."""

    def touch(self, token_id: str, at: datetime) -> None:
        """Record a use of `token_id` at `at` (nothing when it is gone)."""

    def close(self) -> None: ...


class TokenStore:
    """The gateway's tokens, kept in `table`."""

    def __init__(self, table: TokenTable) -> None:
        self._table = table

    def close(self) -> None:
        self._table.close()

    # ------------------------------------------------------------------ writes

    def create(
        self,
        tier: Tier,
        stores: Iterable[str] | None = None,
        label: str = "",
        expires_at: datetime | None = None,
    ) -> tuple[TokenRecord, str]:
        """A new token of `tier` scoped to `stores` (None or empty: every store), working
        until `expires_at` (None: for ever). Returns its record and the token, which is never
        shown again."""
        if expires_at is not None and expires_at <= _now():
            raise InvalidInput(
                f"expires_at {expires_at.isoformat()} is not in the future", field="expires_at"
            )
        token = _new_secret()
        record = _new_record(f"tok_{secrets.token_hex(8)}", tier, stores, label, expires_at)
        self._table.insert(record, _hash(token))
        return record, token

    def rotate(self, token_id: str, grace_s: int = DEFAULT_GRACE_S) -> tuple[TokenRecord, str]:
        """A new secret for `token_id`'s grant; the current secret keeps working for
        `grace_s` seconds (0: not at all). Returns the record and the new token."""
        if not 0 <= grace_s <= MAX_GRACE_S:
            raise InvalidInput(
                f"grace_s must be between 0 and {MAX_GRACE_S} (7 days), got {grace_s}",
                field="grace_s",
            )
        if token_id == BOOTSTRAP_ID:
            raise InvalidInput(
                "the bootstrap admin token comes from ENGRAM_ADMIN_TOKEN: change the variable "
                "to rotate it",
                field="id",
            )
        token = _new_secret()
        until = _now() + timedelta(seconds=grace_s) if grace_s else None
        if not self._table.rotate(token_id, _hash(token), until):
            raise _not_found(token_id)
        return self.get(token_id), token

    def revoke(self, token_id: str) -> bool:
        """Delete a token (and any rotated-out secret of it); NotFound when there is none."""
        if not self._table.delete(token_id):
            raise _not_found(token_id)
        return True

    def bootstrap(self, admin_token: str) -> str | None:
        """Make sure an admin can get in.

        With `admin_token` (ENGRAM_ADMIN_TOKEN), that token is the bootstrap admin token (a
        changed value replaces the previous one). Without it, the first start (no tokens at
        all) creates an admin token and returns it so the caller can print it once.
        """
        if admin_token:
            if len(admin_token) < _MIN_BOOTSTRAP_CHARS:
                raise InvalidInput(
                    f"ENGRAM_ADMIN_TOKEN is {len(admin_token)} characters; use at least "
                    f"{_MIN_BOOTSTRAP_CHARS} random ones (e.g. `openssl rand -hex 32`)",
                    field="admin_token",
                )
            digest = _hash(admin_token)
            stored = self._table.hash_of(BOOTSTRAP_ID)
            if stored is not None and hmac.compare_digest(stored, digest):
                return None
            self._table.delete(BOOTSTRAP_ID)
            record = _new_record(BOOTSTRAP_ID, Tier.ADMIN, None, "ENGRAM_ADMIN_TOKEN")
            self._table.insert(record, digest)
            return None
        token = _new_secret()
        record = _new_record(f"tok_{secrets.token_hex(8)}", Tier.ADMIN, None, "first-start admin")
        # Only into an empty table, in one step: two gateways starting at once make one.
        return token if self._table.insert(record, _hash(token), only_if_empty=True) else None

    # ------------------------------------------------------------------ reads

    def list(self) -> list[TokenRecord]:
        """Every token, oldest first."""
        return self._table.list()

    def get(self, token_id: str) -> TokenRecord:
        record = self._table.get(token_id)
        if record is None:
            raise _not_found(token_id)
        return record

    def authenticate(self, token: str) -> Principal:
        """The principal of a bearer token; Unauthenticated when it is not a valid one."""
        refused = Unauthenticated("the bearer token is not valid (revoked or never issued)")
        if not token.startswith(TOKEN_PREFIX) and len(token) < _MIN_BOOTSTRAP_CHARS:
            raise refused
        digest = _hash(token)
        found = self._table.find(digest)
        if found is None:
            raise refused
        record = found.record
        current = hmac.compare_digest(found.current_hash, digest)
        # A rotated-out secret works within its grace period only (the record shows one
        # that has not ended).
        previous = (
            found.previous_hash is not None
            and record.previous_valid_until is not None
            and hmac.compare_digest(found.previous_hash, digest)
        )
        if not (current or previous):
            raise refused
        now = _now()
        if record.expires_at is not None and record.expires_at <= now:
            raise Unauthenticated(
                f"the bearer token expired at {record.expires_at.isoformat()}: ask an admin "
                "for a new one (rotate a token before it expires to keep its grant)"
            )
        last = record.last_used_at
        if last is None or (now - last).total_seconds() >= _TOUCH_EVERY_S:
            self._table.touch(record.id, now)
        return record.principal()


# ---------------------------------------------------------------------- rows, for every table


def _new_record(
    token_id: str,
    tier: Tier,
    stores: Iterable[str] | None,
    label: str,
    expires_at: datetime | None = None,
) -> TokenRecord:
    if len(label) > _MAX_LABEL:
        raise InvalidInput(f"a token label is at most {_MAX_LABEL} characters", field="label")
    return TokenRecord(token_id, tier, _scope(stores), label, _now(), None, expires_at)


def _scope(stores: Iterable[str] | None) -> tuple[str, ...] | None:
    if stores is None:
        return None
    names = tuple(sorted({validate_store_name(s) for s in stores}))
    return names or None


def _stamp(value: object) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


def row_of(record: TokenRecord) -> dict[str, Any]:
    """The fields a table keeps of a token's grant (its use and its secrets are apart)."""
    return {
        "id": record.id,
        "tier": int(record.tier),
        "stores": None if record.stores is None else list(record.stores),
        "label": record.label,
        "created_at": record.created_at.isoformat(),
        "expires_at": None if record.expires_at is None else record.expires_at.isoformat(),
    }


def record_of(row: Mapping[str, Any], last_used_at: object, previous_until: object) -> TokenRecord:
    """A record from `row_of`'s fields, when it was last used, and the end of its rotated-out
    secret's grace (shown only while it has not passed)."""
    previous = _stamp(previous_until)
    stores = row["stores"]
    return TokenRecord(
        id=str(row["id"]),
        tier=Tier(int(row["tier"])),
        stores=None if stores is None else tuple(str(s) for s in stores),
        label=str(row["label"]),
        created_at=datetime.fromisoformat(str(row["created_at"])),
        last_used_at=_stamp(last_used_at),
        expires_at=_stamp(row["expires_at"]),
        previous_valid_until=previous if previous and previous > _now() else None,
    )


# ---------------------------------------------------------------------- SQLite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tokens (
    id TEXT PRIMARY KEY,
    hash TEXT NOT NULL UNIQUE,
    tier INTEGER NOT NULL,
    stores TEXT,            -- JSON list of store names; NULL = every store
    label TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    last_used_at TEXT
);
CREATE TABLE IF NOT EXISTS rotated_secrets (
    token_id TEXT NOT NULL,
    hash TEXT NOT NULL UNIQUE,
    valid_until TEXT NOT NULL
);
"""
# Columns added after the first release: each is added to an older table when it opens.
_ADDED_COLUMNS = {"expires_at": "TEXT"}
_COLUMNS = (
    "tokens.id, tokens.tier, tokens.stores, tokens.label, tokens.created_at, "
    "tokens.expires_at, tokens.last_used_at, "
    "(SELECT MAX(valid_until) FROM rotated_secrets r WHERE r.token_id = tokens.id)"
)
_FIELDS = ("id", "tier", "stores", "label", "created_at", "expires_at")


class SqliteTokens:
    """The token table of one gateway state directory (`tokens.sqlite3`, WAL: the CLI and a
    running gateway share it)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(_SCHEMA)
        present = {row[1] for row in self._db.execute("PRAGMA table_info(tokens)")}
        for column, kind in _ADDED_COLUMNS.items():
            if column not in present:
                self._db.execute(f"ALTER TABLE tokens ADD COLUMN {column} {kind}")
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def insert(self, record: TokenRecord, digest: str, *, only_if_empty: bool = False) -> bool:
        row = row_of(record)
        row["stores"] = None if row["stores"] is None else json.dumps(row["stores"])
        condition = " WHERE NOT EXISTS (SELECT 1 FROM tokens)" if only_if_empty else ""
        with self._lock:
            inserted = self._db.execute(
                f"INSERT INTO tokens (hash, {', '.join(_FIELDS)}) "
                f"SELECT ?, {', '.join('?' for _ in _FIELDS)}{condition}",
                (digest, *(row[f] for f in _FIELDS)),
            ).rowcount
        return inserted == 1

    def hash_of(self, token_id: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT hash FROM tokens WHERE id = ?", (token_id,)).fetchone()
        return None if row is None else str(row[0])

    def rotate(self, token_id: str, digest: str, previous_until: datetime | None) -> bool:
        with self._lock, self._db:
            row = self._db.execute("SELECT hash FROM tokens WHERE id = ?", (token_id,)).fetchone()
            if row is None:
                return False
            self._db.execute("DELETE FROM rotated_secrets WHERE token_id = ?", (token_id,))
            if previous_until is not None:
                self._db.execute(
                    "INSERT INTO rotated_secrets (token_id, hash, valid_until) VALUES (?, ?, ?)",
                    (token_id, row[0], previous_until.isoformat()),
                )
            self._db.execute("UPDATE tokens SET hash = ? WHERE id = ?", (digest, token_id))
        return True

    def delete(self, token_id: str) -> bool:
        with self._lock, self._db:
            deleted = self._db.execute("DELETE FROM tokens WHERE id = ?", (token_id,)).rowcount
            self._db.execute("DELETE FROM rotated_secrets WHERE token_id = ?", (token_id,))
        return bool(deleted)

    def get(self, token_id: str) -> TokenRecord | None:
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM tokens WHERE id = ?", (token_id,)
            ).fetchone()
        return None if row is None else _sqlite_record(row)

    def list(self) -> list[TokenRecord]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM tokens ORDER BY created_at, id"
            ).fetchall()
        return [_sqlite_record(row) for row in rows]

    def find(self, digest: str) -> Found | None:
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS}, tokens.hash, "
                "(SELECT hash FROM rotated_secrets r WHERE r.token_id = tokens.id) FROM tokens "
                "WHERE tokens.hash = ? OR tokens.id = "
                "(SELECT token_id FROM rotated_secrets WHERE hash = ?)",
                (digest, digest),
            ).fetchone()
        if row is None:
            return None
        return Found(_sqlite_record(row[:-2]), str(row[-2]), _text(row[-1]))

    def touch(self, token_id: str, at: datetime) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE tokens SET last_used_at = ? WHERE id = ?", (at.isoformat(), token_id)
            )


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _sqlite_record(row: tuple[Any, ...]) -> TokenRecord:
    fields = dict(zip(_FIELDS, row[: len(_FIELDS)], strict=True))
    if fields["stores"] is not None:
        fields["stores"] = json.loads(fields["stores"])
    used, grace = row[len(_FIELDS) :]
    return record_of(fields, used, grace)


def bearer_credentials(header: str) -> str | None:
    """The token of an `Authorization` value `Bearer <token>` (scheme case-insensitive);
    None when the value is of another scheme or carries no token. Every face parses here."""
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()
