"""The one `Authorization: Bearer <token>` parser the MCP and gRPC faces share."""

from __future__ import annotations

import pytest

from gateway.core.tokens import bearer_credentials


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer egm_abc", "egm_abc"),
        ("bearer   egm_abc  ", "egm_abc"),
        ("  BEARER egm_abc", "egm_abc"),
        ("Basic eDp5", None),
        ("Bearer", None),
        ("Bearer    ", None),
        ("egm_abc", None),
        ("", None),
    ],
)
def test_bearer_credentials(header: str, token: str | None) -> None:
    assert bearer_credentials(header) == token, f"{header!r} should give {token!r}"
