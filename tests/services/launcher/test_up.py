"""`engram up` as a real process: Redis started when none answers, every tier SERVING, and a
Ctrl-C leaves no process behind."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.launcher.tiers import TIERS


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes; /proc tells us.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split()[2] != "Z"


def _wait_for(predicate: object, timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


@pytest.mark.slow
def test_up_starts_redis_and_every_tier_then_stops_without_orphans(tmp_path: Path) -> None:
    redis_port = _free_port()
    env = dict(os.environ)
    env.update(
        ENGRAM_DATA_DIR=str(tmp_path),
        ENGRAM_REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
        ENGRAM_EMBEDDER_ALLOW_CPU="1",
        ENGRAM_LOG_FORMAT="text",
    )
    ports = {}
    for spec in TIERS:
        ports[spec.name] = _free_port()
        env[f"{spec.env_prefix}PORT"] = str(ports[spec.name])
    launcher = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "up"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    state_file = tmp_path / "run" / "stack.json"
    try:
        _wait_for(
            lambda: state_file.exists() or launcher.poll() is not None, 240, "the stack to be up"
        )
        assert launcher.poll() is None, f"launcher exited early:\n{launcher.stdout.read()}"  # type: ignore[union-attr]
        state = json.loads(state_file.read_text())
        assert state["redis"]["pid"], "no Redis answered, so the launcher must have started one"
        for tier in state["tiers"]:
            with grpc.insecure_channel(f"127.0.0.1:{tier['port']}") as channel:
                spec = next(s for s in TIERS if s.name == tier["name"])
                reply = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service=spec.health_service), timeout=5
                )
            assert reply.status == health_pb2.HealthCheckResponse.SERVING, tier
        pids = [state["redis"]["pid"], *(t["pid"] for t in state["tiers"])]
        launcher.send_signal(signal.SIGINT)
        launcher.wait(timeout=60)
        output = launcher.stdout.read()  # type: ignore[union-attr]
        assert launcher.returncode == 0, f"launcher exit code {launcher.returncode}:\n{output}"
        _wait_for(lambda: not any(_alive(pid) for pid in pids), 15, f"processes {pids} to end")
        assert (tmp_path / "redis").is_dir(), "the started Redis persists under the data dir"
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
