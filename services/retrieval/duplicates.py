"""Near-duplicate lookup for the authoring tier: the same content hash anywhere, or a cosine
at least `min_similarity` within the same room and type."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from engram.v1 import common_pb2

from services.embedder.client import EmbedderClient
from services.retrieval.pool import DrawerPool
from services.retrieval.pool.mirror import MetaFilter
from services.retrieval.pool.records import content_hash as hash_of


@dataclass(frozen=True)
class SimilarMatch:
    drawer: common_pb2.Drawer
    similarity: float
    same_hash: bool


async def find_similar(
    pool: DrawerPool,
    embedder: EmbedderClient,
    *,
    content: str,
    content_hash: str,
    room: str,
    memory_type: str,
    min_similarity: float,
    limit: int,
) -> list[SimilarMatch]:
    """Existing drawers that duplicate `content`, best first (exact hash matches lead)."""
    wanted = content_hash or hash_of(content)
    same = [m.id for m in pool.metas() if m.content_hash == wanted]
    vector = await embedder.embed_query(content)
    flt = MetaFilter(
        room=room, memory_types=frozenset({memory_type}) if memory_type else frozenset()
    )
    hits = await asyncio.to_thread(pool.vector_search, vector, flt, max(limit, 1))
    similar = {i: s for i, s in hits if s >= min_similarity} if min_similarity > 0 else {}
    ids = list(dict.fromkeys([*same, *sorted(similar, key=lambda i: -similar[i])]))[:limit]
    drawers = await asyncio.to_thread(pool.get_many, ids)
    return [
        SimilarMatch(d, similar.get(d.id, 1.0 if d.id in same else 0.0), d.id in same)
        for d in drawers
    ]
