"""The vector-store interface every tier codes against, and the plain types it speaks.

Two adapters implement it: Qdrant Edge in-process (`edge.py`) and qdrant-client against a
Qdrant server (`remote.py`). No Qdrant type crosses this boundary, so a tier never knows
which one it holds, and one congruence suite proves they behave the same.

Conventions shared by both adapters, decided here once:

- Point ids are our own strings (`"d_3f2a…"`). Qdrant only takes uint64 or UUID ids, so each
  string maps to a UUIDv5 (`point_uuid`) and the string itself rides in the payload under
  `ID_KEY`. Callers never see the UUID or that key.
- Distance is cosine. Qdrant stores cosine vectors unit-normalised, so vectors read back
  are the normalised form of what was written.
- Validation (names, dimensions, finite vectors, reserved keys) happens here, before any
  engine call, so bad input raises `InvalidInput` and changes nothing on either backend.
"""

from __future__ import annotations

import math
import re
import uuid
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

import numpy as np
import numpy.typing as npt

from services.runtime.errors import InvalidInput

# The payload key that carries our string id. Reserved: callers may not write it.
ID_KEY = "_id"

MAX_DIMENSION = 65_536
MAX_ID_LENGTH = 512
MAX_SCROLL_LIMIT = 10_000

# Fixed namespace so the same string id maps to the same UUID in every process, forever.
# Changing it would orphan every stored point.
_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "engram:vector-point")

# Collection names become directory names on Edge: keep them to a safe, portable alphabet.
_COLLECTION_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")

VectorLike = npt.NDArray[np.floating[Any]] | Sequence[float]
Scalar = str | int | bool


@dataclass(frozen=True)
class VectorPoint:
    """A point to write: our string id, its embedding, and its payload."""

    id: str
    vector: VectorLike
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class VectorHit:
    """One search result; `score` is the cosine similarity to the query; `vector` (unit
    length) only when the search asked for it."""

    id: str
    score: float
    payload: dict[str, Any]
    vector: npt.NDArray[np.float32] | None = None


@dataclass(frozen=True)
class StoredPoint:
    """A point read back; `vector` is unit-normalised, or None when not requested."""

    id: str
    payload: dict[str, Any]
    vector: npt.NDArray[np.float32] | None = None


@dataclass(frozen=True)
class FieldEquals:
    """The payload field `key` equals `value`."""

    key: str
    value: Scalar


@dataclass(frozen=True)
class FieldIn:
    """The payload field `key` equals one of `values` (all strings or all integers)."""

    key: str
    values: Sequence[str] | Sequence[int]


@dataclass(frozen=True)
class FieldRange:
    """The numeric payload field `key` lies within [gte, lte]; either bound may be open."""

    key: str
    gte: float | None = None
    lte: float | None = None


@dataclass(frozen=True)
class FieldNotEquals:
    """The payload field `key` is not `value`; points without the field also match."""

    key: str
    value: Scalar


Condition = FieldEquals | FieldIn | FieldRange | FieldNotEquals


@dataclass(frozen=True)
class Filter:
    """Conditions that must all hold (a conjunction)."""

    must: Sequence[Condition] = ()


def point_uuid(point_id: str) -> uuid.UUID:
    """The Qdrant id for one of our string ids (deterministic UUIDv5)."""
    return uuid.uuid5(_ID_NAMESPACE, point_id)


def check_collection_name(name: str) -> str:
    """Return `name` if it is a valid collection name, else raise InvalidInput."""
    if not _COLLECTION_NAME.fullmatch(name):
        raise InvalidInput(
            f"collection name {name!r} is not allowed: use 1-128 letters, digits, '_' or '-',"
            " starting with a letter or digit",
            field="collection",
        )
    return name


def check_dimension(dimension: int) -> int:
    """Return `dimension` if it is a usable vector size, else raise InvalidInput."""
    if isinstance(dimension, bool) or not 1 <= dimension <= MAX_DIMENSION:
        raise InvalidInput(
            f"vector dimension {dimension} is out of range: it must be 1..{MAX_DIMENSION}",
            field="dimension",
        )
    return dimension


def check_point_id(point_id: str) -> str:
    """Return `point_id` if it is a non-empty string of sane length, else raise InvalidInput."""
    if not isinstance(point_id, str) or not point_id or len(point_id) > MAX_ID_LENGTH:
        raise InvalidInput(
            f"point id {point_id!r} is not valid: ids are non-empty strings of at most"
            f" {MAX_ID_LENGTH} characters",
            field="id",
        )
    return point_id


def unique_ids(ids: Sequence[str]) -> list[str]:
    """Validated ids, duplicates dropped, first-seen order kept."""
    if isinstance(ids, str):
        # A bare string is a Sequence[str] of characters: almost certainly a caller's slip.
        raise InvalidInput("ids must be a list of ids, not a single string", field="ids")
    return list(dict.fromkeys(check_point_id(point_id) for point_id in ids))


