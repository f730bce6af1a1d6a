"""A whole Engram stack as real processes on free loopback ports, for fault injection: its own
redis-server (configured as `engram up` configures one: append-only file, fsync per write),
the four gRPC tiers and the gateway, each started as `engram up` starts it
(`services.launcher.supervisor.spawn_tier`), each killable with SIGKILL and restartable on
the same data. Tests talk to it as users do, through the gateway's REST API."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis

from services.launcher.redis_supervisor import redis_server_args
from services.launcher.supervisor import spawn_tier, stop_process_group, wait_until_serving
from services.launcher.tiers import TIERS, TierSpec
from tests.ports import free_ports

SPECS = {spec.name: spec for spec in TIERS}
START_TIMEOUT_S = 180.0


def wait_for(
    predicate: Callable[[], Any], timeout_s: float, what: str, every_s: float = 0.1
) -> Any:
    """Poll until `predicate()` is truthy; its value. AssertionError naming `what` on timeout."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout_s:.0f} s")
        time.sleep(every_s)


@dataclass
class FaultStack:
    root: Path
    token: str = field(default_factory=lambda: "egm_faults-" + secrets.token_urlsafe(24))
    ports: dict[str, int] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    starts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = (*SPECS, "redis")
        self.ports.update(zip(names, free_ports(len(names)), strict=True))

    # ------------------------------------------------------------------ processes

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.ports['redis']}/0"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.ports['gateway']}"

    def _env(self, spec: TierSpec) -> dict[str, str]:
        env = dict(os.environ)
        env.update(spec.extra_env)
        prefix = spec.env_prefix
        env[f"{prefix}PORT"] = str(self.ports[spec.name])
        env[f"{prefix}HOST"] = "127.0.0.1"
        env[f"{prefix}DATA_DIR"] = str(self.root if spec.nests_data_dir else self.root / spec.name)
        env[f"{prefix}LOG_FORMAT"] = "text"
        env["ENGRAM_REDIS_URL"] = self.redis_url
        env["ENGRAM_EMBEDDER_ALLOW_CPU"] = "1"
        for other in TIERS:
            if other.speaks_grpc:
                env[f"ENGRAM_{other.name.upper()}_ADDR"] = f"127.0.0.1:{self.ports[other.name]}"
        # A killed worker's job is taken up again within seconds, not the production half-minute.
        for tier in ("CORPUS", "AUTHORING"):
            env[f"ENGRAM_{tier}_JOB_LEASE_S"] = "3"
            env[f"ENGRAM_{tier}_JOB_RETRY_DELAY_S"] = "1"
        if spec.admin_token_var:
            env[spec.admin_token_var] = self.token
        return env

    def log(self, name: str) -> Path:
        return self.root / "logs" / f"{name}-{self.starts.get(name, 0)}.log"

    def start(self, name: str) -> None:
        """Start one process (again, on the same data) and wait until it serves."""
        self.starts[name] = self.starts.get(name, 0) + 1
        if name == "redis":
            self.processes[name] = start_redis(self.root / "redis", self.ports["redis"], self.log)
            return
        spec = SPECS[name]
        process = spawn_tier(spec, self._env(spec), self.log(name))
        self.processes[name] = process
        wait_until_serving(
            process, spec, "127.0.0.1", self.ports[name], self.log(name), START_TIMEOUT_S
        )

    def start_all(self) -> None:
        self.start("redis")
        for spec in TIERS:
            self.start(spec.name)

    def kill(self, name: str) -> None:
        """SIGKILL the process (its whole group), as a crash or the OOM killer would."""
        process = self.processes[name]
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    def restart_after_kill(self, name: str) -> None:
        self.kill(name)
        self.start(name)

    def stop_all(self) -> None:
        for name in reversed([*SPECS, "redis"]):
            process = self.processes.get(name)
            if process is not None and process.poll() is None:
                stop_process_group(process, 10)

    # ------------------------------------------------------------------ the API

    def client(self, timeout_s: float = 60.0) -> httpx.Client:
        return httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=timeout_s,
        )

    def wait_ready(self, timeout_s: float = 60.0) -> None:
        """The gateway's /readyz says every tier serves."""

        def ready() -> bool:
            try:
                return httpx.get(f"{self.url}/readyz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(ready, timeout_s, "every tier ready behind the gateway", every_s=0.25)


def start_redis(directory: Path, port: int, log: Callable[[str], Path]) -> subprocess.Popen[bytes]:
    """A redis-server on `port` persisting under `directory` (as `engram up` runs one),
    answering PING before this returns."""
    directory.mkdir(parents=True, exist_ok=True)
    path = log("redis")
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as out:
        process = subprocess.Popen(
            ["redis-server", *redis_server_args("127.0.0.1", port, directory)],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    client = redis.Redis.from_url(f"redis://127.0.0.1:{port}/0", socket_timeout=0.5)
    try:
        wait_for(lambda: _pings(client), 20, "redis-server answering")
    finally:
        client.close()
    return process


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
