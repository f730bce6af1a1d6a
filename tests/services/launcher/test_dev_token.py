"""The development admin token of `engram up`: created once owner-only, reused, never used
(nor printed) when the operator sets an admin token."""

from __future__ import annotations

import stat
from pathlib import Path

from services.launcher.dev_token import admin_token, saved_dev_token
from services.launcher.summary import stack_summary


def test_first_start_creates_an_owner_only_token_that_later_starts_reuse(tmp_path: Path) -> None:
    first = admin_token(tmp_path / "run", {})
    assert first.created and first.value and len(first.value) >= 32
    path = tmp_path / "run" / "dev-token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600, "an admin token is readable by its owner"
    second = admin_token(tmp_path / "run", {})
    assert (second.value, second.created) == (first.value, False), "a restart keeps the token"


def test_a_truncated_token_file_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "dev-token").write_text("short\n")
    token = admin_token(tmp_path, {})
    assert token.created and token.value and token.value != "short"


def test_an_admin_token_from_the_environment_wins_and_no_file_is_written(tmp_path: Path) -> None:
    for variable in ("ENGRAM_ADMIN_TOKEN", "ENGRAM_GATEWAY_ADMIN_TOKEN"):
        token = admin_token(tmp_path, {variable: "x" * 40})
        assert token.value is None and token.source == variable
    assert not (tmp_path / "dev-token").exists()


def test_the_summary_prints_the_dev_token_with_a_curl_line(tmp_path: Path) -> None:
    token = admin_token(tmp_path, {})
    text = "\n".join(stack_summary("0.0.0.0", 8081, token, tmp_path, {}))
    assert f"export TOKEN={token.value}" in text
    assert 'curl -s -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8081/v1/stores' in text
    for where in ("http://127.0.0.1:8081/docs", "http://127.0.0.1:8081/mcp", "127.0.0.1:50050"):
        assert where in text, f"the summary says where {where} is"


def test_the_summary_never_prints_a_token_from_the_environment(tmp_path: Path) -> None:
    secret = "s3cret-" * 6
    token = admin_token(tmp_path, {"ENGRAM_ADMIN_TOKEN": secret})
    env = {"ENGRAM_ADMIN_TOKEN": secret, "ENGRAM_GATEWAY_GRPC_PORT": "50999"}
    text = "\n".join(stack_summary("127.0.0.1", 8080, token, tmp_path, env))
    assert secret not in text
    assert "from ENGRAM_ADMIN_TOKEN" in text and "127.0.0.1:50999" in text


def test_the_summary_says_when_the_gateway_serves_no_grpc(tmp_path: Path) -> None:
    token = admin_token(tmp_path, {})
    text = "\n".join(
        stack_summary("127.0.0.1", 8080, token, tmp_path, {"ENGRAM_GATEWAY_GRPC_ENABLED": "false"})
    )
    assert "gRPC     off" in text and "50050" not in text


def test_saved_dev_token_is_what_the_launcher_kept_or_none(tmp_path: Path) -> None:
    assert saved_dev_token(tmp_path / "run") is None, "no token file yet"
    kept = admin_token(tmp_path / "run", {})
    assert saved_dev_token(tmp_path / "run") == kept.value
