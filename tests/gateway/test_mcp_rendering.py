"""What an agent reads of the memory tools through MCP: a compact text in the context pack's
style, the data once in the structured content, diagnostics only when asked, and an empty
answer of one short sentence. Sizes are counted with the bundled model's own tokenizer."""

from __future__ import annotations

import json
from functools import cache

import pytest
from mcp import Client
from tokenizers import Tokenizer

from gateway.mcp import framing
from gateway.mcp.server import build_server
from gateway.mcp.tools import parse_toolsets
from gateway.settings import GatewaySettings
from services.embedder.core import resolve_model_path
from tests.gateway.conftest import Api
from tests.gateway.test_drawers_search import _seed
from tests.gateway.test_mcp import _listing, _no_core, _rendered, connect

QUERY = "which database keeps the invoices?"
OFF_TOPIC = "what is the recipe for sourdough bread?"


@cache
def _tokenizer() -> Tokenizer:
    tokenizer = Tokenizer.from_file(str(resolve_model_path("") / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def tokens(text: str) -> int:
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


@pytest.fixture
async def seeded(api: Api, store_name: str) -> str:
    await _seed(api, store_name)
    return store_name


async def test_a_search_reads_as_headed_memories_with_their_ids(api: Api, seeded: str) -> None:
    async with connect(api, "write", seeded) as client:
        text, data = _rendered(
            await client.call_tool("engram_search", {"store": seeded, "query": QUERY})
        )
    results = data["results"]
    assert results, "the seeded store answers"
    first = results[0]["drawer"]
    assert text.splitlines()[1].startswith("1. [") and first["id"] in text.splitlines()[1]
    assert first["content"] in text
    assert "score" not in text and "score" not in results[0], "scores only when asked"
    for noise in ("timings", "dampening", "intent_reasons", "intent_mixture"):
        assert noise not in data, f"{noise} only with include_breakdown"
    assert "content_hash" not in first and "updated_at" not in first
    blocks = "\n".join(text.splitlines()[1:-1])  # the results, without the lead and the hint
    overhead = len(blocks) - sum(len(r["drawer"]["content"]) for r in results)
    # Per result: rank, provenance header and id, about 150 characters beside the content
    # (the JSON of one result was about 780 characters for 190 of content).
    assert overhead / len(results) <= 170, text


async def test_asking_for_the_breakdown_brings_the_diagnostics_back(api: Api, seeded: str) -> None:
    async with connect(api, "write", seeded) as client:
        text, data = _rendered(
            await client.call_tool(
                "engram_search", {"store": seeded, "query": QUERY, "include_breakdown": True}
            )
        )
    assert "score " in text
    assert {"timings", "dampening"} <= set(data) and "breakdown" in data["results"][0]


async def test_an_empty_answer_is_one_short_sentence(api: Api, seeded: str) -> None:
    async with connect(api, "write", seeded) as client:
        text, data = _rendered(
            await client.call_tool("engram_search", {"store": seeded, "query": OFF_TOPIC})
        )
    assert data["results"] == []
    assert tokens(text) < 40, f"{tokens(text)} tokens: {text!r}"
    assert tokens(json.dumps(data)) < 40, f"the structured content too: {data}"


async def test_a_context_pack_gives_its_text_once(api: Api, seeded: str) -> None:
    async with connect(api, "write", seeded) as client:
        text, data = _rendered(
            await client.call_tool(
                "engram_context_pack", {"store": seeded, "query": QUERY, "token_budget": 200}
            )
        )
    assert "text" not in data, "the pack's text is the rendering, not a second copy"
    ids = [item["drawer_id"] for item in data["items"]]
    assert ids and all(drawer_id in text for drawer_id in ids)
    assert text.startswith("[") and f"/{data['token_budget']} tokens" in text


async def test_a_recorded_use_answers_in_one_line_each(api: Api, seeded: str) -> None:
    async with connect(api, "write", seeded) as client:
        _, found = _rendered(
            await client.call_tool("engram_search", {"store": seeded, "query": QUERY})
        )
        used = found["results"][0]["drawer"]["id"]
        listed = await api.client.get(f"/v1/stores/{seeded}/drawers", headers=api.admin)
        handed = {r["drawer"]["id"] for r in found["results"]}
        others = [d["id"] for d in listed.json()["drawers"] if d["id"] not in handed][:1]
        text, data = _rendered(
            await client.call_tool(
                "engram_record_retrieval",
                {"store": seeded, "drawer_ids": [used, *others], "query": QUERY},
            )
        )
    assert [c["id"] for c in data["counted"]] == [used]
    assert [r["drawer_id"] for r in data["refused"]] == others
    assert text.startswith(f"Counted: {used}") and "Not counted:" in text
    assert others and "content" not in json.dumps(data), "no drawer echoed whole"


async def test_the_framing_schema_is_taught_once_in_the_listing() -> None:
    """The full framing paragraphs live in the server instructions only; the tool
    descriptions say each in a line (measured: 5,668 tokens of descriptions before, 2,706
    after; the schemas, about 7,400, are the next cut)."""
    tools, instructions = await _listing()
    assert instructions is not None
    for paragraph in (framing.TYPE_LIBRARY, framing.INTENTS, framing.WINGS_AND_ROOMS):
        assert paragraph in instructions
        assert not [t.name for t in tools if paragraph in (t.description or "")]
    described = sum(tokens(t.description or "") for t in tools)
    assert described <= 3000, f"{described} tokens of tool descriptions"


async def test_the_default_listing_fits_the_agents_budget() -> None:
    """What an agent's context holds before its first call — each listed tool's name,
    description and input schema, and the instructions — under 3,500 tokens of the bundled
    tokenizer with the default toolsets (measured: about 12,400 with every tool before
    toolsets; 3,293 now)."""
    default = parse_toolsets(GatewaySettings.model_fields["mcp_tools"].default)
    fixed = framing.DEFAULT_MIN_SIGNATURE_CHARS
    server = build_server(_no_core, min_signature_chars=fixed, toolsets=default)
    async with Client(server) as client:
        tools = (await client.list_tools()).tools
        instructions = client.instructions or ""
    shown = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in tools
    ]
    spent = tokens(json.dumps(shown, separators=(",", ":"), ensure_ascii=False))
    spent += tokens(instructions)
    assert spent < 3500, f"{spent} tokens before the first call"
    assert {"engram_search", "engram_add_drawer_signed", "engram_prime"} <= {t.name for t in tools}
