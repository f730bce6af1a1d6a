"""Bearer tokens: created, listed, revoked and checked here, stored only as SHA-256 hashes.

A token is `egm_` + 32 random bytes (URL-safe base64); it is shown once, when created. The
table keeps its hash, tier, store scope, when it was last used and, optionally, when it
expires. Rotating a token gives its grant a new secret; the old secret's hash is kept with the
end of its grace period and keeps working until then, so a deployment can roll the new secret
out first. Lookups go by hash (a
hash of a high-entropy secret tells nothing about the secret) and the match is confirmed with
a constant-time compare. `engram token ...` and a running gateway share the SQLite file (WAL),
so a token revoked from the CLI stops working at the gateway's next request.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gateway.core.principal import Principal, Tier
from services.runtime.errors import InvalidInput, NotFound, Unauthenticated
from services.runtime.stores import validate_store_name

TOKEN_PREFIX = "egm_"
BOOTSTRAP_ID = "tok_env_admin"
# Writing last_used_at on every request would make each read a write; once a minute is plenty.
_TOUCH_EVERY_S = 60.0
_MIN_BOOTSTRAP_CHARS = 16

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
DEFAULT_GRACE_S = 3600
MAX_GRACE_S = 7 * 86400


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _now() -> datetime:
    return datetime.now(UTC)


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


class TokenStore:
    """The token table of one gateway state directory."""

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
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        record = self._insert(f"tok_{secrets.token_hex(8)}", token, tier, stores, label, expires_at)
        return record, token

    def _insert(
        self,
        token_id: str,
        token: str,
        tier: Tier,
        stores: Iterable[str] | None,
        label: str,
        expires_at: datetime | None = None,
    ) -> TokenRecord:
        scope = _scope(stores)
        if len(label) > 200:
            raise InvalidInput("a token label is at most 200 characters", field="label")
        created = _now()
        with self._lock:
            self._db.execute(
                "INSERT INTO tokens (id, hash, tier, stores, label, created_at, expires_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    token_id,
                    _hash(token),
                    int(tier),
                    None if scope is None else json.dumps(list(scope)),
                    label,
                    created.isoformat(),
                    None if expires_at is None else expires_at.isoformat(),
                ),
            )
        return TokenRecord(token_id, tier, scope, label, created, None, expires_at)

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
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        until = _now() + timedelta(seconds=grace_s)
        with self._lock, self._db:
            row = self._db.execute("SELECT hash FROM tokens WHERE id = ?", (token_id,)).fetchone()
            if row is None:
                raise NotFound(f"no token {token_id!r}: list them with GET /v1/tokens")
            self._db.execute("DELETE FROM rotated_secrets WHERE token_id = ?", (token_id,))
            if grace_s:
                self._db.execute(
                    "INSERT INTO rotated_secrets (token_id, hash, valid_until) VALUES (?, ?, ?)",
                    (token_id, row[0], until.isoformat()),
                )
            self._db.execute("UPDATE tokens SET hash = ? WHERE id = ?", (_hash(token), token_id))
        return self.get(token_id), token

    def revoke(self, token_id: str) -> bool:
        """Delete a token (and any rotated-out secret of it); NotFound when there is none."""
        with self._lock:
            deleted = self._db.execute("DELETE FROM tokens WHERE id = ?", (token_id,)).rowcount
            self._db.execute("DELETE FROM rotated_secrets WHERE token_id = ?", (token_id,))
        if not deleted:
            raise NotFound(f"no token {token_id!r}: list them with GET /v1/tokens")
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
            with self._lock:
                row = self._db.execute(
                    "SELECT hash FROM tokens WHERE id = ?", (BOOTSTRAP_ID,)
                ).fetchone()
                if row is not None and hmac.compare_digest(row[0], _hash(admin_token)):
                    return None
                self._db.execute("DELETE FROM tokens WHERE id = ?", (BOOTSTRAP_ID,))
            self._insert(BOOTSTRAP_ID, admin_token, Tier.ADMIN, None, "ENGRAM_ADMIN_TOKEN")
            return None
        with self._lock:
            (count,) = self._db.execute("SELECT COUNT(*) FROM tokens").fetchone()
        if count:
            return None
        _, token = self.create(Tier.ADMIN, None, "first-start admin")
        return token

    # ------------------------------------------------------------------ reads

    def list(self) -> list[TokenRecord]:
        """Every token, oldest first."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM tokens ORDER BY created_at, id"
            ).fetchall()
        return [_record(row) for row in rows]

    def get(self, token_id: str) -> TokenRecord:
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM tokens WHERE id = ?", (token_id,)
            ).fetchone()
        if row is None:
            raise NotFound(f"no token {token_id!r}: list them with GET /v1/tokens")
        return _record(row)

    def authenticate(self, token: str) -> Principal:
        """The principal of a bearer token; Unauthenticated when it is not a valid one."""
        if not token.startswith(TOKEN_PREFIX) and len(token) < _MIN_BOOTSTRAP_CHARS:
            raise Unauthenticated("the bearer token is not valid (revoked or never issued)")
        digest = _hash(token)
        now = _now()
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS}, tokens.hash FROM tokens WHERE tokens.hash = ?",
                (digest,),
            ).fetchone()
            if row is None:  # a rotated-out secret, within its grace period
                row = self._db.execute(
                    f"SELECT {_COLUMNS}, rotated_secrets.hash FROM rotated_secrets "
                    "JOIN tokens ON tokens.id = rotated_secrets.token_id "
                    "WHERE rotated_secrets.hash = ? AND rotated_secrets.valid_until > ?",
                    (digest, now.isoformat()),
                ).fetchone()
        if row is None or not hmac.compare_digest(row[-1], digest):
            raise Unauthenticated("the bearer token is not valid (revoked or never issued)")
        record = _record(row[:-1])
        if record.expires_at is not None and record.expires_at <= now:
            raise Unauthenticated(
                f"the bearer token expired at {record.expires_at.isoformat()}: ask an admin "
                "for a new one (rotate a token before it expires to keep its grant)"
            )
        self._touch(record)
        return record.principal()

    def _touch(self, record: TokenRecord) -> None:
        now = _now()
        last = record.last_used_at
        if last is not None and (now - last).total_seconds() < _TOUCH_EVERY_S:
            return
        with self._lock:
            self._db.execute(
                "UPDATE tokens SET last_used_at = ? WHERE id = ?", (now.isoformat(), record.id)
            )


def _scope(stores: Iterable[str] | None) -> tuple[str, ...] | None:
    if stores is None:
        return None
    names = tuple(sorted({validate_store_name(s) for s in stores}))
    return names or None


_COLUMNS = (
    "tokens.id, tokens.tier, tokens.stores, tokens.label, tokens.created_at, "
    "tokens.last_used_at, tokens.expires_at, "
    "(SELECT MAX(valid_until) FROM rotated_secrets r WHERE r.token_id = tokens.id)"
)


def _stamp(value: object) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


def _record(row: Sequence[object]) -> TokenRecord:
    token_id, tier, stores, label, created, used, expires, grace = row
    previous = _stamp(grace)
    return TokenRecord(
        id=str(token_id),
        tier=Tier(int(str(tier))),
        stores=None if stores is None else tuple(json.loads(str(stores))),
        label=str(label),
        created_at=datetime.fromisoformat(str(created)),
        last_used_at=_stamp(used),
        expires_at=_stamp(expires),
        previous_valid_until=previous if previous and previous > _now() else None,
    )


def bearer_credentials(header: str) -> str | None:
    """The token of an `Authorization` value `Bearer <token>` (scheme case-insensitive);
    None when the value is of another scheme or carries no token. Every face parses here."""
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()
