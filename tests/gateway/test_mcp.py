"""The MCP face through the SDK's in-memory client, over the real gateway core and the real
tiers: the tool list, strict schemas derived from the protos, descriptions that teach the
framing schema, a signed write found by search, tier and scope refusals as tool errors."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from gateway.core.principal import Principal
from gateway.core.service import Gateway
from gateway.mcp import framing
from gateway.mcp.server import build_server
from services.authoring.__main__ import build_deps as build_authoring_deps
from services.authoring.invokers import ApiKeys
from services.authoring.server import create_server as create_authoring_server
from services.authoring.settings import AuthoringSettings
from services.embedder.client import EmbedderClient
from services.vocabulary import COMPANION_LIBRARY, DEFAULT_LIBRARY
from tests.gateway.conftest import Api, Tiers, gateway_settings, running_gateway

TOOLS = {
    "engram_search",
    "engram_search_batch",
    "engram_context_pack",
    "engram_prime",
    "engram_record_retrieval",
    "engram_add_drawer",
    "engram_add_drawer_signed",
    "engram_update_drawer",
    "engram_get_drawer",
    "engram_link_drawers",
    "engram_end_link",
    "engram_drawer_links",
    "engram_traverse_links",
    "engram_list_wings",
    "engram_list_rooms",
    "engram_search_raw",
    "engram_expand_raw",
    "engram_add_raw_memory",
    "engram_add_raw_session",
    "engram_search_source",
    "engram_query_document",
    "engram_upload_file",
    "engram_ingest_files",
    "engram_compose_from_raw",
    "engram_consolidate",
    "engram_job_status",
    "engram_list_stores",
    "engram_store_info",
}
UNSCOPED = {"engram_list_stores", "engram_job_status"}

DECISION = (
    "The Architect decided that the gateway only translates between faces and never holds "
    "business logic of its own."
)
SIGNATURE = "the gateway only translates"


def _no_core() -> Gateway:
    raise AssertionError("listing tools must not call the gateway core")


def _gateway(api: Api) -> Gateway:
    gateway: Gateway = api.app.state.gateway
    return gateway


async def _principal(api: Api, tier: str, store: str | None = None) -> Principal:
    return _gateway(api).authenticate(await api.token(tier, store))


@contextlib.asynccontextmanager
async def connect(api: Api, tier: str, store: str | None = None) -> AsyncIterator[Client]:
    """An in-memory MCP client whose calls run as a token of `tier` (scoped to `store`)."""
    server = build_server(lambda: _gateway(api), principal=await _principal(api, tier, store))
    async with Client(server) as client:
        yield client


def _answer(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert result.structured_content is not None
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    answer: dict[str, Any] = json.loads(text.text)
    assert answer == result.structured_content
    return answer


def _rendered(result: types.CallToolResult) -> tuple[str, dict[str, Any]]:
    """A rendered answer: the text an agent reads, and the structured content, which the text
    does not repeat."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    assert not text.text.lstrip().startswith("{"), "the text is written for an agent, not JSON"
    return text.text, result.structured_content


def _error(result: types.CallToolResult) -> str:
    assert result.is_error, result.structured_content
    text = result.content[0]
    assert isinstance(text, types.TextContent)
    return text.text


def _objects(node: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(node, dict):
        if "properties" in node:
            found.append(node)
        for value in node.values():
            found.extend(_objects(value))
    elif isinstance(node, list):
        for value in node:
            found.extend(_objects(value))
    return found


def _signature_fields(node: Any) -> list[dict[str, Any]]:
    return [o["properties"]["signature"] for o in _objects(node) if "signature" in o["properties"]]


def _draft(**extra: Any) -> dict[str, Any]:
    return {
        "content": DECISION,
        "memory_type": "decision",
        "wing": "projects",
        "room": "projects/engram",
        "added_by": "The Architect",
        **extra,
    }


async def _listing(mode: str = "auto") -> tuple[list[types.Tool], str | None]:
    fixed = framing.DEFAULT_MIN_SIGNATURE_CHARS  # a fixed rule: listing asks no tier
    async with Client(build_server(_no_core, min_signature_chars=fixed), mode=mode) as client:
        return (await client.list_tools()).tools, client.instructions


# ---------------------------------------------------------------- listing (no tier needed)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_tool_list_has_every_tool(mode: str) -> None:
    tools, _ = await _listing(mode)
    assert {tool.name for tool in tools} == TOOLS
    readers = {t.name for t in tools if t.annotations and t.annotations.read_only_hint}
    assert "engram_search" in readers
    assert "engram_add_drawer_signed" not in readers
    assert "engram_record_retrieval" not in readers, "recording a retrieval changes salience"
    # Hints come from the operation table (protos): effect and idempotence.
    idempotent = {t.name for t in tools if t.annotations and t.annotations.idempotent_hint}
    assert {"engram_search", "engram_update_drawer"} <= idempotent
    assert "engram_add_drawer" not in idempotent and "engram_ingest_files" not in idempotent


async def test_every_schema_is_strict_and_derived_from_its_proto() -> None:
    tools, _ = await _listing()
    by_name = {tool.name: tool.input_schema for tool in tools}
    for name, schema in by_name.items():
        assert schema["type"] == "object", name
        assert schema["additionalProperties"] is False, name
        for obj in _objects(schema):
            assert obj.get("additionalProperties") is False, (name, sorted(obj["properties"]))
        assert "$ref" not in json.dumps(schema), name
        if name in UNSCOPED:
            assert "store" not in schema["properties"], name
        else:
            assert schema["properties"]["store"]["type"] == "string", name
            assert "store" in schema["required"], name
        for signature in _signature_fields(schema):
            assert signature["minLength"] == framing.DEFAULT_MIN_SIGNATURE_CHARS, name

    # The shapes are the protos': the draft's fields, the search request's fields.
    signed = by_name["engram_add_drawer_signed"]
    assert set(signed["required"]) == {"store", "drawer", "signature"}
    drawer = signed["properties"]["drawer"]
    assert set(drawer["required"]) == {"content", "memory_type", "wing", "room"}
    assert {"topic", "confidence", "derived_from"} <= set(drawer["properties"])
    # A write leaves pinning to admins and attributes to the composer; a draft's own
    # signature is an answer field (the signed write's is top-level).
    assert not {"pin_status", "attributes", "signature"} & set(drawer["properties"])
    ambient = by_name["engram_add_drawer"]["properties"]["drawer"]["properties"]
    assert "signature" not in ambient and "memory_type" in ambient
    # No enum offers both modes' types: the store's mode decides, and the tier says so.
    assert "enum" not in drawer["properties"]["memory_type"]
    assert framing.DEFAULT_MIN_SIGNATURE_CHARS == 12
    search = by_name["engram_search"]["properties"]
    assert {"query", "intent", "n_results", "min_score", "wing", "room"} <= set(search)
    assert not {"ranker", "candidate_depth", "as_of"} & set(search)
    assert "enum" not in search["intent"] and "include_breakdown" in search
    assert "maximum" not in search["n_results"], "the proto's uint32 bound is noise to agents"
    batch = by_name["engram_search_batch"]["properties"]["searches"]["items"]
    assert "store" not in batch["properties"] and batch["required"] == ["query"]
    assert _signature_fields(by_name["engram_update_drawer"])  # optional, still bounded


async def test_descriptions_teach_the_framing_schema() -> None:
    tools, instructions = await _listing()
    text = {tool.name: tool.description or "" for tool in tools}
    # The whole schema once, in the server instructions (both libraries' types and intents);
    # the tools say their part in a line.
    for library in (DEFAULT_LIBRARY, COMPANION_LIBRARY):
        for word in (*library.types, *library.intents):
            assert word in (instructions or ""), word
    for paragraph in ("FRAMING.", "SIGNING.", "SILENCE.", "WINGS AND ROOMS.", "TYPE LIBRARY."):
        assert paragraph in (instructions or ""), paragraph
    assert "engram://vocabulary/<mode>" in (instructions or "")
    assert "third person" in text["engram_add_drawer"]
    assert "verbatim" in text["engram_add_drawer_signed"]
    assert "Empty means nothing relevant is stored" in text["engram_search"]
    assert "do not invent" in text["engram_search"]
    assert "wing/name" in text["engram_list_rooms"] or "rooms" in text["engram_list_rooms"]
    assert "memory types" in text["engram_store_info"]


# ---------------------------------------------------------------- over the real stack


async def test_signed_write_round_trip(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    async with connect(api, "write", store_name) as client:
        assert _answer(await client.call_tool("engram_list_wings", {"store": store_name})) == {
            "wings": [],
            "drawers": 0,
        }
        written = _answer(
            await client.call_tool(
                "engram_add_drawer_signed",
                {
                    "store": store_name,
                    "drawer": _draft(),
                    "signature": SIGNATURE,
                    "allow_new_wing": True,
                    "reason": "recorded from the design review",
                },
            )
        )
        drawer = written["drawer"]
        assert drawer["signature"] == SIGNATURE
        assert drawer["memory_type"] == "decision"

        text, found = _rendered(
            await client.call_tool(
                "engram_search",
                {
                    "store": store_name,
                    "query": "does the gateway hold business logic?",
                    "intent": "design",
                    "include_breakdown": True,
                },
            )
        )
        assert "[decision · active · projects/engram" in text and drawer["id"] in text
        assert "score " in text, "asked for the breakdown: scores shown"
        assert found["intent"] == "design"
        assert [hit["drawer"]["id"] for hit in found["results"]] == [drawer["id"]]
        assert found["results"][0]["breakdown"]["keyword_hit"] in (True, False)

        got = _answer(
            await client.call_tool("engram_get_drawer", {"store": store_name, "id": drawer["id"]})
        )
        assert got["content"] == DECISION
        wings = _answer(await client.call_tool("engram_list_wings", {"store": store_name}))
        assert wings["wings"] == [{"wing": "projects", "drawers": 1, "rooms": 1}]
        rooms = _answer(
            await client.call_tool("engram_list_rooms", {"store": store_name, "wing": "projects"})
        )
        assert rooms["rooms"] == [{"room": "projects/engram", "wing": "projects", "drawers": 1}]
        info = _answer(await client.call_tool("engram_store_info", {"store": store_name}))
        assert info["library"]["mode"] == "default"
        assert info["library"]["memory_types"] == list(DEFAULT_LIBRARY.types)
        stores = _answer(await client.call_tool("engram_list_stores", {}))
        assert [s["spec"]["name"] for s in stores["stores"]] == [store_name]

        # Off-topic: silence is an explicit empty list, not a near-miss.
        quiet, silent = _rendered(
            await client.call_tool(
                "engram_search",
                {"store": store_name, "query": "what is the recipe for sourdough bread?"},
            )
        )
        assert silent["results"] == []
        assert quiet.startswith("No stored memory answers this") and "engram_search_raw" in quiet


async def test_each_token_is_offered_the_tools_its_tier_may_use(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    offered: dict[str, set[str]] = {}
    for tier in ("read", "write", "admin"):
        async with connect(api, tier, store_name) as client:
            offered[tier] = {t.name for t in (await client.list_tools()).tools}
    assert offered["admin"] == TOOLS
    assert offered["read"] < offered["write"] <= offered["admin"]
    assert {"engram_search", "engram_get_drawer"} <= offered["read"]
    assert not {"engram_add_drawer", "engram_add_drawer_signed"} & offered["read"]
    assert {"engram_add_drawer", "engram_add_drawer_signed"} <= offered["write"]


async def test_read_token_cannot_write(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    async with connect(api, "read", store_name) as client:
        refused = _error(
            await client.call_tool(
                "engram_add_drawer_signed",
                {
                    "store": store_name,
                    "drawer": _draft(),
                    "signature": SIGNATURE,
                    "allow_new_wing": True,
                },
            )
        )
        assert refused.startswith("permission_denied:")
        assert "read" in refused
        raw = _error(
            await client.call_tool(
                "engram_add_raw_memory", {"store": store_name, "content": "a raw note"}
            )
        )
        assert raw.startswith("permission_denied:")
        # Reading is what a read token is for, and nothing was written.
        empty = _answer(await client.call_tool("engram_list_wings", {"store": store_name}))
        assert empty == {"wings": [], "drawers": 0}


async def test_arguments_outside_the_schema_reach_no_tier(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    async with connect(api, "write", store_name) as client:
        short = _error(
            await client.call_tool(
                "engram_add_drawer_signed",
                {
                    "store": store_name,
                    "drawer": _draft(),
                    "signature": "gateway",
                    "allow_new_wing": True,
                },
            )
        )
        assert short.startswith("invalid_input: signature:")
        assert f"at least {framing.DEFAULT_MIN_SIGNATURE_CHARS}" in short
        extra = _error(
            await client.call_tool(
                "engram_add_drawer",
                {"store": store_name, "drawer": _draft(mood="sunny"), "allow_new_wing": True},
            )
        )
        assert "mood" in extra and extra.startswith("invalid_input:")
        missing = _error(await client.call_tool("engram_search", {"store": store_name}))
        assert "query" in missing
        # A rule only the authoring tier knows comes back with its own message.
        unsigned = _error(
            await client.call_tool(
                "engram_add_drawer_signed",
                {
                    "store": store_name,
                    "drawer": _draft(),
                    "signature": "not in the content at all",
                    "allow_new_wing": True,
                },
            )
        )
        assert unsigned.startswith("invalid_input:") and "verbatim" in unsigned
        empty = _answer(await client.call_tool("engram_list_wings", {"store": store_name}))
        assert empty["wings"] == []


async def test_store_scope_is_checked(api: Api, store_name: str) -> None:
    other = store_name + "-other"
    await api.create_store(store_name)
    await api.create_store(other)
    async with connect(api, "write", store_name) as client:
        refused = _error(await client.call_tool("engram_search", {"store": other, "query": "x"}))
        assert refused.startswith("permission_denied:") and other in refused
        stores = _answer(await client.call_tool("engram_list_stores", {}))
        assert [s["spec"]["name"] for s in stores["stores"]] == [store_name]


async def test_upload_ingest_and_search_raw(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    text = (
        "# Release checklist\n\nThe foreman signs off the release after the integration "
        "suite passes on the staging cluster.\n"
    )
    async with connect(api, "write", store_name) as client:
        uploaded = _answer(
            await client.call_tool(
                "engram_upload_file",
                {"store": store_name, "name": "release.md", "folder": "notes", "content": text},
            )
        )
        assert uploaded["name"] == "release.md" and int(uploaded["size_bytes"]) == len(text)
        job = _answer(
            await client.call_tool(
                "engram_ingest_files", {"store": store_name, "file_ids": [uploaded["id"]]}
            )
        )
        deadline = asyncio.get_running_loop().time() + 120
        while job["state"] not in ("JOB_STATE_DONE", "JOB_STATE_FAILED"):
            assert asyncio.get_running_loop().time() < deadline, job
            await asyncio.sleep(0.2)
            job = _answer(await client.call_tool("engram_job_status", {"id": job["id"]}))
        assert job["state"] == "JOB_STATE_DONE", job
        hits = _answer(
            await client.call_tool(
                "engram_search_raw",
                {"store": store_name, "query": "who signs off the release?", "n_results": 3},
            )
        )
        assert any("foreman signs off" in h["chunk"]["content"] for h in hits["results"])
        both = _error(
            await client.call_tool(
                "engram_upload_file",
                {"store": store_name, "name": "x.md", "content": "a", "data": "YQ=="},
            )
        )
        assert both.startswith("invalid_input:")


@contextlib.asynccontextmanager
async def _authoring_tier(tiers: Tiers, root: Path, embedder_addr: str, **settings: Any) -> Any:
    """A second authoring tier over the shared retrieval and corpus tiers, configured
    otherwise (no worker: it serves calls only)."""
    config = AuthoringSettings(
        host="127.0.0.1",
        port=0,
        data_dir=root,
        redis_url=tiers.redis_url,
        retrieval_addr=tiers.retrieval_addr,
        corpus_addr=tiers.corpus_addr,
        **settings,
    )
    embedder = EmbedderClient(embedder_addr)
    deps = build_authoring_deps(config, embedder=embedder, keys=ApiKeys({}))
    tier = create_authoring_server(config, deps)
    await tier.start()
    await tier.set_serving(True)
    try:
        yield f"127.0.0.1:{tier.port}"
    finally:
        await tier.stop(0.5)
        await asyncio.gather(deps.close(), embedder.close())


async def test_the_signature_rule_in_force_reaches_the_mcp_schemas(
    tiers: Tiers, embedder_addr: str, tmp_path: Path, store_name: str
) -> None:
    rule = framing.DEFAULT_MIN_SIGNATURE_CHARS + 8
    async with _authoring_tier(
        tiers, tmp_path / "authoring", embedder_addr, min_signature_chars=rule
    ) as address:
        settings = gateway_settings(replace(tiers, authoring_addr=address), tmp_path / "gw")
        async with running_gateway(settings) as api:
            await api.create_store(store_name)
            principal = await _principal(api, "write", store_name)
            server = build_server(lambda: _gateway(api), principal=principal)
            async with Client(server) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                signed = tools["engram_add_drawer_signed"]
                assert {f["minLength"] for f in _signature_fields(signed.input_schema)} == {rule}
                assert f"at least {rule} characters" in (signed.description or "")
                # Long enough for the default, too short for the tier: refused by MCP itself.
                phrase = DECISION[: framing.DEFAULT_MIN_SIGNATURE_CHARS + 2]
                refused = _error(
                    await client.call_tool(
                        "engram_add_drawer_signed",
                        {
                            "store": store_name,
                            "drawer": _draft(),
                            "signature": phrase,
                            "allow_new_wing": True,
                        },
                    )
                )
                assert refused.startswith("invalid_input: signature:"), refused
                assert f"at least {rule}" in refused, refused


async def test_an_agent_links_a_newer_decision_and_walks_the_chain(
    api: Api, store_name: str
) -> None:
    await api.create_store(store_name)
    async with connect(api, "write", store_name) as client:
        ids = []
        for content in (
            "The Architect decided that retries are capped at three attempts per job.",
            "The Architect decided that retries are capped at five attempts per job from May.",
        ):
            written = _answer(
                await client.call_tool(
                    "engram_add_drawer",
                    {
                        "store": store_name,
                        "drawer": _draft(content=content),
                        "allow_new_wing": True,
                    },
                )
            )
            ids.append(written["drawer"]["id"])
        old, new = ids
        link = _answer(
            await client.call_tool(
                "engram_link_drawers",
                {
                    "store": store_name,
                    "from_id": new,
                    "to_id": old,
                    "type": "LINK_TYPE_SUPERSEDES",
                    "reason": "the cap was raised",
                },
            )
        )
        assert (link["from_id"], link["to_id"]) == (new, old)
        walked = _answer(
            await client.call_tool(
                "engram_traverse_links",
                {"store": store_name, "drawer_id": old, "direction": "LINK_DIRECTION_INCOMING"},
            )
        )
        assert walked["drawer_ids"] == [old, new]
        refused = _error(
            await client.call_tool(
                "engram_link_drawers",
                {
                    "store": store_name,
                    "from_id": new,
                    "to_id": "d_gone",
                    "type": "LINK_TYPE_SUPERSEDES",
                },
            )
        )
        assert refused.startswith("not_found:"), refused


# ---------------------------------------------------------------- session start: prompt, resources


async def test_a_session_starts_from_the_prompt_and_reads_the_vocabulary(
    api: Api, store_name: str
) -> None:
    await api.create_store(store_name)
    async with connect(api, "write", store_name) as client:
        written = _answer(
            await client.call_tool(
                "engram_add_drawer_signed",
                {
                    "store": store_name,
                    "drawer": _draft(),
                    "signature": SIGNATURE,
                    "allow_new_wing": True,
                },
            )
        )
        drawer_id = written["drawer"]["id"]
        primed = _answer(await client.call_tool("engram_prime", {"store": store_name}))
        assert [item["drawer_id"] for item in primed["items"]] == [drawer_id]
        assert primed["items"][0]["reason"] == "canonical"

        prompts = (await client.list_prompts()).prompts
        assert [p.name for p in prompts] == ["engram_session_start"]
        started = await client.get_prompt(
            "engram_session_start", {"store": store_name, "context": "gateway design"}
        )
        message = started.messages[0]
        assert message.role == "user" and isinstance(message.content, types.TextContent)
        assert DECISION in message.content.text
        assert f"id {drawer_id}" in message.content.text, "the agent can expand what it sees"

        uris = {r.uri for r in (await client.list_resources()).resources}
        assert uris == {"engram://vocabulary/default", "engram://vocabulary/companion"}
        templates = (await client.list_resource_templates()).resource_templates
        assert {t.uri_template for t in templates} == {
            "engram://stores/{store}/vocabulary",
            "engram://stores/{store}/rooms",
        }
        companion = await client.read_resource("engram://vocabulary/companion")
        read = json.loads(companion.contents[0].text)  # type: ignore[union-attr]
        assert read["memory_types"] == list(COMPANION_LIBRARY.types)
        own = await client.read_resource(f"engram://stores/{store_name}/vocabulary")
        store_vocabulary = json.loads(own.contents[0].text)  # type: ignore[union-attr]
        assert store_vocabulary["mode"] == "default"
        assert store_vocabulary["intents"] == list(DEFAULT_LIBRARY.intents)
        assert set(store_vocabulary["search_defaults"]) == {"n_results", "min_relevance"}
        rooms = await client.read_resource(f"engram://stores/{store_name}/rooms")
        assert json.loads(rooms.contents[0].text)["wings"] == [  # type: ignore[union-attr]
            {"wing": "projects", "drawers": 1, "rooms": [{"room": "projects/engram", "drawers": 1}]}
        ]


async def test_prompts_and_resources_keep_the_store_scope(api: Api, store_name: str) -> None:
    await api.create_store(store_name)
    async with connect(api, "read", f"{store_name}-other") as client:
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("engram_session_start", {"store": store_name})
        assert "permission_denied" in str(refused.value)
        with pytest.raises(MCPError) as refused:
            await client.read_resource(f"engram://stores/{store_name}/rooms")
        assert "permission_denied" in str(refused.value)
        with pytest.raises(MCPError) as missing:
            await client.read_resource("engram://nowhere")
        assert "engram://vocabulary/<mode>" in str(missing.value)
