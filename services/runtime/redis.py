"""Connecting to Redis: one place that pings and turns "not there" into a readable error."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit, urlunsplit

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from services.runtime.errors import InvalidInput, Unavailable


def redact_url(url: str) -> str:
    """The URL with any password replaced, safe to put in logs and error messages."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        netloc = f"{user}:***@{host}{port}"
    except ValueError:
        return "<unparseable Redis URL>"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def unavailable(url: str, reason: str) -> Unavailable:
    """The error every Redis user raises when the server cannot be reached."""
    return Unavailable(
        f"Redis at {redact_url(url)} is not answering: {reason}. "
        "Start one (redis-server) or set ENGRAM_REDIS_URL"
    )


def malformed(url: str, error: ValueError) -> InvalidInput:
    """The error every Redis user raises for a URL the client cannot parse."""
    return InvalidInput(
        f"Redis URL {redact_url(url)} is not valid ({error}); "
        "expected redis://host:port/db or unix:///path/to/socket",
        field="redis_url",
    )


def describe(error: BaseException) -> str:
    """A one-line reason for a connection failure (TimeoutError has an empty message)."""
    return str(error) or type(error).__name__


async def connect_redis(url: str, *, timeout_s: float = 2.0) -> aioredis.Redis:
    """A client for `url`, proven to answer a PING within `timeout_s`.

    Raises InvalidInput for a malformed URL and Unavailable when the server does not answer.
    """
    try:
        client: aioredis.Redis = aioredis.Redis.from_url(url, socket_connect_timeout=timeout_s)
    except ValueError as e:
        raise malformed(url, e) from e
    await ensure_answering(client, url, timeout_s)
    return client


async def ensure_answering(client: aioredis.Redis, url: str, timeout_s: float) -> None:
    """PING `client`; on failure close it and raise Unavailable naming `url`."""
    try:
        await asyncio.wait_for(client.ping(), timeout_s)
    except (RedisError, OSError, TimeoutError) as e:
        await client.aclose()
        raise unavailable(url, describe(e)) from e
