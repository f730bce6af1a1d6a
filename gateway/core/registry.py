"""The store registry: every store's settings, persisted and replayed on start.

`StoreRegistry` holds the rules (names, spec checks, how an update merges); where the entries
are kept is a `RegistryBackend`:

- `StoresFile` (one gateway): a versioned JSON envelope, `{"version": 1, "stores":
  [StoreInfo, ...]}` (each entry the proto3 JSON of `engram.v1.StoreInfo`), rewritten
  atomically on every change (temp file, fsync, rename), so a crash leaves the old file or the
  new one, never half of one.
- `RedisStores` (`redis_state.py`, many gateways): a hash of name → the same JSON, and a
  version counter changed with it in one transaction.

Every read first asks the backend for its version and reloads the entries only when it moved,
so a change made through any gateway takes effect at the next request on every gateway.
"""

from __future__ import annotations

import json
import math
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from engram.v1 import common_pb2, gateway_pb2
from google.protobuf import json_format

from services.runtime.errors import Conflict, FailedPrecondition, InvalidInput, NotFound
from services.runtime.stores import validate_store_name

ENVELOPE_VERSION = 1
_MAX_DESCRIPTION = 2000
_MAX_N_RESULTS = 1000


# What a caller of any face does about an unknown store, in no one face's words.
_NEXT_STEP = "list_stores names the stores this token can use; an admin token creates new ones"

# A change to one entry: the entry as stored now, to the entry to store (may raise InvalidInput).
Edit = Callable[[gateway_pb2.StoreInfo], gateway_pb2.StoreInfo]


class RegistryBackend(Protocol):
    """Where the registry's entries are kept. Each change is atomic on its own."""

    def version(self) -> object:
        """A value that differs after every change (a cheap read: asked before each read)."""

    def load(self) -> tuple[object, dict[str, gateway_pb2.StoreInfo]]:
        """Every entry by name, with the version they are the state of."""

    def add(self, info: gateway_pb2.StoreInfo) -> bool:
        """Keep a new entry; False (nothing changed) when its name is taken."""

    def change(self, name: str, edit: Edit) -> gateway_pb2.StoreInfo | None:
        """Replace entry `name` by `edit` of it, with no other change in between; None when
        there is no such entry."""

    def remove(self, name: str) -> bool:
        """Forget entry `name`; False when there is none."""


