"""Raw memories without a file: one memory, or a whole session of turns (how conversation gets
in), plus similarity search and verbatim expansion. Protobuf in, protobuf out; the storage is
`store.raw`."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from engram.v1 import common_pb2, corpus_pb2

from services.corpus.core._source import split_text
from services.corpus.store import CorpusStore
from services.corpus.store.raw import chunk_id
from services.embedder.client import EmbedderClient
from services.runtime.embedding import reembedding_notice
from services.runtime.errors import InvalidInput, NotFound
from services.runtime.fusion import FusedHit
from services.runtime.paging import page_offset, page_token
from services.runtime.queries import check_query_text, result_limit

DIRECT_VERSION = "direct/1"
SESSION_VERSION = "session/1"
_ASSISTANT_ROLES = frozenset({"assistant", "agent", "ai", "model", "bot"})
# Candidates per retriever for a hybrid raw search (fusion needs both lists deep enough to
# overlap; measured on LoCoMo, docs/decisions/0011-relevance-fusion.md).
RAW_CANDIDATE_DEPTH = 50


def _stamp(chunk: common_pb2.RawChunk) -> None:
    chunk.created_at.FromDatetime(datetime.now(UTC))


def _check_text(text: str, where: str, limit: int) -> None:
    if not text.strip():
        raise InvalidInput(f"{where} is empty", field=where)
    if len(text) > limit:
        raise InvalidInput(
            f"{where} is {len(text)} characters; the limit is {limit}: split it", field=where
        )


async def add_memory(
    store: CorpusStore,
    embedder: EmbedderClient,
    request: corpus_pb2.AddRawMemoryRequest,
    max_chars: int,
) -> common_pb2.RawChunk:
    """One raw memory, appended to its session (a new session when none is named)."""
    _check_text(request.content, "content", max_chars)
    session_id = request.session_id or f"s-{uuid.uuid4().hex[:16]}"
    vectors = await embedder.embed([request.content])

    def append() -> common_pb2.RawChunk:
        # The place in the session is taken and the chunk written in one step under the
        # store's lock: concurrent adds to one session each get their own place (and id).
        with store.lock:
            ordinal = len(store.raw.of_session(session_id))
            chunk = common_pb2.RawChunk(
                id=chunk_id(session_id, DIRECT_VERSION, ordinal),
                session_id=session_id,
                origin_kind=request.origin_kind or "direct",
                content=request.content,
                ordinal=ordinal,
                speaker=request.speaker,
                chunker_version=DIRECT_VERSION,
                attributes=dict(request.attributes),
            )
            if request.HasField("occurred_at"):
                chunk.occurred_at.CopyFrom(request.occurred_at)
            _stamp(chunk)
            store.raw.put([chunk], vectors)
            return chunk

    return await asyncio.to_thread(append)


def _turn_text(turn: corpus_pb2.RawTurn) -> str:
    who = turn.speaker or turn.role or "speaker"
    return f"{who}: {turn.content.strip()}"


def _arcs(
    turns: Sequence[corpus_pb2.RawTurn], bundle: bool, long: Callable[[corpus_pb2.RawTurn], bool]
) -> list[list[corpus_pb2.RawTurn]]:
    """Turns grouped into chunks: with `bundle`, a turn plus the assistant's replies to it. A
    `long` turn stands alone (it is cut into parts of its own), and joins no other."""
    if not bundle:
        return [[t] for t in turns]
    arcs: list[list[corpus_pb2.RawTurn]] = []
    for turn in turns:
        replying = turn.role.lower() in _ASSISTANT_ROLES
        if arcs and replying and not long(turn) and not long(arcs[-1][0]):
            arcs[-1].append(turn)
        else:
            arcs.append([turn])
    return arcs


def _turn_parts(turn: corpus_pb2.RawTurn, part_chars: int) -> list[tuple[str, int, int]]:
    """A long turn cut at its best breaks into parts of at most `part_chars`: each part's
    text, and where it lies in the turn's content as UTF-8 byte offsets (its citation
    anchor)."""
    content = turn.content
    parts = []
    for start, end in split_text(content, part_chars):
        piece = content[start:end].strip()
        if not piece:
            continue
        lead = len(content[start:end]) - len(content[start:end].lstrip())
        byte_start = len(content[: start + lead].encode("utf-8"))
        parts.append((piece, byte_start, byte_start + len(piece.encode("utf-8"))))
    return parts


async def add_session(
    store: CorpusStore,
    embedder: EmbedderClient,
    request: corpus_pb2.AddRawSessionRequest,
    *,
    max_chars: int,
    max_turns: int,
    part_chars: int = 2000,
    max_turn_chars: int = 1_000_000,
) -> corpus_pb2.AddRawSessionResponse:
    """A whole session of turns, as chunks (turn pairs bundled into arcs when asked).
    Re-sending the same session id replaces it: the chunks are exactly this session's.

    A turn longer than `max_chars` (a pasted log, a file's contents) is not refused: it is cut
    into parts of at most `part_chars`, each a chunk of the session that says which part of
    which turn it is and where in the turn it lies (`byte_start`/`byte_end`, attributes
    `turn`, `part`). Only a turn over `max_turn_chars` is refused."""
    if not request.turns:
        raise InvalidInput("turns is empty", field="turns")
    if len(request.turns) > max_turns:
        raise InvalidInput(
            f"{len(request.turns)} turns; the limit is {max_turns}: send the session in parts "
            "with add_raw_memory",
            field="turns",
        )
    for index, turn in enumerate(request.turns):
        _check_text(turn.content, f"turns[{index}].content", max_turn_chars)
    session_id = request.session_id or f"s-{uuid.uuid4().hex[:16]}"
    origin = request.origin_kind or "dialog"
    turns = list(request.turns)  # the same objects in the arcs and in `position`
    position = {id(turn): index for index, turn in enumerate(turns)}

    def long(turn: corpus_pb2.RawTurn) -> bool:
        return len(turn.content) > max_chars

    chunks: list[common_pb2.RawChunk] = []

    def add(arc: list[corpus_pb2.RawTurn], content: str, attributes: dict[str, str]) -> None:
        ordinal = len(chunks)
        chunk = common_pb2.RawChunk(
            id=chunk_id(session_id, SESSION_VERSION, ordinal),
            session_id=session_id,
            origin_kind=origin,
            content=content,
            ordinal=ordinal,
            speaker=arc[0].speaker or arc[0].role,
            role=arc[0].role,
            chunker_version=SESSION_VERSION,
            attributes={**request.attributes, **attributes},
        )
        dated = [t for t in arc if t.HasField("occurred_at")]
        if dated:
            chunk.occurred_at.CopyFrom(dated[0].occurred_at)
        _stamp(chunk)
        chunks.append(chunk)

    for arc in _arcs(turns, request.bundle_turn_pairs, long):
        if not long(arc[0]):
            add(arc, "\n".join(_turn_text(t) for t in arc), {})
            continue
        turn = arc[0]
        who = turn.speaker or turn.role or "speaker"
        parts = _turn_parts(turn, part_chars)
        for number, (piece, byte_start, byte_end) in enumerate(parts, start=1):
            add(
                arc,
                f"{who} (part {number} of {len(parts)}): {piece}",
                {"turn": str(position[id(turn)]), "part": f"{number}/{len(parts)}"},
            )
            chunks[-1].byte_start, chunks[-1].byte_end = byte_start, byte_end
    vectors = await embedder.embed([c.content for c in chunks])
    with store.lock:
        await asyncio.to_thread(store.raw.delete_where, session_id=session_id)
        await asyncio.to_thread(store.raw.put, chunks, vectors)
    return corpus_pb2.AddRawSessionResponse(session_id=session_id, chunks=chunks)


async def search_raw(
    store: CorpusStore, embedder: EmbedderClient, request: corpus_pb2.SearchRawRequest
) -> corpus_pb2.SearchRawResponse:
    """Similarity search over raw chunks. With `hybrid`, both retrievers gather
    `RAW_CANDIDATE_DEPTH` candidates and rank by the fused relevance the drawer pool uses
    (cosine + calibrated BM25 evidence, `services.runtime.fusion`) plus the keyword boost."""
    check_query_text(request.query)
    limit = result_limit(request.n_results, default=10, maximum=200)
    vector = await embedder.embed_query(request.query)
    scope = {
        "session_id": request.session_id,
        "origin_kind": request.origin_kind,
        "file_id": request.file_id,
    }
    notice = ""
    if store.reembedding_to is not None:
        notice = reembedding_notice(store.reembedding_to)
        hits = await asyncio.to_thread(store.raw.keyword_only, request.query, limit=limit, **scope)
    elif request.hybrid:
        depth = max(limit, RAW_CANDIDATE_DEPTH)
        hits = await asyncio.to_thread(
            store.raw.search_fused, vector, request.query, limit=limit, depth=depth, **scope
        )
    else:
        dense = await asyncio.to_thread(store.raw.search, vector, limit=limit, **scope)
        hits = [FusedHit(i, similarity, similarity, False) for i, similarity in dense]
    chunks = {c.id: c for c in store.raw.get([hit.id for hit in hits])}
    return corpus_pb2.SearchRawResponse(
        notice=notice,
        results=[
            corpus_pb2.RawHit(
                chunk=chunks[hit.id],
                score=hit.score,
                similarity=hit.similarity,
                keyword_hit=hit.keyword_hit,
            )
            for hit in hits
            if hit.id in chunks
        ],
    )


def _chunk_named(store: CorpusStore, request: corpus_pb2.ExpandRawRequest) -> str:
    """The id of the chunk a request names: its id, or its session and ordinal."""
    if bool(request.chunk_id) == bool(request.session_id):
        raise InvalidInput(
            "name the chunk by chunk_id, or by session_id (and ordinal), not both",
            field="chunk_id",
        )
    if request.chunk_id:
        return request.chunk_id
    chunks = store.raw.of_session(request.session_id)
    if not chunks:
        raise NotFound(f"raw session {request.session_id!r} does not exist", field="session_id")
    ordinals = {meta.ordinal: meta.id for meta in chunks}
    if request.ordinal not in ordinals:
        raise NotFound(
            f"raw session {request.session_id!r} has no chunk {request.ordinal} "
            f"(its ordinals run {min(ordinals)}–{max(ordinals)})",
            field="ordinal",
        )
    return ordinals[request.ordinal]


def expand_raw(
    store: CorpusStore, request: corpus_pb2.ExpandRawRequest
) -> corpus_pb2.ExpandRawResponse:
    """A chunk with its neighbours in the same file or session, for verbatim lookup."""
    if request.before > 50 or request.after > 50:
        raise InvalidInput("before and after are at most 50", field="before")
    chunk_id = _chunk_named(store, request)
    found = store.raw.get([chunk_id])
    if not found:
        raise NotFound(f"raw chunk {chunk_id!r} does not exist", field="chunk_id")
    before, after = store.raw.neighbours(chunk_id, request.before, request.after)
    return corpus_pb2.ExpandRawResponse(
        chunk=found[0], before=store.raw.get(before), after=store.raw.get(after)
    )


def list_sessions(
    store: CorpusStore, request: corpus_pb2.ListSessionsRequest
) -> corpus_pb2.ListSessionsResponse:
    summaries = store.raw.sessions(origin_kind=request.origin_kind, file_id=request.file_id)
    size = request.page.page_size or 100
    offset = page_offset(request.page.page_token)
    page = summaries[offset : offset + size]
    drawers_by_file = {}
    for summary in page:
        if summary.file_id and summary.file_id not in drawers_by_file:
            try:
                drawers_by_file[summary.file_id] = store.catalog.get(
                    summary.file_id
                ).derived_drawer_count
            except NotFound:
                drawers_by_file[summary.file_id] = 0
    sessions = []
    for summary in page:
        descriptor = common_pb2.SessionDescriptor(
            session_id=summary.session_id,
            raw_chunk_count=summary.chunk_count,
            origin_kind=summary.origin_kind,
        )
        if summary.span_start is not None:
            descriptor.span_start.FromSeconds(int(summary.span_start))
        if summary.span_end is not None:
            descriptor.span_end.FromSeconds(int(summary.span_end))
        sessions.append(
            corpus_pb2.RawSessionSummary(
                descriptor=descriptor,
                derived_drawer_count=drawers_by_file.get(summary.file_id, 0),
                file_id=summary.file_id,
            )
        )
    following = offset + size
    return corpus_pb2.ListSessionsResponse(
        sessions=sessions,
        page=common_pb2.PageResponse(
            next_page_token=page_token(following) if following < len(summaries) else "",
            total=len(summaries),
        ),
    )


def delete_sessions(store: CorpusStore, session_ids: Sequence[str]) -> int:
    """Walkback: delete every raw chunk of these sessions; how many went."""
    if not session_ids:
        raise InvalidInput("session_ids is empty", field="session_ids")
    if len(session_ids) > 10_000:
        raise InvalidInput("at most 10,000 sessions per call", field="session_ids")
    for session_id in session_ids:
        if not session_id.strip() or len(session_id) > 256:
            raise InvalidInput("a session id is 1-256 characters", field="session_ids")
    with store.lock:
        return sum(len(store.raw.delete_where(session_id=s)) for s in session_ids)
