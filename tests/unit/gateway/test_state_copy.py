"""`engram gateway-state copy`: a gateway's tokens, store registry and audit log move between
local files and the real Redis whole — every token keeps working with its own secret, every
store keeps its settings and placement, every audit event its day and order — and a copy into
a state that holds anything, or out of files a running gateway holds, is refused with nothing
written."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from engram.v1 import common_pb2, gateway_pb2

from gateway.core.audit import AuditEvent, AuditLog
from gateway.core.principal import Tier
from gateway.core.redis_state import Keyspace
from gateway.core.state import GatewayState, LocalState, RedisState
from gateway.core.state_copy import copy_state
from services.cli.gateway_state import run_copy
from services.runtime.errors import Conflict

# One instant for the whole module: events are written relative to it, and read by its day.
NOW = datetime.now(UTC)
TODAY = NOW.date()


def _settle(monkeypatch: pytest.MonkeyPatch, keys: Keyspace) -> None:
    monkeypatch.setenv("ENGRAM_GATEWAY_REDIS_URL", keys.url)
    monkeypatch.setenv("ENGRAM_GATEWAY_STATE_KEY_PREFIX", keys.prefix)


def _redis(keys: Keyspace) -> RedisState:
    return RedisState(keys.url, keys.prefix, 10_000)


def _fill(state: GatewayState) -> dict[str, str]:
    """Two tokens (one used, one rotated inside its grace), two stores, audit events on three
    days; returns the secrets by token id."""
    tokens = state.tokens()
    admin, admin_secret = tokens.create(Tier.ADMIN, None, "ops")
    writer, old_secret = tokens.create(Tier.WRITE, ["alpha"], "agent")
    tokens.authenticate(old_secret)  # a use, recorded
    _, writer_secret = tokens.rotate(writer.id, grace_s=3600)
    registry = state.registry()
    registry.create(gateway_pb2.StoreSpec(name="alpha"), placement={"retrieval": "retrieval-1"})
    registry.create(
        gateway_pb2.StoreSpec(name="beta", deployment_mode=common_pb2.DEPLOYMENT_MODE_COMPANION)
    )
    log = state.audit_log()
    for days_ago, operation in [(3, "CreateStore"), (3, "AddDrawer"), (1, "Search"), (0, "X")]:
        at = NOW - timedelta(days=days_ago)
        log.append(AuditEvent(at.isoformat(), admin.id, "admin", operation, "alpha", (), "ok"))
    return {admin.id: admin_secret, writer.id: writer_secret}


def _audit(state: GatewayState, days_ago: int | None = None) -> list[tuple[str, str]]:
    """The events of all of the last ten days, or of one day only."""
    since = TODAY - timedelta(days=10 if days_ago is None else days_ago)
    # A live Redis log files events by arrival, which may be past midnight by now.
    until = TODAY + timedelta(days=1) if days_ago is None else since
    return [(e.at, e.operation) for e in AuditLog(state.audit_backend()).read(since, until)]


def _assert_same(source: GatewayState, target: GatewayState, secrets: dict[str, str]) -> None:
    for token_id, secret in secrets.items():
        principal = target.tokens().authenticate(secret)
        assert principal.token_id == token_id, f"{token_id}'s own secret must work after a copy"
    assert [r.id for r in target.tokens().list()] == [r.id for r in source.tokens().list()]
    used = {r.id: r.last_used_at for r in target.tokens().list()}
    assert all(used[i] is not None for i in secrets), f"last uses were lost: {used}"
    assert [s.SerializeToString() for s in target.registry().list()] == [
        s.SerializeToString() for s in source.registry().list()
    ], "the registry's entries must be copied exactly (settings, placement, times)"
    assert _audit(target) == _audit(source), "audit events must keep their times and order"
    for days_ago in (3, 1, 0):
        day = (TODAY - timedelta(days=days_ago)).isoformat()
        # Under the day of their own time (a live Redis log files events at arrival instead).
        expected = [(at, op) for at, op in _audit(source) if at.startswith(day)]
        assert _audit(target, days_ago) == expected, (
            f"the events of {day} must be listed under their own day"
        )


def test_local_state_copied_to_redis_works_there_as_it_did(
    keyspace: Keyspace,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    local = LocalState(tmp_path / "data" / "gateway")
    secrets = _fill(local)
    _settle(monkeypatch, keyspace)
    assert run_copy(argparse.Namespace(to="redis", data_dir=tmp_path / "data")) == 0
    said = capsys.readouterr().out
    assert "copied 2 token(s), 2 store(s) and 4 audit event(s)" in said, said
    assert "rotated-out secrets still in their grace period" in said, said
    _assert_same(local, _redis(keyspace), secrets)


def test_redis_state_copied_to_local_files_works_there_as_it_did(
    keyspace: Keyspace, tmp_path: Path
) -> None:
    shared = _redis(keyspace)
    secrets = _fill(shared)
    local = LocalState(tmp_path / "gateway")
    copied = copy_state(shared, local, target_name="local")
    assert (copied.tokens, copied.stores, copied.audit_events) == (2, 2, 4)
    _assert_same(shared, local, secrets)


def test_a_copy_into_a_state_that_holds_anything_is_refused_and_writes_nothing(
    keyspace: Keyspace, tmp_path: Path
) -> None:
    local = LocalState(tmp_path / "gateway")
    _fill(local)
    shared = _redis(keyspace)
    shared.registry().create(gateway_pb2.StoreSpec(name="already-here"))
    with pytest.raises(Conflict, match="already holds 1 store"):
        copy_state(local, shared, target_name="Redis")
    assert shared.tokens().list() == [], "a refused copy wrote tokens"
    assert [s.spec.name for s in shared.registry().list()] == ["already-here"]
    assert _audit(shared) == []


def test_files_a_running_gateway_holds_are_not_copied(
    keyspace: Keyspace,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    running = LocalState(tmp_path / "data" / "gateway")
    _fill(running)
    running.claim("127.0.0.1", 8080)  # the gateway serving these files
    try:
        _settle(monkeypatch, keyspace)
        assert run_copy(argparse.Namespace(to="redis", data_dir=tmp_path / "data")) == 1
        said = capsys.readouterr().out
        assert "port 8080" in said and "stop it first" in said, said
        assert _redis(keyspace).tokens().list() == [], "nothing may be copied"
    finally:
        running.release()


def test_an_unreadable_audit_line_is_counted_and_the_rest_copied(
    keyspace: Keyspace, tmp_path: Path
) -> None:
    local = LocalState(tmp_path / "gateway")
    _fill(local)
    local.audit_backend().append(TODAY, '{"torn": ')
    copied = copy_state(local, _redis(keyspace), target_name="Redis")
    assert (copied.audit_events, copied.unreadable_audit_lines) == (4, 1)


def test_events_up_to_the_newest_kept_are_copied_whatever_the_clock_says(
    keyspace: Keyspace, tmp_path: Path
) -> None:
    local = LocalState(tmp_path / "gateway")
    _fill(local)
    later = NOW + timedelta(days=2)  # a gateway whose clock ran ahead
    local.audit_log().append(AuditEvent(later.isoformat(), "tok", "admin", "Late", "", (), "ok"))
    copied = copy_state(local, _redis(keyspace), target_name="Redis")
    assert copied.audit_events == 5, f"the event of {later.date()} must be copied too"
