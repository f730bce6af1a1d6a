"""Run the gateway: `engram-gateway` or `python -m gateway`.

Takes the data directory's lock (a second gateway on it is refused, naming the first), makes
sure an admin can get in (ENGRAM_ADMIN_TOKEN, or on a first start a new admin token printed
once), then serves HTTP with uvicorn until SIGTERM/SIGINT.
"""

from __future__ import annotations

import sys

import uvicorn

from gateway.app import create_app
from gateway.core.wiring import GatewayDeps
from gateway.settings import GatewaySettings
from services.runtime.errors import EngramError
from services.runtime.logs import configure_logging
from services.runtime.tls import TlsSettings
from services.runtime.tracing import configure_tracing


def main() -> int:
    settings = GatewaySettings()
    configure_logging("gateway", level=settings.log_level, fmt=settings.log_format)
    configure_tracing("gateway")
    deps = GatewayDeps(settings)
    try:
        created = deps.start_sync()
    except EngramError as error:
        print(f"engram-gateway: {error.message}", file=sys.stderr, flush=True)
        return 1
    if created is not None:
        print(
            "engram-gateway: first start: created an admin token. It is shown only this once;\n"
            f"store it now (or set ENGRAM_ADMIN_TOKEN):\n\n    {created}\n",
            flush=True,
        )
    app = create_app(settings, deps)
    tls = TlsSettings().check()
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
        timeout_keep_alive=settings.keep_alive_s,
        # HTTPS with this process's certificate when ENGRAM_TLS_* names one (runtime/tls.py).
        ssl_certfile=str(tls.cert_file) if tls.serves_tls else None,
        ssl_keyfile=str(tls.key_file) if tls.serves_tls else None,
        access_log=False,
        log_config=None,  # keep the structured logging configured above
        lifespan="on",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
