"""One real stack of processes per fault-test module (tests/faults/stack.py); each test works
in its own store, so a test's faults leave the others' data alone."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.faults.stack import FaultStack


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultStack]:
    running = FaultStack(tmp_path_factory.mktemp("faults"))
    try:
        running.start_all()
        yield running
    finally:
        running.stop_all()
