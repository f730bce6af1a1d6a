"""query_document: a deep query into one stored file — pattern spans and semantic windows —
returned under a character budget (the span that would overflow is cut at a character
boundary and flagged `truncated`; core/spans.py does the cutting)."""

from __future__ import annotations

import asyncio
import io
import re
from dataclasses import dataclass

import numpy as np
from engram.v1 import corpus_pb2

from services.corpus.core import FileKind, Span, detect_type, fit_to_budget, pdf_text, search_spans
from services.corpus.store import CorpusStore
from services.embedder.client import EmbedderClient
from services.runtime.errors import InvalidInput

WINDOW_CHARS = 1000
WINDOW_STEP = 800
# Windows embedded per query: the rest are ranked out by term overlap first, so a 50 MB
# document costs one bounded embedding call, not tens of thousands.
SEMANTIC_CANDIDATES = 64
SEMANTIC_RESULTS = 5
MAX_BUDGET = 200_000
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class _Window:
    start: int
    end: int
    text: str


def _document_text(store: CorpusStore, sha256: str, name: str) -> str:
    with store.blobs.open(sha256) as body:
        data = body.read()
    if detect_type(name, data[:8192]).kind is FileKind.PDF:
        return pdf_text(io.BytesIO(data), name)
    return data.decode("utf-8", errors="replace")


def _windows(text: str) -> list[_Window]:
    return [
        _Window(start, min(len(text), start + WINDOW_CHARS), text[start : start + WINDOW_CHARS])
        for start in range(0, max(len(text), 1), WINDOW_STEP)
        if text[start : start + WINDOW_CHARS].strip()
    ]


def _prefilter(windows: list[_Window], query: str) -> list[_Window]:
    terms = {t.lower() for t in _WORD.findall(query)}
    if len(windows) <= SEMANTIC_CANDIDATES or not terms:
        return windows[:SEMANTIC_CANDIDATES]
    scored = sorted(
        windows,
        key=lambda w: -len(terms.intersection(t.lower() for t in _WORD.findall(w.text))),
    )
    return scored[:SEMANTIC_CANDIDATES]


async def query_document(
    store: CorpusStore,
    embedder: EmbedderClient,
    request: corpus_pb2.QueryDocumentRequest,
    default_budget: int,
) -> corpus_pb2.QueryDocumentResponse:
    """Spans of one document matching a pattern and/or close to a query, under a budget."""
    if not request.pattern and not request.semantic_query.strip():
        raise InvalidInput("give a pattern, a semantic_query, or both", field="pattern")
    budget = request.char_budget or default_budget
    if budget > MAX_BUDGET:
        raise InvalidInput(f"char_budget is at most {MAX_BUDGET}", field="char_budget")
    record = store.catalog.get(request.file_id)
    text = await asyncio.to_thread(_document_text, store, record.sha256, record.name)
    spans: list[Span] = []
    total = 0
    if request.pattern:
        found = await asyncio.to_thread(
            search_spans,
            text,
            pattern=request.pattern,
            regex=request.regex,
            context_chars=min(request.context_chars or 200, 2000),
            max_matches=100,
        )
        total = found.matches_total
        spans.extend(found.spans)
    if request.semantic_query.strip():
        candidates = _prefilter(_windows(text), request.semantic_query)
        if candidates:
            query = await embedder.embed_query(request.semantic_query)
            vectors = await embedder.embed([w.text for w in candidates])
            scores = vectors @ query
            for index in np.argsort(-scores)[:SEMANTIC_RESULTS]:
                window = candidates[int(index)]
                spans.append(
                    Span(
                        char_start=window.start,
                        char_end=window.end,
                        text=window.text,
                        kind="semantic",
                        similarity=float(scores[int(index)]),
                    )
                )
    fitted = fit_to_budget(spans, budget)
    return corpus_pb2.QueryDocumentResponse(
        spans=[
            corpus_pb2.DocumentSpan(
                char_start=s.char_start,
                char_end=s.char_end,
                text=s.text,
                truncated=s.truncated,
                kind=s.kind,
                similarity=s.similarity,
            )
            for s in fitted
        ],
        chars_used=sum(len(s.text) for s in fitted),
        char_budget=budget,
        matches_total=total,
        matches_returned=sum(s.matches for s in fitted if s.kind == "match"),
    )
