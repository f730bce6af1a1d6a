"""The launcher's restart back-off: 1 s, doubling per crash inside the window, capped; a crash
loop (more than the limit inside the window) gives up."""

from __future__ import annotations

from services.launcher.restarts import RestartPolicy

POLICY = RestartPolicy(first_delay_s=1.0, max_delay_s=8.0, limit=4, window_s=100.0)


def test_the_wait_doubles_per_crash_in_the_window_up_to_the_cap() -> None:
    crashes: list[float] = []
    waits = []
    for at in (0.0, 1.0, 2.0, 3.0):
        crashes.append(at)
        waits.append(POLICY.delay(crashes, at))
    assert waits == [1.0, 2.0, 4.0, 8.0]
    assert RestartPolicy(max_delay_s=3.0).delay([0, 1, 2, 3], 3) == 3.0, "capped"


def test_crashes_older_than_the_window_are_forgiven() -> None:
    assert POLICY.delay([0.0, 1.0, 2.0, 3.0, 500.0], 500.0) == 1.0


def test_more_crashes_than_the_limit_inside_the_window_give_up() -> None:
    assert POLICY.delay([0.0, 1.0, 2.0, 3.0], 3.0) == 8.0, "the limit itself is still restarted"
    assert POLICY.delay([0.0, 1.0, 2.0, 3.0, 4.0], 4.0) is None
