"""The qdrant-client adapter: a Qdrant server or cluster in production, local mode in tests.

`url` picks the mode: `http(s)://…` talks to a server over REST; `":memory:"` (or a `path`)
runs qdrant-client's local mode, an in-process pure-Python engine that is only a test
double (it is exact-only and slow). Server-side optimisation runs in the background, so
`optimize` has nothing to do here.

Every client call goes through `_translated`, the one place where qdrant-client's errors
become domain errors: unreachable or failing server → Unavailable, 404 → NotFound,
400/422 → InvalidInput.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from services.runtime.errors import Conflict, InvalidInput, NotFound, Overloaded, Unavailable
from services.runtime.vectorstore.base import (
    FieldEquals,
    FieldIn,
    FieldNotEquals,
    FieldRange,
    Filter,
    StoredPoint,
    VectorHit,
    VectorLike,
    VectorPoint,
    VectorStore,
    as_vector,
    check_collection_name,
    check_dimension,
    check_filter,
    check_limit,
    check_payload,
    dense_array,
    field_in_values,
    last_write_wins,
    mismatch_error,
    order_by_request,
    parse_offset,
    payload_selector,
    point_uuid,
    split_payload,
    stored_payload,
    unique_ids,
)
from services.runtime.vectorstore.topology import QdrantTopology

IN_MEMORY = ":memory:"
# Keeps one REST request well under the server's default 32 MB body limit at 1024 dims.
_UPSERT_BATCH = 256


class QdrantVectorStore(VectorStore):
    """Collections in a Qdrant server (url) or in qdrant-client's local mode (tests)."""

    def __init__(
        self,
        *,
        url: str = "",
        api_key: str = "",
        path: Path | None = None,
        timeout_s: int = 10,
        topology: QdrantTopology | None = None,
    ) -> None:
        if url == IN_MEMORY:
            self._client = QdrantClient(location=IN_MEMORY)
        elif url:
            self._client = QdrantClient(url=url, api_key=api_key or None, timeout=timeout_s)
        elif path is not None:
            self._client = QdrantClient(path=str(path))
        else:
            raise InvalidInput("the qdrant backend needs a url (or ':memory:', or a path)")
        self._where = url or str(path)
        self._local = url == IN_MEMORY or not url
        self.shared = not self._local
        # A cluster's layout and consistency; local mode has no cluster and is given none.
        self._topology = topology or QdrantTopology()
        self._cluster = not self._local
        # Local mode is plain Python with no locking of its own; the server client is
        # thread-safe (httpx), so it needs none.
        self._lock: AbstractContextManager[Any] = threading.Lock() if self._local else nullcontext()
        self._dimensions: dict[str, int] = {}
        self._dimensions_lock = threading.Lock()
        self._closed = False

    # -- cluster layout (a server only: local mode has no cluster) ------------------------

    def _layout(self) -> dict[str, Any]:
        return self._topology.collection_params() if self._cluster else {}

    def _writes(self) -> dict[str, Any]:
        return self._topology.write_args() if self._cluster else {}

    def _reads(self) -> dict[str, Any]:
        return self._topology.read_args() if self._cluster else {}

    # -- collections -------------------------------------------------------------------

    def ensure_collection(self, name: str, dimension: int) -> None:
        """Create the collection if missing; InvalidInput on a dimension mismatch."""
        check_collection_name(name)
        check_dimension(dimension)
        with self._translated(name):
            exists = self._client.collection_exists(name)
        if not exists:
            try:
                with self._translated(name):
                    self._client.create_collection(
                        name,
                        vectors_config=models.VectorParams(
                            size=dimension, distance=models.Distance.COSINE
                        ),
                        **self._layout(),
                    )
            except Conflict:
                pass  # created concurrently by another replica: compare dimensions below
            else:
                self._remember(name, dimension)
                return
        stored = self._dimension(name, refresh=True)
        if stored != dimension:
            raise mismatch_error(name, stored, dimension)

    def drop_collection(self, name: str) -> None:
        """Delete the collection; missing is not an error."""
        check_collection_name(name)
        with self._translated(name):
            self._client.delete_collection(name)
        with self._dimensions_lock:
            self._dimensions.pop(name, None)

    def collection_names(self) -> list[str]:
        """The server's collection names, sorted."""
        with self._translated(""):
            response = self._client.get_collections()
        return sorted(description.name for description in response.collections)

    def optimize(self, collection: str) -> None:
        """Nothing to do: the server builds its index in the background. Checks existence."""
        self._dimension(collection)

    def close(self) -> None:
        """Close the client's connections; later calls raise Unavailable."""
        if self._closed:
            return
        with self._translated(""):
            self._client.close()
        self._closed = True

    # -- points ------------------------------------------------------------------------

    def upsert(self, collection: str, points: Sequence[VectorPoint]) -> None:
        """Insert or replace points; all are validated before any is sent."""
        dimension = self._dimension(collection)
        structs = [
            models.PointStruct(
                id=str(point_uuid(point.id)),
                vector=as_vector(point.vector, dimension, what=f"vector of {point.id!r}"),
                payload=stored_payload(point.id, point.payload),
            )
            for point in last_write_wins(points)
        ]
        for start in range(0, len(structs), _UPSERT_BATCH):
            with self._translated(collection):
                self._client.upsert(
                    collection,
                    structs[start : start + _UPSERT_BATCH],
                    wait=True,
                    **self._writes(),
                )

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete points by id; ids not stored are ignored."""
        point_ids: list[models.ExtendedPointId] = [str(point_uuid(pid)) for pid in unique_ids(ids)]
        self._dimension(collection)
        if not point_ids:
            return
        with self._translated(collection):
            self._client.delete(
                collection,
                points_selector=models.PointIdsList(points=point_ids),
                wait=True,
                **self._writes(),
            )

    def delete_by_filter(self, collection: str, flt: Filter) -> int:
        """Delete matching points; the count is taken just before (exact unless a writer
        races it)."""
        checked = check_filter(flt)
        if checked is None or not checked.must:
            raise InvalidInput(
                "delete_by_filter needs at least one condition; use drop_collection to delete"
                " everything",
                field="filter",
            )
        matched = self.count(collection, checked)
        selector_filter = _qdrant_filter(checked)
        if matched and selector_filter is not None:
            with self._translated(collection):
                self._client.delete(
                    collection,
                    points_selector=models.FilterSelector(filter=selector_filter),
                    wait=True,
                    **self._writes(),
                )
        return matched

    def set_payload(self, collection: str, ids: Sequence[str], payload: dict[str, Any]) -> None:
        """Merge `payload` into each point's payload; NotFound and no change if any is missing."""
        wanted = unique_ids(ids)
        check_payload(payload)
        self._dimension(collection)
        if not wanted or not payload:
            return
        present = {point.id for point in self.retrieve(collection, wanted)}
        missing = [point_id for point_id in wanted if point_id not in present]
        if missing:
            raise NotFound(
                f"{len(missing)} point(s) not in collection {collection!r}, e.g."
                f" {missing[0]!r}; no payload was changed",
                field="ids",
            )
        point_ids: list[models.ExtendedPointId] = [str(point_uuid(pid)) for pid in wanted]
        with self._translated(collection):
            self._client.set_payload(
                collection,
                dict(payload),
                points=models.PointIdsList(points=point_ids),
                wait=True,
                **self._writes(),
            )

    # -- reads -------------------------------------------------------------------------

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
        """Nearest points by cosine via `query_points`; `exact` sets SearchParams.exact."""
        check_limit(limit)
        query_filter = _qdrant_filter(check_filter(flt))
        query = as_vector(vector, self._dimension(collection), what="query vector")
        # Local mode is always exact and warns when given search params, so send none.
        params = models.SearchParams(exact=True) if exact and not self._local else None
        with self._translated(collection):
            response = self._client.query_points(
                collection,
                query=query,
                query_filter=query_filter,
                search_params=params,
                limit=limit,
                with_payload=payload_selector(with_payload),
                with_vectors=with_vectors,
                **self._reads(),
            )
        hits = []
        for point in response.points:
            point_id, payload = split_payload(point.payload)
            stored = dense_array(point.vector) if with_vectors else None
            hits.append(VectorHit(point_id, float(point.score), payload, stored))
        return hits

    def retrieve(
        self,
        collection: str,
        ids: Sequence[str],
        *,
        with_vectors: bool = False,
        with_payload: bool = True,
    ) -> list[StoredPoint]:
        """The stored points among `ids`, in the order asked."""
        wanted = unique_ids(ids)
        self._dimension(collection)
        if not wanted:
            return []
        point_ids: list[models.ExtendedPointId] = [str(point_uuid(pid)) for pid in wanted]
        with self._translated(collection):
            records = self._client.retrieve(
                collection,
                point_ids,
                with_payload=payload_selector(with_payload),
                with_vectors=with_vectors,
                **self._reads(),
            )
        return order_by_request(wanted, [_stored_point(record, with_vectors) for record in records])

    def count(self, collection: str, flt: Filter | None = None) -> int:
        """Exact number of points matching `flt`."""
        count_filter = _qdrant_filter(check_filter(flt))
        self._dimension(collection)
        with self._translated(collection):
            return self._client.count(collection, count_filter=count_filter, exact=True).count

    def scroll(
        self,
        collection: str,
        *,
        flt: Filter | None = None,
        limit: int = 256,
        offset: str | None = None,
        with_vectors: bool = False,
    ) -> tuple[list[StoredPoint], str | None]:
        """One page in Qdrant id order, and the cursor of the next page."""
        check_limit(limit)
        scroll_filter = _qdrant_filter(check_filter(flt))
        start = parse_offset(offset)
        self._dimension(collection)
        with self._translated(collection):
            records, next_id = self._client.scroll(
                collection,
                scroll_filter=scroll_filter,
                limit=limit,
                offset=None if start is None else str(start),
                with_payload=True,
                with_vectors=with_vectors,
                **self._reads(),
            )
        page = [_stored_point(record, with_vectors) for record in records]
        return page, None if next_id is None else str(next_id)

    # -- internals ---------------------------------------------------------------------

    def _dimension(self, name: str, *, refresh: bool = False) -> int:
        """The collection's vector size (cached); NotFound when it does not exist."""
        check_collection_name(name)
        with self._dimensions_lock:
            cached = self._dimensions.get(name)
        if cached is not None and not refresh:
            return cached
        with self._translated(name):
            info = self._client.get_collection(name)
        vectors = info.config.params.vectors
        if not isinstance(vectors, models.VectorParams):
            raise InvalidInput(
                f"collection {name!r} uses named vectors; it was not created by Engram",
                field="collection",
            )
        self._remember(name, vectors.size)
        return vectors.size

    def _remember(self, name: str, dimension: int) -> None:
        with self._dimensions_lock:
            self._dimensions[name] = dimension

    @contextmanager
    def _translated(self, collection: str) -> Iterator[None]:
        """Run a client call under the local-mode lock, mapping its errors to ours."""
        if self._closed:
            raise Unavailable("the vector store is closed; open a new one")
        try:
            with self._lock:
                yield
        except UnexpectedResponse as error:
            raise _from_response(error, collection, self._where) from error
        except ResponseHandlingException as error:
            raise Unavailable(
                f"Qdrant at {self._where} did not answer ({error.source}); check that it is up"
            ) from error
        except ValueError as error:
            # Local mode reports a missing collection, and wrong input, as ValueError.
            if self._local and "not found" in str(error):
                raise NotFound(
                    f"collection {collection!r} does not exist: create it with ensure_collection",
                    field="collection",
                ) from error
            if self._local:
                raise InvalidInput(str(error)) from error
            raise


