"""One gateway per data directory: a second one is refused with a message naming the first.

The lock is an exclusive `flock` on `<state_dir>/gateway.lock`, held for the process's life
(the kernel drops it when the process dies, so a crash leaves no stale lock). The file's text
says who holds it — pid, host and port — for the refusal message.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from typing import IO

from services.runtime.errors import Conflict


class StateLock:
    """The exclusive lock of one gateway state directory."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "gateway.lock"
        self._file: IO[str] | None = None

    @property
    def held(self) -> bool:
        return self._file is not None

    def acquire(self, host: str, port: int) -> None:
        """Take the lock, or raise Conflict naming the gateway that holds it."""
        if self._file is not None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = _describe(handle.read())
            handle.close()
            raise Conflict(
                f"another gateway ({holder}) is already running on the data directory "
                f"{self.path.parent.parent}; stop it first, or give this one its own "
                "ENGRAM_DATA_DIR"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(json.dumps({"pid": os.getpid(), "host": host, "port": port}))
        handle.flush()
        self._file = handle

    def release(self) -> None:
        if self._file is None:
            return
        with contextlib.suppress(OSError):
            self._file.seek(0)
            self._file.truncate()
        fcntl.flock(self._file, fcntl.LOCK_UN)
        self._file.close()
        self._file = None


def _describe(text: str) -> str:
    try:
        holder = json.loads(text)
        return f"pid {holder['pid']}, port {holder['port']} on {holder['host']}"
    except (ValueError, KeyError, TypeError):
        return "a process whose pid was not recorded"
