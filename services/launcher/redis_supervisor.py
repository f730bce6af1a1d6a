"""Find the Redis the stack should use, or start one that persists under the data dir."""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import redis

from services.runtime.errors import FailedPrecondition, Unavailable

INSTALL_HINT = (
    "install a Redis server: `apt-get install redis-server` (Debian/Ubuntu), "
    "`brew install redis` (macOS), or point ENGRAM_REDIS_URL at a running one"
)


@dataclass
class RedisHandle:
    url: str
    process: subprocess.Popen[bytes] | None  # None when an existing Redis is used

    @property
    def started_here(self) -> bool:
        return self.process is not None


def redis_answers(url: str, timeout_s: float = 1.0) -> bool:
    """True when a Redis at `url` answers PING."""
    client = redis.Redis.from_url(url, socket_connect_timeout=timeout_s, socket_timeout=timeout_s)
    try:
        return bool(client.ping())
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return False
    finally:
        client.close()


def redis_server_args(host: str, port: int, directory: Path) -> list[str]:
    """How Engram runs redis-server: the job queue persisted in an append-only file under
    `directory`, fsynced on every write (a queue's writes are few, and an acknowledged job
    must survive `kill -9`; the default `everysec` may lose the last second)."""
    return [
        "--bind",
        host,
        "--port",
        str(port),
        "--dir",
        str(directory),
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--save",
        "60 1",
        "--protected-mode",
        "yes",
    ]


def ensure_redis(
    url: str, data_dir: Path, *, allow_start: bool, timeout_s: float = 10.0
) -> RedisHandle:
    """Use the Redis at `url`, or start `redis-server` on its port, persisting to `data_dir`."""
    if redis_answers(url):
        return RedisHandle(url, None)
    parsed = urlparse(url)
    host, port = parsed.hostname or "127.0.0.1", parsed.port or 6379
    if not allow_start:
        raise Unavailable(
            f"no Redis answers at {url} and ENGRAM_START_REDIS is off; {INSTALL_HINT}"
        )
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise Unavailable(f"no Redis answers at {url}; only a local one can be started here")
    binary = shutil.which("redis-server")
    if binary is None:
        raise FailedPrecondition(
            f"no Redis answers at {url} and redis-server is not installed: {INSTALL_HINT}"
        )
    redis_dir = data_dir / "redis"
    redis_dir.mkdir(parents=True, exist_ok=True)
    log = (redis_dir / "redis.log").open("ab")
    process = subprocess.Popen(
        [binary, *redis_server_args(host, port, redis_dir.resolve())],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise Unavailable(
                f"redis-server exited with code {process.returncode}; see {redis_dir / 'redis.log'}"
            )
        if redis_answers(url, timeout_s=0.5):
            return RedisHandle(url, process)
        time.sleep(0.1)
    process.kill()
    raise Unavailable(f"redis-server did not answer on {url} within {timeout_s:.0f} s")