class StoreRegistry:
    """The stores of the gateway, kept by `backend`."""

    def __init__(self, backend: RegistryBackend) -> None:
        self._backend = backend
        self._lock = threading.Lock()
        self._loaded = False
        self._seen: object = None
        self._stores: dict[str, gateway_pb2.StoreInfo] = {}
        self._fresh()  # replayed now: an unreadable registry stops the start, not a request

    def _fresh(self) -> dict[str, gateway_pb2.StoreInfo]:
        """The entries as the backend holds them now (reloaded only when they changed)."""
        version = self._backend.version()
        with self._lock:
            if not self._loaded or version != self._seen:
                self._seen, self._stores = self._backend.load()
                self._loaded = True
            return self._stores

    # ------------------------------------------------------------------ reads

    def list(self) -> list[gateway_pb2.StoreInfo]:
        """Every store, by name (copies: callers may change them freely)."""
        stores = self._fresh()
        return [_copy(stores[name]) for name in sorted(stores)]

    def get(self, name: str) -> gateway_pb2.StoreInfo:
        validate_store_name(name)
        info = self._fresh().get(name)
        if info is None:
            raise NotFound(f"no store {name!r}: {_NEXT_STEP}")
        return _copy(info)

    def context(self, name: str, *, closed_ok: bool = False) -> common_pb2.StoreContext:
        """What the tiers need to know about an open store (caller fields left empty); with
        `closed_ok` of a closed one too (deleting or moving it)."""
        info = self.get(name)
        if not info.open and not closed_ok:
            raise FailedPrecondition(
                f'store {name!r} is closed; reopen it with PATCH /v1/stores/{name} {{"open": true}}'
            )
        spec = info.spec
        return common_pb2.StoreContext(
            name=spec.name,
            deployment_mode=spec.deployment_mode,
            legacy_authority=spec.legacy_authority,
            authority_profile=spec.authority_profile,
            defaults=spec.defaults,
            placement=info.placement,
        )

    def placement(self, name: str) -> Mapping[str, str]:
        """Which replica of each partitioned tier holds store `name` (empty: none recorded,
        or no such store)."""
        info = self._fresh().get(name)
        return {} if info is None else dict(info.placement)

    # ------------------------------------------------------------------ changes

    def create(
        self, spec: gateway_pb2.StoreSpec, placement: Mapping[str, str] | None = None
    ) -> gateway_pb2.StoreInfo:
        """Register a new, open store on the replicas `placement` names (tier -> replica);
        Conflict when the name is taken."""
        validate_store_name(spec.name)
        _check_spec(spec)
        info = gateway_pb2.StoreInfo(spec=spec, open=True, placement=placement or {})
        if info.spec.deployment_mode == common_pb2.DEPLOYMENT_MODE_UNSPECIFIED:
            info.spec.deployment_mode = common_pb2.DEPLOYMENT_MODE_DEFAULT
        info.created_at.GetCurrentTime()
        info.updated_at.CopyFrom(info.created_at)
        if not self._backend.add(info):
            raise Conflict(f"store {spec.name!r} already exists")
        return _copy(info)

    def update(self, request: gateway_pb2.UpdateStoreRequest) -> gateway_pb2.StoreInfo:
        """Apply the fields `request` sets; the change is live at once."""
        validate_store_name(request.name)
        info = self._backend.change(request.name, lambda old: _updated(old, request))
        if info is None:
            raise NotFound(f"no store {request.name!r}: {_NEXT_STEP}")
        return _copy(info)

    def place(self, name: str, placement: Mapping[str, str]) -> gateway_pb2.StoreInfo:
        """Record where store `name` now lives (tier -> replica), replacing what was."""

        def placed(old: gateway_pb2.StoreInfo) -> gateway_pb2.StoreInfo:
            info = _copy(old)
            info.placement.clear()
            info.placement.update(placement)
            info.updated_at.GetCurrentTime()
            return info

        validate_store_name(name)
        info = self._backend.change(name, placed)
        if info is None:
            raise NotFound(f"no store {name!r}: {_NEXT_STEP}")
        return _copy(info)

    def remove(self, name: str) -> None:
        """Forget a store (its tiers' data is dropped by the caller first)."""
        if not self._backend.remove(name):
            raise NotFound(f"no store {name!r}")