def as_vector(vector: VectorLike, dimension: int, *, what: str = "vector") -> list[float]:
    """The vector as float32-rounded floats, after checking its shape and values.

    Cosine similarity is undefined for a zero vector and meaningless with NaN or infinity,
    and the two engines disagree on how to treat them, so both are refused up front.
    """
    array = np.asarray(vector, dtype=np.float32)
    if array.ndim != 1 or array.shape[0] != dimension:
        raise InvalidInput(
            f"{what} has shape {array.shape}; this collection holds vectors of dimension"
            f" {dimension}",
            field="vector",
        )
    if not np.isfinite(array).all():
        raise InvalidInput(f"{what} contains NaN or infinity", field="vector")
    if not np.any(array):
        raise InvalidInput(
            f"{what} is all zeros; cosine similarity is undefined for it", field="vector"
        )
    values: list[float] = array.tolist()
    return values


def check_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """Return `payload` if it does not touch the reserved id key, else raise InvalidInput."""
    if not isinstance(payload, dict):
        raise InvalidInput("payload must be a mapping of field names to values", field="payload")
    if ID_KEY in payload:
        raise InvalidInput(
            f"payload key {ID_KEY!r} is reserved for the point id; rename the field",
            field="payload",
        )
    return payload


def stored_payload(point_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The payload as written to Qdrant: the caller's fields plus our string id."""
    return {**check_payload(payload), ID_KEY: point_id}


def payload_selector(with_payload: bool) -> bool | list[str]:
    """What a backend asks Qdrant for: the whole payload, or only our id key."""
    return True if with_payload else [ID_KEY]


def split_payload(raw: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """Our string id and the caller's payload, from a payload as stored in Qdrant."""
    payload = dict(raw or {})
    point_id = payload.pop(ID_KEY, None)
    if not isinstance(point_id, str):
        # Only a point written behind this adapter's back lacks the key; say so plainly.
        raise InvalidInput(
            f"a stored point has no {ID_KEY!r} payload key: the collection holds points"
            " not written through Engram's vector store"
        )
    return point_id, payload


def _unnamed(raw: object) -> object:
    """An engine's vector value as the unnamed dense vector (engines may wrap it in a dict)."""
    return raw.get("") if isinstance(raw, dict) else raw


def dense_array(raw: object) -> npt.NDArray[np.float32]:
    """The unnamed dense vector behind an engine's vector value as a float32 array, converted
    in one step (search hits and keyword-only hits carry dozens of
    vectors per query: a Python float list per value would cost milliseconds)."""
    array = np.asarray(_unnamed(raw), dtype=np.float32)
    if array.ndim != 1:
        raise TypeError(f"expected one dense vector from the engine, got shape {array.shape}")
    return array


def last_write_wins(points: Sequence[VectorPoint]) -> list[VectorPoint]:
    """One point per id, the last one given, so both engines agree on duplicate ids."""
    by_id: dict[str, VectorPoint] = {}
    for point in points:
        by_id.pop(check_point_id(point.id), None)
        by_id[point.id] = point
    return list(by_id.values())


def check_filter(flt: Filter | None) -> Filter | None:
    """Return `flt` if every condition is well-formed, else raise InvalidInput."""
    if flt is None:
        return None
    for condition in flt.must:
        if not condition.key or condition.key == ID_KEY:
            raise InvalidInput(
                f"filter key {condition.key!r} is not allowed: name a payload field",
                field="filter",
            )
        if isinstance(condition, FieldIn):
            _check_field_in(condition)
        elif isinstance(condition, FieldRange):
            _check_range(condition)
    return flt


def _check_field_in(condition: FieldIn) -> None:
    values = list(condition.values)
    if not values:
        # "in no values" reads as both "match nothing" and "no restriction": refuse to guess.
        raise InvalidInput(
            f"filter on {condition.key!r} lists no values; leave the condition out instead",
            field="filter",
        )
    all_strings = all(isinstance(value, str) for value in values)
    all_ints = all(isinstance(value, int) and not isinstance(value, bool) for value in values)
    if not (all_strings or all_ints):
        raise InvalidInput(
            f"filter on {condition.key!r} mixes value types; list only strings or only integers",
            field="filter",
        )


def _check_range(condition: FieldRange) -> None:
    bounds = [bound for bound in (condition.gte, condition.lte) if bound is not None]
    if not bounds:
        raise InvalidInput(
            f"range filter on {condition.key!r} has no bound; give gte, lte or both",
            field="filter",
        )
    if not all(math.isfinite(bound) for bound in bounds):
        raise InvalidInput(f"range filter on {condition.key!r} has a non-finite bound")


def field_in_values(condition: FieldIn) -> list[str] | list[int]:
    """A FieldIn's values as one homogeneous list (check_filter has vetted the types)."""
    values: list[object] = list(condition.values)
    strings = [value for value in values if isinstance(value, str)]
    if len(strings) == len(values):
        return strings
    return [value for value in values if isinstance(value, int)]


def check_limit(limit: int, *, maximum: int = MAX_SCROLL_LIMIT) -> int:
    """Return `limit` if it is within 1..maximum, else raise InvalidInput."""
    if isinstance(limit, bool) or not 1 <= limit <= maximum:
        raise InvalidInput(f"limit {limit} is out of range: use 1..{maximum}", field="limit")
    return limit


def parse_offset(offset: str | None) -> uuid.UUID | None:
    """The engine cursor behind a scroll offset token, or InvalidInput for a forged one."""
    if offset is None:
        return None
    try:
        return uuid.UUID(offset)
    except ValueError:
        raise InvalidInput(
            f"scroll offset {offset!r} is not a cursor returned by scroll", field="offset"
        ) from None


def order_by_request(ids: Sequence[str], points: Sequence[StoredPoint]) -> list[StoredPoint]:
    """`points` in the order their ids were asked for (engines return their own order)."""
    by_id = {point.id: point for point in points}
    return [by_id[point_id] for point_id in ids if point_id in by_id]


def mismatch_error(name: str, stored: int, wanted: int) -> InvalidInput:
    """The error for ensure_collection on an existing collection of another dimension."""
    return InvalidInput(
        f"collection {name!r} already holds vectors of dimension {stored}, not {wanted}:"
        " use the embedding model it was built with, or drop and rebuild the collection",
        field="dimension",
    )


class VectorStore(ABC):
    """Named collections of cosine vectors with JSON payloads, addressed by string ids.

    Methods block; async callers run them in a worker thread. Every method taking a
    collection raises NotFound when it does not exist (ensure_collection creates it).
    """

    # Whether every replica of a tier sees these collections (a server), so a store moving
    # between replicas keeps them where they are (DropStoreRequest.keep_shared).
    shared: bool = False

    @abstractmethod
    def ensure_collection(self, name: str, dimension: int) -> None:
        """Create the collection if missing; InvalidInput if it exists with another dimension."""

    @abstractmethod
    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Insert or replace points by id; a replaced point's payload is replaced whole."""

    @abstractmethod
    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete points by id; ids not stored are ignored."""

    @abstractmethod
    def delete_by_filter(self, collection: str, flt: Filter) -> int:
        """Delete the points matching `flt` (which needs a condition); return how many."""

    @abstractmethod
    def search(
        self,
        collection: str,
        vector: VectorLike,
        *,
        limit: int,
        flt: Filter | None = None,
        exact: bool = False,
        with_vectors: bool = False,
        with_payload: bool = True,
    ) -> list[VectorHit]:
        """The `limit` nearest points by cosine, best first; `exact` forces brute force;
        `with_vectors` returns each hit's stored vector too (one read instead of two);
        `with_payload=False` leaves the payloads out (empty), for callers that need ids only
        (reading a drawer's payload costs more than finding it)."""

    @abstractmethod
    def retrieve(
        self,
        collection: str,
        ids: Sequence[str],
        *,
        with_vectors: bool = False,
        with_payload: bool = True,
    ) -> list[StoredPoint]:
        """The stored points among `ids`, in the order asked; missing ids are left out
        (`with_payload=False`: payloads left out, empty)."""

    @abstractmethod
    def count(self, collection: str, flt: Filter | None = None) -> int:
        """How many points match `flt` (all points when None); exact."""

    @abstractmethod
    def scroll(
        self,
        collection: str,
        *,
        flt: Filter | None = None,
        limit: int = 256,
        offset: str | None = None,
        with_vectors: bool = False,
    ) -> tuple[list[StoredPoint], str | None]:
        """One page of points and the opaque offset of the next page (None at the end)."""

    @abstractmethod
    def set_payload(self, collection: str, ids: Sequence[str], payload: dict[str, Any]) -> None:
        """Merge `payload`'s keys into each point's payload; NotFound (and no change) when
        any id is not stored."""

    @abstractmethod
    def drop_collection(self, name: str) -> None:
        """Delete the collection and all its points; a missing collection is not an error."""

    @abstractmethod
    def collection_names(self) -> list[str]:
        """The names of the existing collections, sorted."""

    @abstractmethod
    def optimize(self, collection: str) -> None:
        """Build the ANN index now. May block for long: keep it off the request path."""

    @abstractmethod
    def close(self) -> None:
        """Release files and connections; the store is unusable afterwards."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
