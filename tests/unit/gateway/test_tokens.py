"""The token store on both tables (real SQLite, real Redis): what is kept (hashes only), how a
token is checked, scoped, revoked and bootstrapped, and that a change made through one
instance holds at the next request of another (another gateway replica, or the CLI)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from gateway.core.principal import Tier
from gateway.core.redis_state import Keyspace
from gateway.core.tokens import BOOTSTRAP_ID, TokenStore
from services.runtime.errors import InvalidInput, NotFound, Unauthenticated

ADMIN = "egm_bootstrap-admin-secret-0123456789"


def test_a_token_carries_its_tier_scope_and_label(tokens: TokenStore) -> None:
    record, token = tokens.create(Tier.WRITE, ["beta", "alpha", "beta"], "ci")
    assert token.startswith("egm_") and len(token) > 40
    assert record.stores == ("alpha", "beta"), "a scope is kept sorted, once per store"
    principal = tokens.authenticate(token)
    assert (principal.token_id, principal.tier) == (record.id, Tier.WRITE)
    assert principal.stores == frozenset({"alpha", "beta"})
    again = tokens.get(record.id)
    assert (again.label, again.stores, again.created_at) == (
        "ci",
        ("alpha", "beta"),
        record.created_at,
    )
    unscoped, _ = tokens.create(Tier.READ, [])
    assert unscoped.stores is None, "an empty scope means every store"
    with pytest.raises(InvalidInput, match="at most 200"):
        tokens.create(Tier.READ, None, "x" * 201)
    with pytest.raises(InvalidInput):
        tokens.create(Tier.READ, ["not a store name!"])


def test_tokens_list_oldest_first_and_unknown_ones_are_refused(tokens: TokenStore) -> None:
    made = [tokens.create(Tier.READ, None, f"n{i}")[0].id for i in range(3)]
    assert [r.id for r in tokens.list()] == made
    for refused in ("egm_never-issued", "short", ""):
        with pytest.raises(Unauthenticated, match="not valid"):
            tokens.authenticate(refused)
    with pytest.raises(NotFound, match="GET /v1/tokens"):
        tokens.get("tok_nope")
    with pytest.raises(NotFound):
        tokens.revoke("tok_nope")


def test_a_use_is_recorded_at_most_once_a_minute(tokens: TokenStore) -> None:
    record, token = tokens.create(Tier.READ)
    assert record.last_used_at is None
    tokens.authenticate(token)
    first = tokens.get(record.id).last_used_at
    assert first is not None, "the first use is recorded"
    tokens.authenticate(token)
    assert tokens.get(record.id).last_used_at == first, "a use within a minute is not written"


def test_the_bootstrap_admin_token_is_the_variable_and_follows_it(tokens: TokenStore) -> None:
    with pytest.raises(InvalidInput, match="at least 16"):
        tokens.bootstrap("too-short")
    assert tokens.bootstrap(ADMIN) is None
    assert tokens.authenticate(ADMIN).tier is Tier.ADMIN
    assert tokens.bootstrap(ADMIN) is None, "the same value again changes nothing"
    assert [r.id for r in tokens.list()] == [BOOTSTRAP_ID]
    changed = ADMIN.replace("admin", "ADMIN")
    tokens.bootstrap(changed)
    assert tokens.authenticate(changed).token_id == BOOTSTRAP_ID
    with pytest.raises(Unauthenticated):
        tokens.authenticate(ADMIN)
    with pytest.raises(InvalidInput, match="ENGRAM_ADMIN_TOKEN"):
        tokens.rotate(BOOTSTRAP_ID)


def test_a_first_start_makes_one_admin_token_even_when_gateways_start_at_once(
    open_tokens: Callable[[], TokenStore],
) -> None:
    stores = [open_tokens() for _ in range(8)]
    made: list[str | None] = [None] * len(stores)
    start = threading.Barrier(len(stores))

    def bootstrap(i: int) -> None:
        start.wait(timeout=10)
        made[i] = stores[i].bootstrap("")

    threads = [threading.Thread(target=bootstrap, args=(i,)) for i in range(len(stores))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    created = [token for token in made if token is not None]
    assert len(created) == 1, f"expected one first-start admin token, {len(created)} were made"
    assert stores[0].authenticate(created[0]).tier is Tier.ADMIN
    assert len(stores[0].list()) == 1
    assert stores[0].bootstrap("") is None, "a later start finds a token and makes none"


def test_a_token_revoked_through_one_instance_fails_on_another(
    open_tokens: Callable[[], TokenStore],
) -> None:
    first, second = open_tokens(), open_tokens()
    record, token = first.create(Tier.WRITE, ["alpha"])
    assert second.authenticate(token).token_id == record.id, "made on one, known on the other"
    assert second.revoke(record.id) is True
    with pytest.raises(Unauthenticated):
        first.authenticate(token)
    rotated, old = first.create(Tier.READ)
    _, new = second.rotate(rotated.id, grace_s=0)
    with pytest.raises(Unauthenticated):
        first.authenticate(old)
    assert first.authenticate(new).token_id == rotated.id


def test_only_hashes_of_the_secrets_are_stored(
    backend: str, tokens: TokenStore, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    record, token = tokens.create(Tier.ADMIN, None, "kept secret")
    _, rotated = tokens.rotate(record.id, grace_s=60)
    tokens.authenticate(rotated)
    if backend == "redis":
        keys: Keyspace = request.getfixturevalue("keyspace")
        dumped = []
        for key in keys.client.scan_iter(match=f"{keys.prefix}:*"):
            dumped.append(f"{key} {keys.client.hgetall(key)}")
        stored = "\n".join(dumped)
    else:
        stored = "".join(
            path.read_bytes().decode("latin-1") for path in tmp_path.glob("tokens.sqlite3*")
        )
    assert "kept secret" in stored, "the dump should hold the token table"
    for secret in (token, rotated):
        assert secret not in stored and secret[4:] not in stored, "a secret is stored in clear"
