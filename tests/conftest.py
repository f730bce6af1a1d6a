"""Fixtures shared by every test layer."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from tests.ports import free_port

# The real model and embedder tier, shared by the tier tests and the gateway tests.
pytest_plugins = ["tests.stack"]

_LOCAL_REDIS = "redis://127.0.0.1:6379/0"


def _answers(url: str) -> bool:
    client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Redis that answers: the local one on 6379, else a throwaway redis-server.

    Shared by the whole session: tests isolate themselves by key prefix and delete their
    keys afterwards, never with FLUSHDB.
    """
    if _answers(_LOCAL_REDIS):
        yield _LOCAL_REDIS
        return
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(binary).exists():
        pytest.skip("no Redis on 127.0.0.1:6379 and no redis-server binary to start one")
    port = free_port()
    workdir = tmp_path_factory.mktemp("redis")
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(workdir)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 10
        while not _answers(url):
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"redis-server on port {port} did not start (exit {server.poll()})")
            time.sleep(0.05)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
