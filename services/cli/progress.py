"""A job's progress at a terminal: one line, redrawn in place on a TTY and printed only when it
changes elsewhere (logs, pipes), on stderr so that stdout stays the command's result."""

from __future__ import annotations

import sys
from typing import Any, Final, TextIO

from engram.client import TERMINAL_JOB_STATES
from engram.v1 import common_pb2

BAR_WIDTH: Final = 24


def state_name(state: Any) -> str:
    """``JOB_STATE_RUNNING`` → ``running``: the proto's own name for the state."""
    names = common_pb2.JobState.DESCRIPTOR.values_by_number
    found = names.get(int(state))
    return found.name.removeprefix("JOB_STATE_").lower() if found else "unknown"


def progress_line(job: Any) -> str:
    """``ingest_files j_… [#########·······] 3/8 · 120 chunks · running``."""
    progress = job.progress
    done, total = progress.items_done, progress.items_total
    if total:
        filled = round(BAR_WIDTH * min(done, total) / total)
        bar = f"[{'#' * filled}{'·' * (BAR_WIDTH - filled)}] {done}/{total}"
    else:
        bar = f"{done} done" if done else "starting"
    units = f" · {progress.units_done} {progress.unit}" if progress.unit else ""
    errors = f" · {job.errors_total} errors" if job.errors_total else ""
    return f"{job.kind} {job.id} {bar}{units}{errors} · {state_name(job.state)}"


class ProgressPrinter:
    """Called with each state of a job; draws its line."""

    def __init__(self, stream: TextIO | None = None, *, quiet: bool = False) -> None:
        self._stream = stream or sys.stderr
        self._tty = self._stream.isatty()
        self._quiet = quiet
        self._last = ""

    def __call__(self, job: Any) -> None:
        if self._quiet:
            return
        line = progress_line(job)
        if line == self._last:
            return
        if self._tty:
            padding = " " * max(0, len(self._last) - len(line))
            self._stream.write("\r" + line + padding)
            if job.state in TERMINAL_JOB_STATES:
                self._stream.write("\n")
        else:
            self._stream.write(line + "\n")
        self._stream.flush()
        self._last = line
