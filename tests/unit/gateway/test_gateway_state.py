"""Where a gateway keeps its state, as its settings say: local files held by one gateway, or
Redis shared by many (no lock), a Redis that does not answer refused at start in words, and
`engram token` working on whichever the settings name."""

from __future__ import annotations

import argparse
import socket
from pathlib import Path

import pytest

from gateway.core.principal import Tier
from gateway.core.redis_state import Keyspace, RedisTokens
from gateway.core.state import LocalState, RedisState, open_state
from gateway.core.tokens import TokenStore
from gateway.core.wiring import GatewayDeps
from gateway.settings import GatewaySettings
from services.cli.tokens import run_token
from services.runtime.errors import Unauthenticated, Unavailable

ADMIN = "egm_shared-state-admin-0123456789"


def _redis_settings(keys: Keyspace, data_dir: Path) -> GatewaySettings:
    return GatewaySettings(
        data_dir=data_dir,
        admin_token=ADMIN,
        state_backend="redis",
        redis_url=keys.url,
        state_key_prefix=keys.prefix,
    )


def test_the_state_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_GATEWAY_STATE_BACKEND", "redis")
    monkeypatch.setenv("ENGRAM_GATEWAY_STATE_KEY_PREFIX", "blue:gateway")
    monkeypatch.setenv("ENGRAM_GATEWAY_AUDIT_MAX_EVENTS", "5000")
    settings = GatewaySettings()
    assert (settings.state_backend, settings.state_key_prefix) == ("redis", "blue:gateway")
    assert settings.audit_max_events == 5000
    assert isinstance(open_state(settings), RedisState)
    assert isinstance(open_state(GatewaySettings(state_backend="local")), LocalState)


async def test_gateways_on_redis_share_the_state_and_take_no_lock(
    keyspace: Keyspace, tmp_path: Path
) -> None:
    settings = _redis_settings(keyspace, tmp_path / "data")
    first, second = GatewayDeps(settings), GatewayDeps(settings)
    try:
        assert first.start_sync() is None and second.start_sync() is None, "no refusal, no token"
        assert first.tokens is not None and second.tokens is not None
        assert second.tokens.authenticate(ADMIN).tier is Tier.ADMIN
        _, token = first.tokens.create(Tier.READ)
        assert second.tokens.authenticate(token).tier is Tier.READ
        assert not (settings.state_dir / "tokens.sqlite3").exists(), "nothing kept locally"
        assert not (settings.state_dir / "gateway.lock").exists()
    finally:
        await first.close()
        await second.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_a_redis_that_does_not_answer_is_refused_in_words(tmp_path: Path) -> None:
    url = f"redis://:hunter2-secret@127.0.0.1:{_closed_port()}/0"
    settings = GatewaySettings(
        data_dir=tmp_path, admin_token=ADMIN, state_backend="redis", redis_url=url
    )
    deps = GatewayDeps(settings)
    with pytest.raises(Unavailable) as refused:
        deps.start_sync()
    message = refused.value.message
    assert "is not answering" in message and "ENGRAM_REDIS_URL" in message, message
    assert "hunter2-secret" not in message and ":***@" in message, "the password is redacted"
    deps.state.release()


def test_a_request_while_redis_is_gone_is_unavailable_not_internal(tmp_path: Path) -> None:
    url = f"redis://127.0.0.1:{_closed_port()}/0"
    tokens = TokenStore(RedisTokens(RedisState(url, "engram-test:gone", 1000).keys))
    with pytest.raises(Unavailable, match="not answering"):
        tokens.authenticate("egm_some-token-of-enough-length")


def test_the_token_cli_uses_the_backend_the_settings_name(
    keyspace: Keyspace, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ENGRAM_GATEWAY_STATE_BACKEND", "redis")
    monkeypatch.setenv("ENGRAM_GATEWAY_REDIS_URL", keyspace.url)
    monkeypatch.setenv("ENGRAM_GATEWAY_STATE_KEY_PREFIX", keyspace.prefix)
    create = argparse.Namespace(
        data_dir=None, token_command="create", tier="write", store=["alpha"], label="cli"
    )
    assert run_token(create) == 0
    token = capsys.readouterr().out.strip().splitlines()[-1]
    gateway_side = TokenStore(RedisTokens(keyspace))
    record_id = gateway_side.authenticate(token).token_id
    assert run_token(argparse.Namespace(data_dir=None, token_command="revoke", id=record_id)) == 0
    with pytest.raises(Unauthenticated, match="not valid"):
        gateway_side.authenticate(token)
