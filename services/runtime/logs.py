"""Structured logging for every tier: one JSON object per line (or plain text for humans)."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

from services.runtime.tracing import current_ids

_RESERVED = frozenset(vars(logging.makeLogRecord({})).keys()) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """Renders a record as one JSON line; `extra=` fields become top-level keys."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self._service = service

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "service": self._service,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        ids = current_ids()
        if ids is not None:  # written inside a span: the line leads to its trace
            entry["trace_id"], entry["span_id"] = ids
        for key, value in vars(record).items():
            if key not in _RESERVED and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


def configure_logging(service: str, *, level: str = "INFO", fmt: str = "json") -> None:
    """Install the process-wide handler. Called once, from a tier's `__main__`."""
    handler = logging.StreamHandler(sys.stderr)
    if fmt == "json":
        handler.setFormatter(JsonFormatter(service))
    else:
        handler.setFormatter(
            logging.Formatter(f"%(asctime)s {service} %(levelname)s %(name)s: %(message)s")
        )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    # Chatty third-party loggers stay at WARNING unless we are debugging.
    if level.upper() != "DEBUG":
        for name in ("httpx", "urllib3", "transformers", "sentence_transformers", "arq"):
            logging.getLogger(name).setLevel(logging.WARNING)
