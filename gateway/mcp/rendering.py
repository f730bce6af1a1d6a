"""What an agent reads of a tool's answer: a compact text written for it, beside the structured
content for clients that read JSON, without the one repeating the other.

The text is the context pack's style: each memory under its provenance header (type · pin ·
room · day · signature · source sessions, as the retrieval tier renders it), with the id the
other tools take, then the content. Scores, dampening, timings and the intent classifier's
reasons are there only when the call asked for them (`include_breakdown`); an empty answer
is one short sentence saying what to try next. Context is what an agent spends; seed 000:
"context is king means precision".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from engram.v1 import retrieval_pb2
from google.protobuf.message import Message

from gateway.protojson import to_json

Json = dict[str, Any]
# (text, structured content) of an answer, given the call's arguments.
Rendered = tuple[str, Json]
Renderer = Callable[[Message, Mapping[str, Any]], Rendered]

# Search answers' diagnostics: in the structured content only when the call asked for them.
_DIAGNOSTICS: Final = (
    "dampening",
    "timings",
    "intent_reasons",
    "intent_mixture",
    "candidates_considered",
    "intent_confidence",
    "topically_lifted",
    "outside_relevance_window",
)
# Bookkeeping of a drawer no agent acts on (the drawer tools show it when asked for one).
_DRAWER_BOOKKEEPING: Final = ("content_hash", "updated_at", "last_activity_at", "attributes")


def _explained(arguments: Mapping[str, Any]) -> bool:
    return bool(arguments.get("include_breakdown"))


def _lean_drawer(drawer: Json) -> Json:
    """A drawer without its bookkeeping, its arcs without the source excerpts (keyword
    evidence for search; `expand_raw` reads a source whole when the agent wants it)."""
    lean = {k: v for k, v in drawer.items() if k not in _DRAWER_BOOKKEEPING}
    if "derived_from" in lean:
        lean["derived_from"] = [
            {k: v for k, v in arc.items() if k != "excerpt"} for arc in lean["derived_from"]
        ]
    return lean


def _lean_hit(hit: Json, explained: bool) -> Json:
    drawer = _lean_drawer(hit.get("drawer", {}))
    lean = {**hit, "drawer": drawer}
    if not explained:
        lean.pop("score", None)
        lean.pop("rank", None)
    return lean


def _hit_text(rank: int, hit: retrieval_pb2.SearchHit, explained: bool) -> str:
    score = f" · score {hit.score:.3f}" if explained else ""
    flags = " · deprecated" if hit.deprecated else ""
    replaced = f" · superseded by {', '.join(hit.superseded_by)}" if hit.superseded_by else ""
    return (
        f"{rank}. {hit.header} {hit.drawer.id}{score}{flags}{replaced}\n"
        f"{' '.join(hit.drawer.content.split())}"
    )


def _intent(answer: retrieval_pb2.SearchResponse) -> str:
    how = "inferred" if answer.intent_inferred else "given"
    return f"intent {answer.intent}, {how}"


def search_text(answer: retrieval_pb2.SearchResponse, explained: bool) -> str:
    """The memories of a search, best first, or what to do when there is none."""
    if not answer.results:
        notice = f" {answer.notice}" if answer.notice else ""
        return (
            f"No stored memory answers this ({_intent(answer)}).{notice} Try other words, "
            "or engram_search_raw for what was said verbatim."
        )
    noun = "memory" if len(answer.results) == 1 else "memories"
    lines = [f"{len(answer.results)} {noun} ({_intent(answer)}), best first:"]
    lines += [_hit_text(rank, hit, explained) for rank, hit in enumerate(answer.results, 1)]
    if answer.notice:
        lines.append(answer.notice)
    lines.append("Report the ones you use with engram_record_retrieval.")
    return "\n".join(lines)


def search(answer: Message, arguments: Mapping[str, Any]) -> Rendered:
    assert isinstance(answer, retrieval_pb2.SearchResponse)
    explained = _explained(arguments)
    structured = to_json(answer, compact=True)
    if not explained:
        for key in _DIAGNOSTICS:
            structured.pop(key, None)
    structured["results"] = [_lean_hit(h, explained) for h in structured.get("results", [])]
    return search_text(answer, explained), structured


def search_batch(answer: Message, arguments: Mapping[str, Any]) -> Rendered:
    assert isinstance(answer, retrieval_pb2.SearchBatchResponse)
    searches = list(arguments.get("searches", []))
    texts, structured = [], []
    for index, response in enumerate(answer.responses):
        asked = searches[index] if index < len(searches) else {}
        text, payload = search(response, asked)
        texts.append(f"## {asked.get('query') or f'search {index + 1}'}\n{text}")
        structured.append(payload)
    return "\n\n".join(texts), {"responses": structured}


def context_pack(answer: Message, arguments: Mapping[str, Any]) -> Rendered:
    """The pack's own text (each memory under its header), then the ids to expand; the
    structured content keeps the items, not the text a second time."""
    assert isinstance(answer, retrieval_pb2.ContextPackResponse)
    structured = to_json(answer, compact=True)
    structured.pop("text", None)
    if not answer.items:
        return (
            f"Nothing stored bears on this goal (intent {answer.intent}). Try other "
            "words, or engram_search_raw for what was said verbatim.",
            structured,
        )
    ids = ", ".join(f"{n}. {item.drawer_id}" for n, item in enumerate(answer.items, 1))
    omitted = f"; {answer.omitted} more did not fit" if answer.omitted else ""
    footer = (
        f"({answer.tokens_used}/{answer.token_budget} tokens{omitted}. Drawer ids in order: {ids}.)"
    )
    return f"{answer.text}\n\n{footer}", structured


def record_retrieval(answer: Message, arguments: Mapping[str, Any]) -> Rendered:
    """Which uses counted and which were refused, without echoing whole drawers."""
    assert isinstance(answer, retrieval_pb2.RecordRetrievalResponse)
    counted = [
        {"id": d.id, "salience": round(d.salience, 4), "retrieval_count": d.retrieval_count}
        for d in answer.drawers
    ]
    refused = [{"drawer_id": r.drawer_id, "reason": r.reason} for r in answer.refused]
    lines = []
    if counted:
        lines.append(
            "Counted: "
            + ", ".join(f"{c['id']} (salience {c['salience']:.2f})" for c in counted)
            + "."
        )
    lines += [f"Not counted: {r['drawer_id']}: {r['reason']}" for r in refused]
    return "\n".join(lines) or "Nothing to record.", {"counted": counted, "refused": refused}


RENDERERS: Final[Mapping[str, Renderer]] = {
    "search": search,
    "search_batch": search_batch,
    "build_context_pack": context_pack,
    "record_retrieval": record_retrieval,
}
