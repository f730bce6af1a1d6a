"""Start every process of the stack in order, wait until each is ready, stop them together.

Each process is probed as its TierSpec says (gRPC health for the tiers, HTTP `/readyz` for the
gateway) before the next one starts; the gateway gets the admin token of `dev_token.py`.
Each child runs in its own session (process group) so a stop can signal the whole group:
SIGTERM first, SIGKILL after the grace period. A child that dies while the stack runs is
restarted on the same port after a back-off (`restarts.RestartPolicy`), each step said in a
log line; the gateway's `/readyz` names the tier that is down meanwhile. A process in a crash
loop (more crashes than the limit inside the window) stops the stack, and the launcher exits
non-zero, so nothing is left half-up.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from services.launcher.dev_token import AdminToken, admin_token
from services.launcher.redis_supervisor import RedisHandle, ensure_redis
from services.launcher.settings import LauncherSettings
from services.launcher.tiers import TIERS, TierSpec
from services.runtime.errors import Unavailable


@dataclass
class RunningTier:
    spec: TierSpec
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path


def tier_port(spec: TierSpec) -> int:
    """The port a tier will use: its own `<PREFIX>PORT` variable, else its default."""
    return int(os.environ.get(f"{spec.env_prefix}PORT", spec.default_port))


def _tier_env(
    spec: TierSpec, settings: LauncherSettings, port: int, admin: AdminToken | None
) -> dict[str, str]:
    env = dict(os.environ)
    env.update(spec.extra_env)
    env[f"{spec.env_prefix}PORT"] = str(port)
    env[f"{spec.env_prefix}HOST"] = settings.host
    data_dir = settings.data_dir if spec.nests_data_dir else settings.data_dir / spec.name
    env.setdefault(f"{spec.env_prefix}DATA_DIR", str(data_dir.resolve()))
    env["ENGRAM_REDIS_URL"] = settings.redis_url
    for other in TIERS:  # every process can find every gRPC tier
        if other.speaks_grpc:
            addr = f"{settings.host}:{tier_port(other)}"
            env.setdefault(f"ENGRAM_{other.name.upper()}_ADDR", addr)
    if spec.admin_token_var and admin is not None and admin.value is not None:
        env[spec.admin_token_var] = admin.value
    return env


class Stack:
    """The processes of one `engram up`."""

    def __init__(self, settings: LauncherSettings, out: TextIO = sys.stdout) -> None:
        self.settings = settings
        self.out = out
        self.redis: RedisHandle | None = None
        self.tiers: list[RunningTier] = []
        self.run_dir = settings.run_dir
        self.admin: AdminToken | None = None
        self._crashes: dict[str, list[float]] = {}  # when each process died (monotonic)
        self._due: dict[str, float] = {}  # when each dead process is to be restarted

    def say(self, line: str) -> None:
        print(line, file=self.out, flush=True)

    def start(self) -> None:
        """Redis, then each process in order, each waited on until its probe passes."""
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.admin = admin_token(self.run_dir, os.environ)
        self.redis = ensure_redis(
            self.settings.redis_url, self.settings.data_dir, allow_start=self.settings.start_redis
        )
        how = "started here" if self.redis.started_here else "already running"
        self.say(f"redis      {self.redis.url} ({how})")
        for spec in TIERS:
            self._start_tier(spec)
        self._write_state()

    def _start_tier(self, spec: TierSpec) -> None:
        port = tier_port(spec)
        log_path = self.run_dir / f"{spec.name}.log"
        process = spawn_tier(spec, _tier_env(spec, self.settings, port, self.admin), log_path)
        self.tiers.append(RunningTier(spec, port, process, log_path))
        host = self.settings.host
        wait_until_serving(process, spec, host, port, log_path, self.settings.ready_timeout_s)
        where = spec.probe.address(host, port)
        self.say(f"{spec.name:<10} {where} (pid {process.pid}, {spec.probe.ready_word})")

    def running(self, name: str) -> RunningTier:
        """The started process called `name`."""
        return next(t for t in self.tiers if t.spec.name == name)

    def _write_state(self) -> None:
        state = {
            "launcher_pid": os.getpid(),
            "redis": {
                "url": self.redis.url if self.redis else "",
                "pid": self.redis.process.pid if self.redis and self.redis.process else None,
            },
            "tiers": [
                {"name": t.spec.name, "port": t.port, "pid": t.process.pid, "log": str(t.log_path)}
                for t in self.tiers
            ],
        }
        (self.run_dir / "stack.json").write_text(json.dumps(state, indent=2))

    def supervise(self, now: float) -> str | None:
        """One round of supervision: note the processes that died, restart those whose
        back-off is over. Returns why the stack must stop (a crash loop), else None."""
        policy = self.settings.restart_policy
        for tier in self.tiers:
            name = tier.spec.name
            if name in self._due or tier.process.poll() is None:
                continue
            crashes = self._crashes.setdefault(name, [])
            crashes.append(now)
            delay = policy.delay(crashes, now)
            recent = len(policy.recent(crashes, now))
            if delay is None:
                return (
                    f"{name} exited with code {tier.process.returncode}: {recent} crashes within "
                    f"{policy.window_s:.0f} s, more than the {policy.limit} allowed; stopping "
                    f"the stack (see {tier.log_path})"
                )
            self.say(
                f"engram: {name} exited with code {tier.process.returncode}; restarting it in "
                f"{delay:.0f} s (crash {recent} within {policy.window_s:.0f} s; see "
                f"{tier.log_path})"
            )
            self._due[name] = now + delay
        for tier in self.tiers:
            due = self._due.get(tier.spec.name)
            if due is not None and now >= due:
                del self._due[tier.spec.name]
                self._restart(tier)
        return None

    def _restart(self, tier: RunningTier) -> None:
        """Start a dead tier again on its port and wait until it serves; a restart that does
        not come up is one more crash for the next round."""
        spec, host = tier.spec, self.settings.host
        env = _tier_env(spec, self.settings, tier.port, self.admin)
        tier.process = spawn_tier(spec, env, tier.log_path)
        try:
            wait_until_serving(
                tier.process, spec, host, tier.port, tier.log_path, self.settings.ready_timeout_s
            )
        except Unavailable as error:
            self.say(f"engram: {spec.name} did not come back: {error.message}")
            stop_process_group(tier.process, self.settings.stop_grace_s)
            return
        self._write_state()
        self.say(f"engram: {spec.name} is back (pid {tier.process.pid}, {spec.probe.ready_word})")

    def stop(self) -> None:
        """SIGTERM every process group (tiers in reverse, then Redis), SIGKILL stragglers."""
        processes = [t.process for t in reversed(self.tiers)]
        if self.redis and self.redis.process:
            processes.append(self.redis.process)
        for process in processes:
            _signal_group(process, signal.SIGTERM)
        deadline = time.monotonic() + self.settings.stop_grace_s
        for process in processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait(timeout=5)
        (self.run_dir / "stack.json").unlink(missing_ok=True)


def spawn_tier(spec: TierSpec, env: dict[str, str], log_path: Path) -> subprocess.Popen[bytes]:
    """Start one tier as `python -m <module>` in its own process group, logging to `log_path`."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", spec.module],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def wait_until_serving(
    process: subprocess.Popen[bytes],
    spec: TierSpec,
    host: str,
    port: int,
    log_path: Path,
    timeout_s: float,
) -> None:
    """Poll the process's probe until it passes; fail early if the process dies."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise Unavailable(
                f"{spec.name} exited with code {process.returncode} before it was ready; "
                f"last lines of {log_path}:\n{_tail(log_path)}"
            )
        if spec.probe.ready(host, port):
            return
        time.sleep(0.25)
    raise Unavailable(
        f"{spec.name} was not {spec.probe.ready_word} within {timeout_s:.0f} s; see {log_path}"
    )


def stop_process_group(process: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM the process group, SIGKILL it if it has not ended within `grace_s`."""
    _signal_group(process, signal.SIGTERM)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        _signal_group(process, signal.SIGKILL)
        process.wait(timeout=5)


def _signal_group(process: subprocess.Popen[bytes], signum: int) -> None:
    if process.poll() is not None:
        return
    try:
        os.killpg(process.pid, signum)
    except ProcessLookupError:
        return


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
