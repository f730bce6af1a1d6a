"""Write the gateway's OpenAPI document where the dashboard generates its API types from.

`make dashboard-types` runs this (`python -m gateway.openapi_snapshot`), then `npm run types`
(openapi-typescript) in gateway/dashboard; tests/gateway/test_dashboard.py fails when either
file is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from gateway.app import create_app
from gateway.settings import GatewaySettings

SNAPSHOT = Path(__file__).resolve().parent / "dashboard" / "openapi.json"


def current_document() -> dict[str, Any]:
    """The OpenAPI document the gateway serves at /openapi.json (no process needed)."""
    document: dict[str, Any] = create_app(GatewaySettings()).openapi()
    return document


def render(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> int:
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else SNAPSHOT
    target.write_text(render(current_document()), encoding="utf-8")
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
