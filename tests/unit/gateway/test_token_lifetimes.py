"""Token lifetimes on both token tables (real SQLite, real Redis): an expiry that refuses the
token once passed, a rotation that gives the grant a new secret while the old one works for
its grace period only, and a SQLite table from before expiries that opens and gains the
column."""

from __future__ import annotations

import sqlite3
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gateway.core.principal import Tier
from gateway.core.tokens import SqliteTokens, TokenStore
from services.runtime.errors import InvalidInput, Unauthenticated


def test_an_expired_token_is_refused_and_says_so(tokens: TokenStore) -> None:
    record, token = tokens.create(
        Tier.WRITE, ["alpha"], "ci", datetime.now(UTC) + timedelta(seconds=1)
    )
    assert tokens.authenticate(token).tier is Tier.WRITE
    assert record.expires_at is not None and tokens.get(record.id).expires_at == record.expires_at
    time.sleep(1.1)
    with pytest.raises(Unauthenticated, match="expired"):
        tokens.authenticate(token)
    with pytest.raises(InvalidInput, match="not in the future"):
        tokens.create(Tier.READ, None, "", datetime.now(UTC) - timedelta(seconds=1))


def test_a_rotation_keeps_the_grant_and_the_old_secret_only_for_its_grace(
    tokens: TokenStore,
) -> None:
    record, old = tokens.create(Tier.READ, ["alpha"], "agent")
    rotated, new = tokens.rotate(record.id, grace_s=60)
    assert new != old and rotated.id == record.id and rotated.stores == ("alpha",)
    assert rotated.previous_valid_until is not None
    assert tokens.authenticate(new).token_id == record.id
    assert tokens.authenticate(old).token_id == record.id, "the old secret works in its grace"
    again, newest = tokens.rotate(record.id, grace_s=0)
    assert again.previous_valid_until is None
    assert tokens.authenticate(newest).token_id == record.id
    for gone in (old, new):
        with pytest.raises(Unauthenticated):
            tokens.authenticate(gone)
    tokens.revoke(record.id)
    with pytest.raises(Unauthenticated):
        tokens.authenticate(newest)
    with pytest.raises(InvalidInput, match="grace_s"):
        tokens.rotate(tokens.create(Tier.READ)[0].id, grace_s=10**7)


def test_a_table_from_before_expiries_opens_and_keeps_its_tokens(tmp_path: Path) -> None:
    path = tmp_path / "tokens.sqlite"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE tokens (id TEXT PRIMARY KEY, hash TEXT NOT NULL UNIQUE, tier INTEGER NOT "
        "NULL, stores TEXT, label TEXT NOT NULL DEFAULT '', created_at TEXT NOT NULL, "
        "last_used_at TEXT)"
    )
    db.commit()
    db.close()
    store = TokenStore(SqliteTokens(path))
    try:
        record, token = store.create(Tier.ADMIN)
        assert store.authenticate(token).token_id == record.id
        assert store.get(record.id).expires_at is None
    finally:
        store.close()
