"""Typed links between drawers, as the retrieval tier serves them: create, end, delete, list
and traverse, over the pool's link table (`pool.links`) and the pure core
(`services.retrieval.core.links`). Protobuf in, protobuf out.

Rules kept here: both ends (and every evidence drawer) must exist in the pool, a drawer is
not linked to itself, and a link's `asserted_by` is the caller's token, never the request's.
"""

from __future__ import annotations

import uuid
from typing import Final

from engram.v1 import retrieval_pb2
from google.protobuf.timestamp_pb2 import Timestamp

from services.retrieval.core.links import DIRECTIONS, LINK_TYPES, Link, traverse
from services.retrieval.pool import DrawerPool
from services.retrieval.pool.records import epoch
from services.runtime.errors import InvalidInput, NotFound

MAX_EVIDENCE: Final = 32
MAX_REASON_CHARS: Final = 500
DEFAULT_DEPTH: Final = 2

# The core's link types and directions are the proto enums' names, lower-cased without their
# prefix: the tables are read off the enums, so a type added to one reaches the other.
_TYPE_VALUES: Final[dict[str, retrieval_pb2.LinkType.ValueType]] = {
    name: retrieval_pb2.LinkType.Value(f"LINK_TYPE_{name.upper()}") for name in LINK_TYPES
}
_TYPE_NAMES: Final[dict[int, str]] = {value: name for name, value in _TYPE_VALUES.items()}
_DIRECTION_NAMES: Final[dict[int, str]] = {
    retrieval_pb2.LinkDirection.Value(f"LINK_DIRECTION_{name.upper()}"): name for name in DIRECTIONS
}


def _stamp(at: float) -> Timestamp:
    ts = Timestamp()
    ts.FromNanoseconds(int(at * 1e9))
    return ts


def link_proto(link: Link) -> retrieval_pb2.DrawerLink:
    message = retrieval_pb2.DrawerLink(
        id=link.id,
        from_id=link.from_id,
        to_id=link.to_id,
        type=_TYPE_VALUES[link.type],
        valid_from=_stamp(link.valid_from),
        asserted_by=link.asserted_by,
        reason=link.reason,
        evidence_ids=link.evidence_ids,
        created_at=_stamp(link.created_at),
    )
    if link.valid_to is not None:
        message.valid_to.CopyFrom(_stamp(link.valid_to))
    return message


def _type_names(values: list[int], field: str) -> list[str]:
    unknown = [v for v in values if v not in _TYPE_NAMES]
    if unknown:
        raise InvalidInput(
            f"link type {unknown[0]} is not one of {', '.join(LINK_TYPES)}", field=field
        )
    return [_TYPE_NAMES[v] for v in values]


def _require_drawers(pool: DrawerPool, ids: list[str], field: str) -> None:
    missing = [i for i in ids if pool.meta(i) is None]
    if missing:
        raise NotFound(
            f"no drawer {missing[0]!r} in this store: a link joins drawers that exist",
            field=field,
        )


def create_link(
    pool: DrawerPool, request: retrieval_pb2.CreateLinkRequest, *, now: float
) -> retrieval_pb2.DrawerLink:
    """A new link; refused when an end or an evidence drawer does not exist."""
    (kind,) = _type_names([request.type], "type")
    if request.from_id == request.to_id:
        raise InvalidInput("a drawer is not linked to itself", field="to_id")
    if len(request.evidence_ids) > MAX_EVIDENCE:
        raise InvalidInput(f"at most {MAX_EVIDENCE} evidence drawers", field="evidence_ids")
    if len(request.reason) > MAX_REASON_CHARS:
        raise InvalidInput(f"reason is over {MAX_REASON_CHARS} characters", field="reason")
    _require_drawers(pool, [request.from_id], "from_id")
    _require_drawers(pool, [request.to_id], "to_id")
    _require_drawers(pool, list(request.evidence_ids), "evidence_ids")
    link = Link(
        id=f"l_{uuid.uuid4().hex[:24]}",
        from_id=request.from_id,
        to_id=request.to_id,
        type=kind,
        valid_from=epoch(request.valid_from) if request.HasField("valid_from") else now,
        valid_to=None,
        asserted_by=request.store.caller_id or "unknown",
        reason=request.reason,
        evidence_ids=tuple(dict.fromkeys(request.evidence_ids)),
        created_at=now,
    )
    pool.links.add(link)
    return link_proto(link)


def end_link(
    pool: DrawerPool, request: retrieval_pb2.EndLinkRequest, *, now: float
) -> retrieval_pb2.DrawerLink:
    """Set a link's `valid_to` (now by default); it stays listed as history."""
    found = pool.links.get(request.id)
    if found is None:
        raise NotFound(f"no link {request.id!r} in this store", field="id")
    at = epoch(request.valid_to) if request.HasField("valid_to") else now
    if at < found.valid_from:
        raise InvalidInput("a link cannot end before it began", field="valid_to")
    ended = pool.links.end(request.id, at)
    assert ended is not None
    return link_proto(ended)


def delete_link(
    pool: DrawerPool, request: retrieval_pb2.DeleteLinkRequest
) -> retrieval_pb2.DeleteLinkResponse:
    return retrieval_pb2.DeleteLinkResponse(deleted=pool.links.delete(request.id))


def list_links(
    pool: DrawerPool, request: retrieval_pb2.ListLinksRequest
) -> retrieval_pb2.ListLinksResponse:
    """A drawer's links, both ends; by type; holding at `as_of` when it is given."""
    _require_drawers(pool, [request.drawer_id], "drawer_id")
    types = set(_type_names(list(request.types), "types"))
    at = epoch(request.as_of) if request.HasField("as_of") else None
    links = [
        link
        for link in pool.links.of_drawer(request.drawer_id)
        if (not types or link.type in types) and (at is None or link.holds_at(at))
    ]
    return retrieval_pb2.ListLinksResponse(links=[link_proto(link) for link in links])


def traverse_links(
    pool: DrawerPool, request: retrieval_pb2.TraverseLinksRequest
) -> retrieval_pb2.TraverseLinksResponse:
    """Walk the links from a drawer, breadth first, at most `depth` (default 2) away."""
    _require_drawers(pool, [request.drawer_id], "drawer_id")
    depth = request.depth or DEFAULT_DEPTH
    try:
        walked = traverse(
            request.drawer_id,
            pool.links.of_drawer,
            types=set(_type_names(list(request.types), "types")),
            depth=depth,
            at=epoch(request.as_of) if request.HasField("as_of") else None,
            direction=_DIRECTION_NAMES.get(request.direction, "both"),
        )
    except ValueError as error:
        raise InvalidInput(str(error), field="depth") from None
    return retrieval_pb2.TraverseLinksResponse(
        links=[link_proto(link) for link in walked.links], drawer_ids=walked.drawer_ids
    )
