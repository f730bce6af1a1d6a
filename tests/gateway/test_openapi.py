"""The OpenAPI document and the proto → JSON Schema derivation behind it (and behind MCP)."""

from __future__ import annotations

from typing import Any

import jsonschema  # type: ignore[import-untyped]
from engram.v1 import common_pb2, corpus_pb2, gateway_pb2, retrieval_pb2
from google.protobuf.message import Message

from gateway.proto_schema import schema_for
from gateway.protojson import to_json
from tests.gateway.conftest import Api


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(_refs(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node))
    return set()


async def test_openapi_bodies_and_answers_come_from_the_protos(api: Api) -> None:
    answer = await api.client.get("/openapi.json")
    assert answer.status_code == 200
    spec = answer.json()
    schemas = spec["components"]["schemas"]
    for ref in _refs(spec):
        assert ref.removeprefix("#/components/schemas/") in schemas, ref
    for name, schema in schemas.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        assert not name.startswith("engram.") or schema.get("type") in ("object", "string"), name

    search = spec["paths"]["/v1/stores/{store}/search"]["post"]
    body_ref = search["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    body = schemas[body_ref.rsplit("/", 1)[-1]]
    assert body["additionalProperties"] is False
    assert "store" not in body["properties"]
    for field in (
        "query",
        "intent",
        "n_results",
        "min_score",
        "wing",
        "room",
        "memory_types",
        "include_breakdown",
        "include_deprecated",
        "as_of",
    ):
        assert field in body["properties"], field
    assert body["properties"]["as_of"] == {"type": "string", "format": "date-time"}
    assert body["required"] == ["query"], "required fields are the protos' (engram.v1.required)"
    assert schemas["engram.v1.DrawerDraft"]["required"] == [
        "content",
        "memory_type",
        "wing",
        "room",
    ]
    answer_ref = search["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    assert answer_ref.endswith("engram.v1.SearchResponse")
    assert schemas["engram.v1.RankerMode"]["enum"][0] == "RANKER_MODE_UNSPECIFIED"

    update = spec["paths"]["/v1/stores/{store}/drawers/{id}"]["patch"]
    update_ref = update["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    update_body = schemas[update_ref.rsplit("/", 1)[-1]]
    assert "id" not in update_body["properties"] and "id" not in update_body.get("required", [])
    assert (
        "multipart/form-data"
        in spec["paths"]["/v1/stores/{store}/files"]["post"]["requestBody"]["content"]
    )
    assert spec["paths"]["/v1/stores"]["post"]["responses"]["201"]
    assert spec["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


def _validator(message: type[Message], omit: tuple[str, ...] = ()) -> Any:
    return jsonschema.Draft202012Validator(schema_for(message.DESCRIPTOR, omit=omit))


def test_schema_accepts_what_message_to_dict_writes() -> None:
    drawer = common_pb2.Drawer(
        id="d1",
        content="c",
        memory_type="workflow",
        pin_status=common_pb2.PIN_STATUS_PINNED,
        salience=0.5,
        attributes={"a": "b"},
        confidence=0.9,
        retrieval_count=3,
    )
    drawer.created_at.GetCurrentTime()
    drawer.derived_from.add(raw_chunk_id="r", session_id="s", ordinal=1)
    samples: list[Message] = [
        drawer,
        retrieval_pb2.SearchResponse(
            intent="history", results=[retrieval_pb2.SearchHit(drawer=drawer)]
        ),
        gateway_pb2.StoreInfo(spec=gateway_pb2.StoreSpec(name="s"), drawer_count=2**40),
        corpus_pb2.CorpusTree(
            root=corpus_pb2.CorpusFolder(path="", folders=[corpus_pb2.CorpusFolder(path="a")])
        ),
        common_pb2.AuthorityProfile(tiers_by_author={"ann": common_pb2.AUTHORITY_TIER_DIRECTIVE}),
    ]
    for sample in samples:
        errors = list(_validator(type(sample)).iter_errors(to_json(sample)))
        assert not errors, (type(sample).__name__, [e.message for e in errors])


def test_schema_shapes() -> None:
    search = schema_for(retrieval_pb2.SearchRequest.DESCRIPTOR)
    assert "store" not in search["properties"]
    assert search["additionalProperties"] is False
    batch = schema_for(retrieval_pb2.SearchBatchRequest.DESCRIPTOR)
    nested = batch["$defs"]["engram.v1.SearchRequest"]
    assert "store" not in nested["properties"]  # a nested StoreContext is the gateway's too
    assert "engram.v1.StoreContext" not in batch["$defs"]
    info = schema_for(gateway_pb2.StoreInfo.DESCRIPTOR, omit=())
    assert info["properties"]["drawer_count"]["type"] == ["integer", "string"]
    chunk = schema_for(corpus_pb2.UploadFileChunk.DESCRIPTOR, omit=())
    assert chunk["properties"]["data"] == {"type": "string", "contentEncoding": "base64"}
    both = {"header": {"name": "x"}, "data": "eA=="}
    assert list(_validator(corpus_pb2.UploadFileChunk).iter_errors(both))  # a oneof
    full = schema_for(retrieval_pb2.StatsRequest.DESCRIPTOR, omit=())
    assert "store" in full["properties"]
    assert list(_validator(retrieval_pb2.SearchRequest, ("store",)).iter_errors({"bogus": 1}))
