"""What `engram up` prints once the stack is up: where each face of the gateway listens and
how to authenticate against it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from services.launcher.dev_token import AdminToken
from services.launcher.probes import http_base

# The gateway's public gRPC face, read here as the gateway reads it (gateway/settings.py), so
# the launcher needs no gateway import.
GRPC_PORT_VAR = "ENGRAM_GATEWAY_GRPC_PORT"
GRPC_ENABLED_VAR = "ENGRAM_GATEWAY_GRPC_ENABLED"
DEFAULT_GRPC_PORT = 50050
_FALSE = ("0", "false", "f", "n", "no", "off")  # what pydantic reads as False
_WILDCARDS = ("0.0.0.0", "::", "")


def stack_summary(
    host: str, gateway_port: int, token: AdminToken, run_dir: Path, environ: Mapping[str, str]
) -> list[str]:
    """The lines printed once every process is ready."""
    shown = "127.0.0.1" if host in _WILDCARDS else host
    base = http_base(shown, gateway_port)
    return [
        "engram: the stack is up. Ctrl-C stops everything.",
        f"  REST     {base}/v1  (OpenAPI docs at {base}/docs)",
        f"  MCP      {base}/mcp  (streamable HTTP; stdio agents run engram-mcp, docs/mcp.md)",
        f"  gRPC     {_grpc_where(shown, environ)}",
        f"  logs     {run_dir.resolve()}/<tier>.log",
        *_token_lines(token, base),
    ]


def _grpc_where(host: str, environ: Mapping[str, str]) -> str:
    if environ.get(GRPC_ENABLED_VAR, "").strip().lower() in _FALSE:
        return f"off ({GRPC_ENABLED_VAR})"
    port = environ.get(GRPC_PORT_VAR) or str(DEFAULT_GRPC_PORT)
    if port == "0":
        return "a free port the gateway picks (see its log)"
    return f"{host}:{port}  (engram.v1, the same tokens)"


def _token_lines(token: AdminToken, base: str) -> list[str]:
    if token.value is None:
        variable = token.source
        return [
            f"  admin token: from {variable} in the environment (not shown)",
            f'    curl -s -H "Authorization: Bearer ${variable}" {base}/v1/stores',
        ]
    fresh = "created now, " if token.created else ""
    return [
        f"  admin token (development; {fresh}kept in {token.source}):",
        f"    export TOKEN={token.value}",
        f'    curl -s -H "Authorization: Bearer $TOKEN" {base}/v1/stores',
    ]
