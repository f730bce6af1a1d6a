"""The gateway's bootstrap admin token from a file (a mounted Kubernetes Secret)."""

from __future__ import annotations

from pathlib import Path

from gateway.settings import GatewaySettings


def test_the_token_file_wins_and_a_missing_one_counts_as_empty(tmp_path: Path) -> None:
    token_file = tmp_path / "admin-token"
    token_file.write_text("egm_from-a-mounted-secret-0123456789\n")
    settings = GatewaySettings(
        admin_token="egm_from-the-env-0123456789", admin_token_file=token_file
    )
    assert settings.bootstrap_admin_token() == "egm_from-a-mounted-secret-0123456789"
    absent = GatewaySettings(admin_token="egm_from-the-env", admin_token_file=tmp_path / "nope")
    assert absent.bootstrap_admin_token() == "", "an optional Secret that is not there"
    assert GatewaySettings(admin_token="egm_env-only").bootstrap_admin_token() == "egm_env-only"
