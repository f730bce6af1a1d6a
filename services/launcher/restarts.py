"""When `engram up` restarts a process that died: exponential back-off, and a limit.

A tier that crashes is restarted after `first_delay_s`, doubling with each crash inside the
window up to `max_delay_s`, so a tier that crashes at once again does not spin. More than
`limit` crashes inside `window_s` is a crash loop that no restart will fix: the launcher then
stops the stack and says so, rather than flapping forever. Pure: the supervisor passes the
crash times it saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RestartPolicy:
    first_delay_s: float = 1.0
    max_delay_s: float = 60.0
    limit: int = 10
    window_s: float = 600.0

    def recent(self, crashes: Sequence[float], now: float) -> list[float]:
        """The crashes inside the window ending `now`."""
        return [at for at in crashes if now - at <= self.window_s]

    def delay(self, crashes: Sequence[float], now: float) -> float | None:
        """How long to wait before restarting a process that crashed at `crashes` (the last
        one just now); None when it crashed more than `limit` times inside the window."""
        recent = self.recent(crashes, now)
        if len(recent) > self.limit:
            return None
        return float(min(self.max_delay_s, self.first_delay_s * 2 ** max(0, len(recent) - 1)))
