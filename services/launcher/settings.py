"""Settings of the launcher (env prefix ENGRAM_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from services.launcher.restarts import RestartPolicy


class LauncherSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="ENGRAM_", extra="ignore", frozen=True)

    data_dir: Path = Field(Path("data"), description="root of all local state; one folder a tier")
    host: str = Field("127.0.0.1", description="interface every tier binds")
    redis_url: str = Field("redis://127.0.0.1:6379/0", description="Redis for the job queue")
    start_redis: bool = Field(
        True, description="start a redis-server (persisting under data_dir) when none answers"
    )
    ready_timeout_s: float = Field(
        180.0,
        gt=0,
        description="how long to wait for every tier to report SERVING and the gateway ready",
    )
    stop_grace_s: float = Field(10.0, gt=0, description="SIGTERM grace before SIGKILL on stop")
    restart_first_delay_s: float = Field(
        1.0, ge=0, description="wait before restarting a process that died (doubles per crash)"
    )
    restart_max_delay_s: float = Field(
        60.0, gt=0, description="longest wait between a crash and the restart"
    )
    restart_limit: int = Field(
        10, ge=0, description="crashes of one process within the window before the stack stops"
    )
    restart_window_s: float = Field(
        600.0, gt=0, description="the window restart_limit counts crashes in"
    )

    @property
    def restart_policy(self) -> RestartPolicy:
        return RestartPolicy(
            first_delay_s=self.restart_first_delay_s,
            max_delay_s=self.restart_max_delay_s,
            limit=self.restart_limit,
            window_s=self.restart_window_s,
        )

    @property
    def run_dir(self) -> Path:
        """Where `engram up` keeps logs, its state file and the development token."""
        return self.data_dir / "run"
