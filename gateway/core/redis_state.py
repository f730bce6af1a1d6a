"""The gateway's own state in Redis, shared by every gateway replica (`state_backend=redis`).

Each class here is the Redis backend of one piece of state; the rules stay in the piece's
module (`registry`, `tokens`, `audit`, `ratelimit`). Keys, under the prefix P
(`state_key_prefix`, default `engram:gateway`):

| key                  | type   | holds                                                       |
|----------------------|--------|-------------------------------------------------------------|
| `P:stores`           | hash   | store name → StoreInfo proto3 JSON                          |
| `P:stores:version`   | string | a counter, INCR'd in the MULTI/EXEC of every registry change |
| `P:tokens`           | hash   | token id → grant JSON (tier, scope, label, dates, secret hashes) |
| `P:tokens:by-hash`   | hash   | SHA-256 of a current or rotated-out secret → token id      |
| `P:tokens:used`      | hash   | token id → last use (ISO 8601), written at most once a minute |
| `P:audit`            | stream | one entry per event, field `event` = its JSON line          |
| `P:rate:<token id>`  | hash   | a token bucket (`tokens`, `at`); expires once full again    |

Calls are synchronous (`redis.Redis`): their callers (the registry read of every request, the
token check) are synchronous, and a round trip to a nearby Redis costs about 0.1 ms. A Redis
that does not answer, or refuses a command, is `Unavailable` (503) with a readable reason.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

import redis
from engram.v1 import gateway_pb2
from redis.client import Pipeline
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, WatchError
from redis.exceptions import TimeoutError as RedisTimeoutError

from gateway.core.registry import Edit, entry_of, parse_entry
from gateway.core.tokens import Found, TokenRecord, record_of, row_of
from services.runtime.errors import FailedPrecondition, Unavailable
from services.runtime.redis import describe, malformed, redact_url, unavailable

_CONNECT_TIMEOUT_S = 2.0
# A call on a request's path: a Redis that stalls longer is reported, not waited on.
_CALL_TIMEOUT_S = 5.0
# A pooled connection idle this long is PINGed before use, so one dropped by a Redis restart
# is replaced instead of failing the request that picks it up.
_HEALTH_CHECK_S = 10
_MAX_WATCH_RETRIES = 100
_AUDIT_PAGE = 500

P = ParamSpec("P")
R = TypeVar("R")


@dataclass
class Keyspace:
    """One Redis and the prefix of the gateway's keys in it."""

    client: redis.Redis
    url: str
    prefix: str

    def key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    def ensure_answering(self) -> None:
        """PING; Unavailable naming the URL when Redis does not answer."""
        try:
            self.client.ping()
        except RedisError as e:
            raise self.failure(e) from e

    def failure(self, error: RedisError) -> Unavailable:
        """The error a request gets for `error`."""
        if isinstance(error, RedisConnectionError | RedisTimeoutError):
            return unavailable(self.url, describe(error))
        return Unavailable(
            f"Redis at {redact_url(self.url)} refused the gateway's state command ({error}); "
            "it must be a writable primary with memory to spare (maxmemory)"
        )

    def transact(self, attempt: Callable[[Pipeline], R], *watched: str) -> R:
        """Run `attempt` on a pipeline WATCHing `watched` (it reads at once, then calls
        `multi()` and queues its writes), again when another client changed them first."""
        with self.client.pipeline(transaction=True) as pipe:
            for _ in range(_MAX_WATCH_RETRIES):
                try:
                    pipe.watch(*watched)  # type: ignore[no-untyped-call]  # redis-py stub gap
                    value = attempt(pipe)
                    pipe.execute()
                    return value
                except WatchError:
                    continue
        raise Unavailable(
            f"{', '.join(watched)} changed under {_MAX_WATCH_RETRIES} tries in a row (too many "
            "concurrent changes); retry"
        )