def _from_response(error: UnexpectedResponse, collection: str, where: str) -> Exception:
    status = error.status_code or 0
    detail = error.content.decode("utf-8", errors="replace")[:300]
    if status == 404:
        return NotFound(
            f"collection {collection!r} does not exist: create it with ensure_collection",
            field="collection",
        )
    if status == 409:
        return Conflict(f"collection {collection!r} was changed concurrently: {detail}")
    if status in (400, 422):
        return InvalidInput(f"Qdrant refused the request: {detail}")
    if status == 429:
        return Overloaded(f"Qdrant at {where} is rate limiting: retry later")
    if status in (401, 403):
        return Unavailable(f"Qdrant at {where} refused our API key: check the configuration")
    return Unavailable(f"Qdrant at {where} failed with HTTP {status}: {detail}")


def _qdrant_filter(flt: Filter | None) -> models.Filter | None:
    if flt is None or not flt.must:
        return None
    must: list[models.Condition] = []
    must_not: list[models.Condition] = []
    for condition in flt.must:
        if isinstance(condition, FieldEquals):
            match = models.MatchValue(value=condition.value)
            must.append(models.FieldCondition(key=condition.key, match=match))
        elif isinstance(condition, FieldIn):
            any_of = models.MatchAny(any=field_in_values(condition))
            must.append(models.FieldCondition(key=condition.key, match=any_of))
        elif isinstance(condition, FieldRange):
            bounds = models.Range(gte=condition.gte, lte=condition.lte)
            must.append(models.FieldCondition(key=condition.key, range=bounds))
        elif isinstance(condition, FieldNotEquals):
            match = models.MatchValue(value=condition.value)
            must_not.append(models.FieldCondition(key=condition.key, match=match))
    return models.Filter(must=must or None, must_not=must_not or None)


def _stored_point(record: models.Record, with_vectors: bool) -> StoredPoint:
    point_id, payload = split_payload(record.payload)
    vector = dense_array(record.vector) if with_vectors else None
    return StoredPoint(point_id, payload, vector)
