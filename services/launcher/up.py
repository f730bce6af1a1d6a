"""`engram up`: bring the stack up (Redis, the tiers, the gateway), print where its faces
listen and the admin token to use, stop everything on Ctrl-C."""

from __future__ import annotations

import os
import signal
import sys
import time
from types import FrameType

from services.launcher.settings import LauncherSettings
from services.launcher.summary import stack_summary
from services.launcher.supervisor import Stack
from services.runtime.errors import EngramError


class _Stop(Exception):
    """Raised from the signal handler to unwind into the `finally` that stops the stack."""


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop(signal.Signals(signum).name)


def run_up(settings: LauncherSettings) -> int:
    """Run the stack until SIGINT/SIGTERM, restarting a process that dies, or until one is in
    a crash loop; returns the exit code."""
    signal.signal(signal.SIGTERM, _raise_stop)
    signal.signal(signal.SIGINT, _raise_stop)
    stack = Stack(settings)
    code = 0
    try:
        stack.say(f"engram: starting the stack (data under {settings.data_dir.resolve()})")
        stack.start()
        assert stack.admin is not None  # set by start()
        gateway = stack.running("gateway")
        for line in stack_summary(
            settings.host, gateway.port, stack.admin, stack.run_dir, os.environ
        ):
            stack.say(line)
        while True:
            reason = stack.supervise(time.monotonic())
            if reason is not None:
                stack.say(f"engram: {reason}")
                code = 1
                break
            time.sleep(0.5)
    except _Stop as stop:
        stack.say(f"engram: {stop} received, stopping")
    except EngramError as error:
        print(f"engram: {error.message}", file=sys.stderr, flush=True)
        code = 1
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stack.stop()
        stack.say("engram: stopped")
    return code
