"""`engram token create|list|revoke` on a data directory, seen by a running gateway."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from services.cli.__main__ import build_parser
from tests.gateway.conftest import Tiers, gateway_settings, running_gateway


def _engram(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    args = build_parser().parse_args(list(argv))
    code = args.func(args)
    return code, capsys.readouterr().out


async def test_cli_tokens_work_at_a_running_gateway(
    tiers: Tiers, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "data"
    settings = gateway_settings(tiers, data)
    async with running_gateway(settings) as api:
        await api.create_store("gw-cli-store")
        code, out = _engram(
            capsys, "token", "--data-dir", str(data), "create", "--tier", "read",
            "--store", "gw-cli-store", "--label", "from the cli",
        )  # fmt: skip
        assert code == 0, out
        token = re.search(r"egm_\S+", out)
        assert token is not None, out
        token_id = re.search(r"tok_[0-9a-f]+", out)
        assert token_id is not None, out

        headers = api.auth(token.group())
        assert (await api.client.get("/v1/stores/gw-cli-store", headers=headers)).status_code == 200
        code, out = _engram(capsys, "token", "--data-dir", str(data), "list")
        assert token_id.group() in out and token.group() not in out

        code, out = _engram(capsys, "token", "--data-dir", str(data), "revoke", token_id.group())
        assert code == 0, out
        refused = await api.client.get("/v1/stores/gw-cli-store", headers=headers)
        assert refused.status_code == 401
