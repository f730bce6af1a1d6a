"""`engram up` as a real process: Redis started when none answers, every tier SERVING, the
gateway ready with the printed development token working, a tier killed with SIGKILL
restarted on its port while the rest keeps serving, and a Ctrl-C leaves no process behind."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.launcher.probes import GrpcHealth
from services.launcher.tiers import TIERS
from tests.ports import free_ports

_TOKEN_LINE = re.compile(r"^\s*export TOKEN=(\S+)$", re.MULTILINE)


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


class _Output:
    """The launcher's stdout, read on a thread so the test can look at it while it runs."""

    def __init__(self, stream: IO[str] | None) -> None:
        assert stream is not None, "stdout must be a pipe"
        self._lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self._lines.append(line)

    @property
    def text(self) -> str:
        return "".join(self._lines)

    def finish(self) -> str:
        self._thread.join(timeout=10)
        return self.text


def _assert_grpc_serving(service: str, port: int) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=5
        )
    assert reply.status == health_pb2.HealthCheckResponse.SERVING, f"{service} on {port}"


def _assert_gateway_takes_the_printed_token(port: int, token: str) -> None:
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", trust_env=False, timeout=10) as http:
        ready = http.get("/readyz")
        assert ready.status_code == 200, f"/readyz: {ready.status_code} {ready.text}"
        anonymous = http.get("/v1/stores")
        assert anonymous.status_code == 401, f"no token: {anonymous.status_code}"
        stores = http.get("/v1/stores", headers={"Authorization": f"Bearer {token}"})
        assert stores.status_code == 200, f"dev token: {stores.status_code} {stores.text}"


@pytest.mark.slow
def test_up_starts_redis_every_tier_and_the_gateway_then_stops_without_orphans(
    tmp_path: Path,
) -> None:
    redis_port, gateway_grpc_port, *tier_ports = free_ports(2 + len(TIERS))
    env = {k: v for k, v in os.environ.items() if not k.endswith("ADMIN_TOKEN")}
    env.update(
        ENGRAM_DATA_DIR=str(tmp_path),
        ENGRAM_REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
        ENGRAM_EMBEDDER_ALLOW_CPU="1",
        ENGRAM_LOG_FORMAT="text",
        # The gateway's public gRPC face, so a parallel run cannot collide on its default.
        ENGRAM_GATEWAY_GRPC_PORT=str(gateway_grpc_port),
    )
    ports = {}
    for spec, port in zip(TIERS, tier_ports, strict=True):
        ports[spec.name] = port
        env[f"{spec.env_prefix}PORT"] = str(ports[spec.name])
    launcher = subprocess.Popen(
        [sys.executable, "-m", "services.cli", "up"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    output = _Output(launcher.stdout)
    state_file = tmp_path / "run" / "stack.json"
    try:
        _wait_for(
            lambda: _TOKEN_LINE.search(output.text) or launcher.poll() is not None,
            300,
            "the stack to be up and print its token",
        )
        assert launcher.poll() is None, f"launcher exited early:\n{output.finish()}"
        state = json.loads(state_file.read_text())
        assert state["redis"]["pid"], "no Redis answered, so the launcher must have started one"
        assert [t["name"] for t in state["tiers"]] == [s.name for s in TIERS]
        for tier in state["tiers"]:
            probe = next(s for s in TIERS if s.name == tier["name"]).probe
            if isinstance(probe, GrpcHealth):
                _assert_grpc_serving(probe.service, tier["port"])

        match = _TOKEN_LINE.search(output.text)
        assert match is not None
        token = match.group(1)
        token_file = tmp_path / "run" / "dev-token"
        assert token_file.read_text().strip() == token, "the printed token is the kept one"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600, "an admin token: owner only"
        assert f"http://127.0.0.1:{ports['gateway']}/docs" in output.text
        _assert_gateway_takes_the_printed_token(ports["gateway"], token)

        # A tier dies (kill -9): the launcher restarts it; meanwhile /readyz names it.
        corpus = next(t for t in state["tiers"] if t["name"] == "corpus")
        os.kill(corpus["pid"], signal.SIGKILL)
        with httpx.Client(base_url=f"http://127.0.0.1:{ports['gateway']}", trust_env=False) as http:
            _wait_for(
                lambda: http.get("/readyz").status_code == 503, 20, "/readyz to report corpus"
            )
            assert http.get("/readyz").json()["tiers"]["corpus"] != "SERVING"
        _wait_for(lambda: "corpus is back" in output.text, 120, "the corpus tier to come back")
        assert "corpus exited with code -9; restarting it" in output.text, output.text
        assert launcher.poll() is None, "one dead tier must not stop the stack"
        state = json.loads(state_file.read_text())
        restarted = next(t for t in state["tiers"] if t["name"] == "corpus")
        assert restarted["pid"] != corpus["pid"] and restarted["port"] == corpus["port"]
        _assert_grpc_serving("engram.v1.CorpusService", corpus["port"])
        with httpx.Client(base_url=f"http://127.0.0.1:{ports['gateway']}", trust_env=False) as http:
            # The gateway's channel reconnects within its capped back-off (2 s).
            _wait_for(lambda: http.get("/readyz").status_code == 200, 15, "/readyz ready again")
        _assert_gateway_takes_the_printed_token(ports["gateway"], token)

        pids = [state["redis"]["pid"], *(t["pid"] for t in state["tiers"])]
        launcher.send_signal(signal.SIGINT)
        launcher.wait(timeout=60)
        text = output.finish()
        assert launcher.returncode == 0, f"launcher exit code {launcher.returncode}:\n{text}"
        _wait_for(lambda: not any(_alive(pid) for pid in pids), 15, f"processes {pids} to end")
        assert (tmp_path / "redis").is_dir(), "the started Redis persists under the data dir"
    finally:
        if launcher.poll() is None:
            launcher.kill()
            launcher.wait()
