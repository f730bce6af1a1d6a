"""Source chunks: sync a source set (uploaded files or an operator-allowed server-side root)
by content hash, and search it by similarity or by fused relevance (`hybrid`)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engram.v1 import corpus_pb2

from services.corpus.core import validate_folder_path
from services.corpus.store import CorpusStore
from services.corpus.store.source import SourceChunk, chunk_source
from services.embedder.client import EmbedderClient
from services.runtime.embedding import reembedding_notice
from services.runtime.errors import InvalidInput, PermissionDenied, TooLarge
from services.runtime.queries import check_query_text, result_limit

MAX_SOURCE_FILES = 20_000
MAX_SOURCE_FILE_BYTES = 2_000_000
# Text files worth indexing as reference material; everything else under a root is skipped.
SOURCE_SUFFIXES = frozenset(
    {
        ".py",
        ".md",
        ".txt",
        ".rst",
        ".go",
        ".rs",
        ".ts",
        ".tsx",
        ".js",
        ".jsx",
        ".java",
        ".kt",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".hpp",
        ".cs",
        ".rb",
        ".php",
        ".swift",
        ".scala",
        ".sh",
        ".sql",
        ".yaml",
        ".yml",
        ".toml",
        ".json",
        ".proto",
        ".html",
        ".css",
    }
)


def _decode(path: str, data: bytes) -> str:
    if len(data) > MAX_SOURCE_FILE_BYTES:
        raise TooLarge(
            f"{path} is {len(data)} bytes; source files are limited to {MAX_SOURCE_FILE_BYTES}"
        )
    if b"\x00" in data[:8192]:
        raise InvalidInput(f"{path} looks binary; source sets hold text files", field="files")
    return data.decode("utf-8", errors="replace")


def _from_root(root: Path, allowed: list[Path]) -> list[tuple[str, str]]:
    """Read a server-side root, which must lie inside a configured `source_roots` entry."""
    resolved = root.resolve()
    if not any(resolved == a.resolve() or resolved.is_relative_to(a.resolve()) for a in allowed):
        raise PermissionDenied(
            f"root {str(root)!r} is not inside a configured source root "
            "(ENGRAM_CORPUS_SOURCE_ROOTS)",
            field="root",
        )
    texts: list[tuple[str, str]] = []
    for path in sorted(resolved.rglob("*")):
        if path.is_symlink() or not path.is_file() or path.suffix.lower() not in SOURCE_SUFFIXES:
            continue
        if len(texts) >= MAX_SOURCE_FILES:
            raise TooLarge(f"more than {MAX_SOURCE_FILES} files under {root}")
        relative = path.relative_to(resolved).as_posix()
        if path.stat().st_size > MAX_SOURCE_FILE_BYTES:
            continue  # generated or vendored blobs: skipped, not fatal
        texts.append((relative, _decode(relative, path.read_bytes())))
    return texts


async def sync_source(
    store: CorpusStore,
    embedder: EmbedderClient,
    request: corpus_pb2.SyncSourceRequest,
    allowed_roots: list[Path],
) -> corpus_pb2.SyncSourceResponse:
    """Reconcile one source set: only changed chunks are embedded, removed ones deleted."""
    name = request.source.strip()
    if not name or len(name) > 128:
        raise InvalidInput("source must name the source set (1-128 characters)", field="source")
    if request.root and request.files:
        raise InvalidInput("send either files or a root, not both", field="root")
    if request.root:
        texts = await asyncio.to_thread(_from_root, Path(request.root), allowed_roots)
    else:
        if len(request.files) > MAX_SOURCE_FILES:
            raise TooLarge(f"{len(request.files)} files; the limit is {MAX_SOURCE_FILES}")
        texts = []
        for item in request.files:
            path = validate_folder_path(item.path)
            if not path:
                raise InvalidInput("every source file needs a path", field="files.path")
            texts.append((path, _decode(path, item.content)))
    chunks: list[SourceChunk] = []
    for path, text in texts:
        chunks.extend(chunk_source(name, path, text))
    report = await store.source.sync(name, chunks, len(texts), embedder.embed)
    return corpus_pb2.SyncSourceResponse(
        chunks_added=report.added,
        chunks_unchanged=report.unchanged,
        chunks_removed=report.removed,
        files_seen=report.files_seen,
    )


# Candidates per retriever for a hybrid source search (as for raw chunks).
SOURCE_CANDIDATE_DEPTH = 50


async def search_source(
    store: CorpusStore, embedder: EmbedderClient, request: corpus_pb2.SearchSourceRequest
) -> corpus_pb2.SearchSourceResponse:
    """Similarity search over source chunks; with `hybrid`, both retrievers gather
    `SOURCE_CANDIDATE_DEPTH` candidates ranked by fused relevance (`services.runtime.fusion`).
    Source chunks are reference material, never scored like drawers."""
    check_query_text(request.query)
    limit = result_limit(request.n_results, default=10, maximum=100)
    vector = await embedder.embed_query(request.query)
    notice = ""
    if store.reembedding_to is not None:
        notice = reembedding_notice(store.reembedding_to)
        hits = await asyncio.to_thread(
            store.source.keyword_only, request.query, limit=limit, source=request.source
        )
    elif request.hybrid:
        depth = max(limit, SOURCE_CANDIDATE_DEPTH)
        hits = await asyncio.to_thread(
            store.source.search_fused,
            vector,
            request.query,
            limit=limit,
            depth=depth,
            source=request.source,
        )
    else:
        hits = await asyncio.to_thread(
            store.source.search, vector, limit=limit, source=request.source
        )
    chunks = await asyncio.to_thread(store.source.get, [hit.id for hit in hits])
    return corpus_pb2.SearchSourceResponse(
        notice=notice,
        results=[
            corpus_pb2.SourceHit(
                path=chunks[hit.id].path,
                content=chunks[hit.id].content,
                line_start=chunks[hit.id].line_start,
                line_end=chunks[hit.id].line_end,
                similarity=hit.similarity,
                source=chunks[hit.id].source,
                score=hit.score,
                keyword_hit=hit.keyword_hit,
            )
            for hit in hits
            if hit.id in chunks
        ],
    )