def open_keyspace(url: str, prefix: str) -> Keyspace:
    """A client for `url` (no connection yet); InvalidInput for a malformed URL."""
    try:
        client = redis.Redis.from_url(
            url,
            decode_responses=True,
            socket_connect_timeout=_CONNECT_TIMEOUT_S,
            socket_timeout=_CALL_TIMEOUT_S,
            health_check_interval=_HEALTH_CHECK_S,
        )
    except ValueError as e:
        raise malformed(url, e) from e
    return Keyspace(client, url, prefix)


class _OnRedis:
    def __init__(self, keys: Keyspace) -> None:
        self.keys = keys
        self.client = keys.client


S = TypeVar("S", bound=_OnRedis)


def _answering(method: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """`method` with Redis failures turned into Unavailable."""

    @functools.wraps(method)
    def call(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(self, *args, **kwargs)
        except RedisError as e:
            raise self.keys.failure(e) from e

    return call


# ---------------------------------------------------------------------- store registry


class RedisStores(_OnRedis):
    """The registry's entries: a hash and a version counter changed with it atomically."""

    def __init__(self, keys: Keyspace) -> None:
        super().__init__(keys)
        self._stores = keys.key("stores")
        self._version = keys.key("stores", "version")

    @_answering
    def version(self) -> object:
        return self.client.get(self._version)

    @_answering
    def load(self) -> tuple[object, dict[str, gateway_pb2.StoreInfo]]:
        pipe = self.client.pipeline(transaction=True)
        pipe.get(self._version)
        pipe.hgetall(self._stores)
        version, entries = pipe.execute()
        where = f"the store registry in Redis ({self._stores})"
        stores: dict[str, gateway_pb2.StoreInfo] = {}
        for name, text in cast(dict[str, str], entries).items():
            try:
                entry = json.loads(text)
            except ValueError as e:
                raise FailedPrecondition(
                    f"{where} holds {name!r} as something that is not JSON ({e}); fix or remove it"
                ) from e
            info = parse_entry(entry, where)
            stores[info.spec.name] = info
        return version, stores

    @_answering
    def add(self, info: gateway_pb2.StoreInfo) -> bool:
        pipe = self.client.pipeline(transaction=True)
        pipe.hsetnx(self._stores, info.spec.name, _json(entry_of(info)))
        pipe.incr(self._version)  # also on a refusal: costs each gateway one reload
        added, _ = pipe.execute()
        return bool(added)

    @_answering
    def change(self, name: str, edit: Edit) -> gateway_pb2.StoreInfo | None:
        def attempt(pipe: Pipeline) -> gateway_pb2.StoreInfo | None:
            text = cast(str | None, pipe.hget(self._stores, name))
            if text is None:
                return None
            info = edit(parse_entry(json.loads(text), f"store {name!r} in Redis"))
            pipe.multi()
            pipe.hset(self._stores, name, _json(entry_of(info)))
            pipe.incr(self._version)
            return info

        return self.keys.transact(attempt, self._stores)

    @_answering
    def remove(self, name: str) -> bool:
        pipe = self.client.pipeline(transaction=True)
        pipe.hdel(self._stores, name)
        pipe.incr(self._version)
        removed, _ = pipe.execute()
        return bool(removed)


# ---------------------------------------------------------------------- tokens

# A use is recorded only for a token that still exists: a touch racing a revoke leaves nothing.
_TOUCH = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
    redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
return 0
"""


class RedisTokens(_OnRedis):
    """The token table: grants by id, an index of secret hashes, last uses apart (a use is
    written without rewriting, or racing a change of, the grant)."""

    def __init__(self, keys: Keyspace) -> None:
        super().__init__(keys)
        self._grants = keys.key("tokens")
        self._by_hash = keys.key("tokens", "by-hash")
        self._used = keys.key("tokens", "used")
        self._touch = self.client.register_script(_TOUCH)

    def close(self) -> None:
        """Nothing of its own to close: the client belongs to the gateway's state."""

    @_answering
    def insert(self, record: TokenRecord, digest: str, *, only_if_empty: bool = False) -> bool:
        secrets = {"hash": digest, "previous_hash": None, "previous_valid_until": None}
        grant = row_of(record) | secrets

        def attempt(pipe: Pipeline) -> bool:
            if only_if_empty and cast(int, pipe.hlen(self._grants)):
                return False
            replaced = _grant(cast(str | None, pipe.hget(self._grants, record.id)))
            pipe.multi()
            if replaced is not None:
                pipe.hdel(self._by_hash, *_hashes(replaced))
            pipe.hset(self._grants, record.id, _json(grant))
            pipe.hset(self._by_hash, digest, record.id)
            return True

        return self.keys.transact(attempt, self._grants)

    @_answering
    def hash_of(self, token_id: str) -> str | None:
        grant = _grant(cast(str | None, self.client.hget(self._grants, token_id)))
        return None if grant is None else str(grant["hash"])

    @_answering
    def rotate(self, token_id: str, digest: str, previous_until: datetime | None) -> bool:
        def attempt(pipe: Pipeline) -> bool:
            grant = _grant(cast(str | None, pipe.hget(self._grants, token_id)))
            if grant is None:
                return False
            retired = [h for h in (grant["previous_hash"],) if h]
            if previous_until is None:
                retired.append(grant["hash"])
                grant["previous_hash"] = grant["previous_valid_until"] = None
            else:
                grant["previous_hash"] = grant["hash"]
                grant["previous_valid_until"] = previous_until.isoformat()
            grant["hash"] = digest
            pipe.multi()
            if retired:
                pipe.hdel(self._by_hash, *retired)
            pipe.hset(self._by_hash, digest, token_id)
            pipe.hset(self._grants, token_id, _json(grant))
            return True

        return self.keys.transact(attempt, self._grants)

    @_answering
    def delete(self, token_id: str) -> bool:
        def attempt(pipe: Pipeline) -> bool:
            grant = _grant(cast(str | None, pipe.hget(self._grants, token_id)))
            if grant is None:
                return False
            pipe.multi()
            pipe.hdel(self._grants, token_id)
            pipe.hdel(self._by_hash, *_hashes(grant))
            pipe.hdel(self._used, token_id)
            return True

        return self.keys.transact(attempt, self._grants)

    @_answering
    def get(self, token_id: str) -> TokenRecord | None:
        grant, used = self._grant_and_use(token_id)
        return None if grant is None else _record(grant, used)

    def _grant_and_use(self, token_id: str) -> tuple[dict[str, Any] | None, str | None]:
        pipe = self.client.pipeline(transaction=True)
        pipe.hget(self._grants, token_id)
        pipe.hget(self._used, token_id)
        text, used = pipe.execute()
        return _grant(text), used

    @_answering
    def list(self) -> list[TokenRecord]:
        pipe = self.client.pipeline(transaction=True)
        pipe.hgetall(self._grants)
        pipe.hgetall(self._used)
        grants, used = cast(tuple[dict[str, str], dict[str, str]], pipe.execute())
        records = []
        for token_id, text in grants.items():
            records.append(_record(json.loads(text), used.get(token_id)))
        return sorted(records, key=lambda r: (r.created_at, r.id))

    @_answering
    def find(self, digest: str) -> Found | None:
        token_id = cast(str | None, self.client.hget(self._by_hash, digest))
        if token_id is None:
            return None
        grant, used = self._grant_and_use(token_id)
        if grant is None:  # revoked in between
            return None
        return Found(_record(grant, used), str(grant["hash"]), grant["previous_hash"])

    @_answering
    def touch(self, token_id: str, at: datetime) -> None:
        self._touch(keys=[self._grants, self._used], args=[token_id, at.isoformat()])


def _grant(text: str | None) -> dict[str, Any] | None:
    return None if text is None else cast(dict[str, Any], json.loads(text))


def _record(grant: dict[str, Any], used: str | None) -> TokenRecord:
    return record_of(grant, used, grant["previous_valid_until"])


def _hashes(grant: dict[str, Any]) -> list[str]:
    return [h for h in (grant["hash"], grant["previous_hash"]) if h]


# ---------------------------------------------------------------------- audit


class AuditStream(_OnRedis):
    """The audit log of every gateway: one stream, trimmed to about `max_events` (whole
    stream nodes at a time, so trimming costs next to nothing). Entry ids are the Redis
    server's clock, so events list in the order Redis received them, whichever gateway
    wrote them."""

    def __init__(self, keys: Keyspace, max_events: int) -> None:
        super().__init__(keys)
        self._stream = keys.key("audit")
        self._max_events = max_events

    @_answering
    def append(self, day: date, line: str) -> None:
        self.client.xadd(self._stream, {"event": line}, maxlen=self._max_events, approximate=True)

    @_answering
    def first_day(self) -> date | None:
        return _day_of(self.client.xrange(self._stream, count=1))

    @_answering
    def last_day(self) -> date | None:
        return _day_of(self.client.xrevrange(self._stream, count=1))

    @_answering
    def restore(self, at: datetime, line: str) -> None:
        # The entry id is the event's own time (Redis numbers events of one millisecond), so
        # a copied log lists by day as the original did; ids must grow, hence oldest first.
        ms = max(0, int(at.timestamp() * 1000))
        self.client.xadd(
            self._stream,
            {"event": line},
            id=f"{ms}-*",
            maxlen=self._max_events,
            approximate=True,
        )

    def lines(self, since: date, until: date) -> Iterator[tuple[str, str]]:
        low = str(_ms(since))
        high = str(_ms(until + timedelta(days=1)) - 1)
        while True:
            try:
                page = cast(
                    list[tuple[str, dict[str, str]]],
                    self.client.xrevrange(self._stream, max=high, min=low, count=_AUDIT_PAGE),
                )
            except RedisError as e:
                raise self.keys.failure(e) from e
            for entry_id, fields in page:
                yield f"{self._stream} {entry_id}", fields.get("event", "")
            if len(page) < _AUDIT_PAGE:
                return
            high = "(" + page[-1][0]  # exclusive: the next page starts past the last entry


def _day_of(entries: object) -> date | None:
    """The UTC day of the first of some stream entries (their id is a time); None if none."""
    found = cast(list[tuple[str, dict[str, str]]], entries)
    if not found:
        return None
    ms = int(found[0][0].split("-", 1)[0])
    return datetime.fromtimestamp(ms / 1000, UTC).date()


def _ms(day: date) -> int:
    """Milliseconds since the epoch at the start of UTC day `day` (a stream id's time)."""
    return max(0, int(datetime.combine(day, time(), UTC).timestamp() * 1000))


# ---------------------------------------------------------------------- rate limits

# One token bucket, refilled and spent in one step on the Redis server's clock (the one clock
# every gateway shares). The key expires when the bucket would be full again: a missing key
# is a full bucket. Numbers go to HSET as numbers (full precision); the wait returns as text
# (a Lua number reply would be cut to an integer).
_TAKE = """
local rate, burst = tonumber(ARGV[1]), tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) + tonumber(clock[2]) / 1000000
local held = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(held[1]) or burst
local at = tonumber(held[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate)
local wait = 0
if tokens >= 1 then
    tokens = tokens - 1
else
    wait = (1 - tokens) / rate
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', now)
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil((burst - tokens) / rate * 1000)))
return tostring(wait)
"""


class RedisBuckets(_OnRedis):
    """Token buckets every gateway shares: a token's limit holds across all of them. The
    caller's clock is not used (each gateway's differs); the Redis server's is."""

    def __init__(self, keys: Keyspace) -> None:
        super().__init__(keys)
        # EVALSHA, loading the script again when Redis does not know it (after a restart).
        self._take = self.client.register_script(_TAKE)

    @_answering
    def take(self, key: str, now: float, rate_per_s: float, burst: float) -> float:
        wait = self._take(keys=[self.keys.key("rate", key)], args=[rate_per_s, burst])
        return float(wait)


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
