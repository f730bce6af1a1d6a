"""The store registry: every store's settings, persisted and replayed on start.

The registry is a versioned JSON envelope, `{"version": 1, "stores": [StoreInfo, ...]}` (each
entry the proto3 JSON of `engram.v1.StoreInfo`), rewritten atomically on every change (temp
file, fsync, rename), so a crash leaves the old file or the new one, never half of one. The
in-memory copy is what requests read, so a change takes effect at the next request.
"""

from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path
from typing import Any

from engram.v1 import common_pb2, gateway_pb2
from google.protobuf import json_format

from services.runtime.errors import Conflict, FailedPrecondition, InvalidInput, NotFound
from services.runtime.stores import validate_store_name

ENVELOPE_VERSION = 1
_MAX_DESCRIPTION = 2000
_MAX_N_RESULTS = 1000


# What a caller of any face does about an unknown store, in no one face's words.
_NEXT_STEP = "list_stores names the stores this token can use; an admin token creates new ones"


class StoreRegistry:
    """The stores of one gateway, backed by `<state_dir>/stores.json`."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._stores: dict[str, gateway_pb2.StoreInfo] = {}
        self._load()

    # ------------------------------------------------------------------ persistence

    def _load(self) -> None:
        if not self._path.exists():
            return
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
        for entry in envelope.get("stores", []):
            info = gateway_pb2.StoreInfo()
            try:
                json_format.ParseDict(entry, info)
            except json_format.ParseError as e:
                raise FailedPrecondition(
                    f"the store registry {self._path} has an entry this gateway cannot read "
                    f"({e}); fix or remove it"
                ) from e
            self._stores[info.spec.name] = info

    def _save(self) -> None:
        envelope: dict[str, Any] = {
            "version": ENVELOPE_VERSION,
            "stores": [
                json_format.MessageToDict(info, preserving_proto_field_name=True)
                for info in sorted(self._stores.values(), key=lambda i: i.spec.name)
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

    # ------------------------------------------------------------------ reads

    def list(self) -> list[gateway_pb2.StoreInfo]:
        """Every store, by name (copies: callers may change them freely)."""
        with self._lock:
            return [_copy(self._stores[name]) for name in sorted(self._stores)]

    def get(self, name: str) -> gateway_pb2.StoreInfo:
        validate_store_name(name)
        with self._lock:
            info = self._stores.get(name)
            if info is None:
                raise NotFound(f"no store {name!r}: {_NEXT_STEP}")
            return _copy(info)

    def context(self, name: str) -> common_pb2.StoreContext:
        """What the tiers need to know about an open store (caller fields left empty)."""
        info = self.get(name)
        if not info.open:
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
        )

    # ------------------------------------------------------------------ changes

    def create(self, spec: gateway_pb2.StoreSpec) -> gateway_pb2.StoreInfo:
        """Register a new, open store; Conflict when the name is taken."""
        validate_store_name(spec.name)
        _check_spec(spec)
        info = gateway_pb2.StoreInfo(spec=spec, open=True)
        if info.spec.deployment_mode == common_pb2.DEPLOYMENT_MODE_UNSPECIFIED:
            info.spec.deployment_mode = common_pb2.DEPLOYMENT_MODE_DEFAULT
        info.created_at.GetCurrentTime()
        info.updated_at.CopyFrom(info.created_at)
        with self._lock:
            if spec.name in self._stores:
                raise Conflict(f"store {spec.name!r} already exists")
            self._stores[spec.name] = info
            self._save_or_undo(spec.name, None)
            return _copy(info)

    def update(self, request: gateway_pb2.UpdateStoreRequest) -> gateway_pb2.StoreInfo:
        """Apply the fields `request` sets; the change is live at once."""
        validate_store_name(request.name)
        with self._lock:
            old = self._stores.get(request.name)
            if old is None:
                raise NotFound(f"no store {request.name!r}: {_NEXT_STEP}")
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
            self._stores[request.name] = info
            self._save_or_undo(request.name, old)
            return _copy(info)

    def remove(self, name: str) -> None:
        """Forget a store (its tiers' data is dropped by the caller first)."""
        with self._lock:
            old = self._stores.pop(name, None)
            if old is None:
                raise NotFound(f"no store {name!r}")
            try:
                self._save()
            except OSError:
                self._stores[name] = old
                raise

    def _save_or_undo(self, name: str, old: gateway_pb2.StoreInfo | None) -> None:
        try:
            self._save()
        except OSError:
            if old is None:
                self._stores.pop(name, None)
            else:
                self._stores[name] = old
            raise


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