class StoresFile:
    """The registry of one gateway in `<state_dir>/stores.json`, held in memory between
    changes (the state directory's lock makes this process its only writer)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._version = 0
        self._stores = self._read()

    def version(self) -> object:
        return self._version

    def load(self) -> tuple[object, dict[str, gateway_pb2.StoreInfo]]:
        with self._lock:
            return self._version, {name: _copy(info) for name, info in self._stores.items()}

    def add(self, info: gateway_pb2.StoreInfo) -> bool:
        with self._lock:
            if info.spec.name in self._stores:
                return False
            self._commit(info.spec.name, _copy(info))
            return True

    def change(self, name: str, edit: Edit) -> gateway_pb2.StoreInfo | None:
        with self._lock:
            old = self._stores.get(name)
            if old is None:
                return None
            info = edit(_copy(old))
            self._commit(name, info)
            return _copy(info)

    def remove(self, name: str) -> bool:
        with self._lock:
            if name not in self._stores:
                return False
            self._commit(name, None)
            return True

    def _commit(self, name: str, info: gateway_pb2.StoreInfo | None) -> None:
        """Set (or, with None, drop) one entry and rewrite the file; on a failed write the
        entry is as it was."""
        old = self._stores.get(name)
        if info is None:
            del self._stores[name]
        else:
            self._stores[name] = info
        try:
            self._save()
        except OSError:
            if old is None:
                self._stores.pop(name, None)
            else:
                self._stores[name] = old
            raise
        self._version += 1

    def _read(self) -> dict[str, gateway_pb2.StoreInfo]:
        if not self._path.exists():
            return {}
        try:
            envelope = json.loads(self._path.read_text("utf-8"))
        except (OSError, ValueError) as e:
            raise FailedPrecondition(
                f"the store registry {self._path} cannot be read ({e}); restore it from a "
                "backup or move it away to start with no stores"
            ) from e
        version = envelope.get("version") if isinstance(envelope, dict) else None
        if version != ENVELOPE_VERSION:
            raise FailedPrecondition(
                f"the store registry {self._path} has version {version!r}; this gateway "
                f"reads version {ENVELOPE_VERSION} (a newer gateway wrote it?)"
            )
        stores: dict[str, gateway_pb2.StoreInfo] = {}
        for entry in envelope.get("stores", []):
            info = parse_entry(entry, f"the store registry {self._path}")
            stores[info.spec.name] = info
        return stores

    def _save(self) -> None:
        envelope: dict[str, Any] = {
            "version": ENVELOPE_VERSION,
            "stores": [
                entry_of(info) for info in sorted(self._stores.values(), key=lambda i: i.spec.name)
            ],
        }
        self._path.parent.mkdir(parents=True, exist_ok=True)
        temp = self._path.with_suffix(".json.tmp")
        with temp.open("w", encoding="utf-8") as out:
            json.dump(envelope, out, indent=2, sort_keys=True)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temp, self._path)
        directory = os.open(self._path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def entry_of(info: gateway_pb2.StoreInfo) -> dict[str, Any]:
    """The stored form of one entry: the proto3 JSON of its StoreInfo."""
    return json_format.MessageToDict(info, preserving_proto_field_name=True)


def parse_entry(entry: object, where: str) -> gateway_pb2.StoreInfo:
    """One stored entry read back; FailedPrecondition naming `where` when it is not one."""
    info = gateway_pb2.StoreInfo()
    if not isinstance(entry, dict):
        raise FailedPrecondition(
            f"{where} has an entry that is not a JSON object ({type(entry).__name__}); fix or "
            "remove it"
        )
    try:
        json_format.ParseDict(entry, info)
    except json_format.ParseError as e:
        raise FailedPrecondition(
            f"{where} has an entry this gateway cannot read ({e}); fix or remove it"
        ) from e
    return info


def _updated(
    old: gateway_pb2.StoreInfo, request: gateway_pb2.UpdateStoreRequest
) -> gateway_pb2.StoreInfo:
    """`old` with the fields `request` sets, checked and stamped."""
    info = _copy(old)
    spec = info.spec
    if request.HasField("deployment_mode"):
        spec.deployment_mode = request.deployment_mode
    if request.HasField("legacy_authority"):
        spec.legacy_authority = request.legacy_authority
    if request.replace_authority_profile:
        spec.authority_profile.CopyFrom(request.authority_profile)
    elif request.HasField("authority_profile"):
        raise InvalidInput(
            "authority_profile is only applied with replace_authority_profile: true "
            "(the whole profile is replaced)",
            field="replace_authority_profile",
        )
    if request.defaults.HasField("n_results"):
        spec.defaults.n_results = request.defaults.n_results
    if request.defaults.HasField("min_score"):
        spec.defaults.min_score = request.defaults.min_score
    if request.HasField("description"):
        spec.description = request.description
    if request.HasField("open"):
        info.open = request.open
    _check_spec(spec)
    info.updated_at.GetCurrentTime()
    return info


def _copy(info: gateway_pb2.StoreInfo) -> gateway_pb2.StoreInfo:
    copied = gateway_pb2.StoreInfo()
    copied.CopyFrom(info)
    return copied


def _check_spec(spec: gateway_pb2.StoreSpec) -> None:
    if spec.defaults.HasField("n_results") and not 1 <= spec.defaults.n_results <= _MAX_N_RESULTS:
        raise InvalidInput(
            f"defaults.n_results must be 1-{_MAX_N_RESULTS}, got {spec.defaults.n_results}",
            field="defaults.n_results",
        )
    if spec.defaults.HasField("min_score") and not math.isfinite(spec.defaults.min_score):
        raise InvalidInput("defaults.min_score must be a finite number", field="defaults.min_score")
    if len(spec.description) > _MAX_DESCRIPTION:
        raise InvalidInput(
            f"description is {len(spec.description)} characters; the limit is {_MAX_DESCRIPTION}",
            field="description",
        )
