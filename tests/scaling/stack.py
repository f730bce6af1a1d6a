"""A partitioned Engram as real processes on loopback: its own redis-server, one embedder,
two replicas each of retrieval, corpus and authoring (named `<tier>-0`, `<tier>-1`, each on
its own data), and two gateways sharing their state through Redis — the shape the `ha`
overlay runs on Kubernetes, started as `engram up` starts each process."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from services.launcher.supervisor import spawn_tier, stop_process_group, wait_until_serving
from services.launcher.tiers import TIERS, TierSpec
from tests.faults.stack import START_TIMEOUT_S, start_redis, wait_for
from tests.ports import free_ports

SPECS = {spec.name: spec for spec in TIERS}
PARTITIONED = ("retrieval", "corpus", "authoring")
REPLICAS = 2
GATEWAYS = 2


def replica(tier: str, n: int) -> str:
    return f"{tier}-{n}"


@dataclass
class PartitionedStack:
    root: Path
    token: str = field(default_factory=lambda: "egm_scaling-" + secrets.token_urlsafe(24))
    ports: dict[str, int] = field(default_factory=dict)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    starts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        names = [*self.names, "redis"]
        self.ports.update(zip(names, free_ports(len(names)), strict=True))

    @property
    def names(self) -> list[str]:
        """Every process but Redis, in start order."""
        return [
            "embedder",
            *(replica(tier, n) for tier in PARTITIONED for n in range(REPLICAS)),
            *(f"gateway-{n}" for n in range(GATEWAYS)),
        ]

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.ports['redis']}/0"

    def url(self, gateway: int) -> str:
        return f"http://127.0.0.1:{self.ports[f'gateway-{gateway}']}"

    def replica_list(self, tier: str) -> str:
        return ",".join(
            f"{replica(tier, n)}=127.0.0.1:{self.ports[replica(tier, n)]}" for n in range(REPLICAS)
        )

    @staticmethod
    def spec_of(name: str) -> TierSpec:
        return SPECS[name.rsplit("-", 1)[0]]

    def _env(self, name: str) -> dict[str, str]:
        spec = self.spec_of(name)
        env = dict(os.environ)
        env.update(spec.extra_env)
        prefix = spec.env_prefix
        env[f"{prefix}PORT"] = str(self.ports[name])
        env[f"{prefix}HOST"] = "127.0.0.1"
        env[f"{prefix}DATA_DIR"] = str(self.root / name)
        env[f"{prefix}LOG_FORMAT"] = "text"
        env["ENGRAM_REDIS_URL"] = self.redis_url
        env["ENGRAM_EMBEDDER_ALLOW_CPU"] = "1"
        env["ENGRAM_EMBEDDER_ADDR"] = f"127.0.0.1:{self.ports['embedder']}"
        for tier in PARTITIONED:
            env[f"ENGRAM_{tier.upper()}_ADDR"] = self.replica_list(tier)
        if spec.name in PARTITIONED:
            env[f"{prefix}REPLICA_NAME"] = name
            env[f"{prefix}JOB_LEASE_S"] = "3"
            env[f"{prefix}JOB_RETRY_DELAY_S"] = "1"
        if spec.name == "gateway":
            env["ENGRAM_GATEWAY_STATE_BACKEND"] = "redis"
        if spec.admin_token_var:
            env[spec.admin_token_var] = self.token
        return env

    def log(self, name: str) -> Path:
        return self.root / "logs" / f"{name}-{self.starts.get(name, 0)}.log"

    def spawn(self, name: str) -> None:
        self.starts[name] = self.starts.get(name, 0) + 1
        self.processes[name] = spawn_tier(self.spec_of(name), self._env(name), self.log(name))

    def wait(self, name: str) -> None:
        wait_until_serving(
            self.processes[name],
            self.spec_of(name),
            "127.0.0.1",
            self.ports[name],
            self.log(name),
            START_TIMEOUT_S,
        )

    def start(self, name: str) -> None:
        self.spawn(name)
        self.wait(name)

    def start_all(self) -> None:
        self.processes["redis"] = start_redis(self.root / "redis", self.ports["redis"], self.log)
        self.start("embedder")
        tiers = [replica(tier, n) for tier in PARTITIONED for n in range(REPLICAS)]
        for name in tiers:  # the replicas start side by side, then each is waited on
            self.spawn(name)
        for name in tiers:
            self.wait(name)
        for n in range(GATEWAYS):
            self.start(f"gateway-{n}")

    def kill(self, name: str) -> None:
        process = self.processes[name]
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)

    def stop_all(self) -> None:
        for name in reversed([*self.names, "redis"]):
            process = self.processes.get(name)
            if process is not None and process.poll() is None:
                stop_process_group(process, 10)

    def client(self, gateway: int, timeout_s: float = 60.0) -> httpx.Client:
        return httpx.Client(
            base_url=self.url(gateway),
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=timeout_s,
        )

    def wait_ready(self, gateway: int, timeout_s: float = 60.0) -> None:
        def ready() -> bool:
            try:
                return httpx.get(f"{self.url(gateway)}/readyz", timeout=2).status_code == 200
            except httpx.HTTPError:
                return False

        wait_for(ready, timeout_s, f"gateway-{gateway} ready", every_s=0.25)
