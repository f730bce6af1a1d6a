"""The operation table read from the protos: every public RPC declares its tier and server,
and what it declares is true of the tiers and of the gateway core."""

from __future__ import annotations

import pytest
from engram.v1 import (
    authoring_pb2,
    common_pb2,
    corpus_pb2,
    gateway_pb2,
    options_pb2,
    retrieval_pb2,
)
from google.protobuf import descriptor_pb2

from gateway.core.operations import OPERATIONS, REQUIRED_TIER, declaration, operation_name
from gateway.core.principal import Tier
from gateway.core.service import Gateway
from gateway.proto_schema import required_paths

TIER_SERVICES = {
    "retrieval": retrieval_pb2.DESCRIPTOR.services_by_name["RetrievalService"],
    "corpus": corpus_pb2.DESCRIPTOR.services_by_name["CorpusService"],
    "authoring": authoring_pb2.DESCRIPTOR.services_by_name["AuthoringService"],
}
ENGRAM = gateway_pb2.DESCRIPTOR.services_by_name["Engram"]


def test_every_public_rpc_is_an_operation_with_a_tier() -> None:
    assert {op.rpc for op in OPERATIONS.values()} == {m.name for m in ENGRAM.methods}
    assert set(REQUIRED_TIER) == set(OPERATIONS)
    assert REQUIRED_TIER["search"] is Tier.READ
    assert REQUIRED_TIER["add_drawer_signed"] is Tier.WRITE
    assert REQUIRED_TIER["import_drawers"] is Tier.ADMIN


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_a_forwarded_operation_is_the_serving_tiers_rpc(name: str) -> None:
    op = OPERATIONS[name]
    if op.served_by == "gateway":
        return
    method = TIER_SERVICES[op.served_by].methods_by_name.get(op.rpc)
    assert method is not None, f"{op.served_by} has no RPC {op.rpc} to forward {name} to"
    assert method.input_type.full_name == op.request, f"{name}: request types differ"
    assert method.output_type.full_name == op.response, f"{name}: response types differ"
    assert (method.client_streaming, method.server_streaming) == (
        op.client_streaming,
        op.server_streaming,
    ), f"{name}: streaming differs"


def test_every_operation_is_served_by_the_gateway_or_forwarded() -> None:
    def served(name: str) -> bool:
        op = OPERATIONS[name]
        if callable(getattr(Gateway, name, None)):
            return True  # the gateway's own (its state, a stream, extra steps)
        return op.served_by != "gateway" and not (op.client_streaming or op.server_streaming)

    missing = sorted(name for name in OPERATIONS if not served(name))
    assert not missing, f"operations neither written in the gateway nor forwardable: {missing}"
    own = {name for name in OPERATIONS if callable(getattr(Gateway, name, None))}
    assert len(OPERATIONS) - len(own) >= 40, "the uniform operations are forwarded, not written"


def test_effects_are_declared_and_deletes_are_deletes() -> None:
    effects = {name: op.effect for name, op in OPERATIONS.items()}
    assert {n for n, e in effects.items() if e == "deletes"} == {
        "delete_store",
        "revoke_token",
        "delete_drawer",
        "delete_folder",
        "delete_file",
        "delete_link",
    }
    assert effects["search"] == "reads" and OPERATIONS["search"].idempotent
    assert effects["record_retrieval"] == "writes", "it changes salience"
    assert effects["add_drawer"] == "writes" and not OPERATIONS["add_drawer"].idempotent


def test_the_names_are_the_rpcs_in_snake_case() -> None:
    assert operation_name("AddDrawerSigned") == "add_drawer_signed"
    assert operation_name("Search") == "search"


def _options(declared: options_pb2.OperationOptions | None) -> descriptor_pb2.MethodOptions:
    options = descriptor_pb2.MethodOptions()
    if declared is not None:
        options.Extensions[options_pb2.operation].CopyFrom(declared)
    return options


@pytest.mark.parametrize(
    ("declared", "refusal"),
    [
        (None, "declares no (engram.v1.operation)"),
        (options_pb2.OperationOptions(served_by="gateway"), "declares no caller tier"),
        (
            options_pb2.OperationOptions(tier=common_pb2.CALLER_TIER_READ, served_by="gateway"),
            "declares no effect",
        ),
        (
            options_pb2.OperationOptions(
                tier=common_pb2.CALLER_TIER_READ,
                served_by="elsewhere",
                effect=options_pb2.EFFECT_READS,
            ),
            "is served by 'elsewhere'",
        ),
    ],
)
def test_an_rpc_without_a_valid_declaration_is_refused(
    declared: options_pb2.OperationOptions | None, refusal: str
) -> None:
    with pytest.raises(ValueError) as caught:
        declaration("Poke", _options(declared))
    assert refusal in str(caught.value)
    good = options_pb2.OperationOptions(
        tier=common_pb2.CALLER_TIER_WRITE, served_by="corpus", effect=options_pb2.EFFECT_WRITES
    )
    assert declaration("Poke", _options(good)) == good


def test_required_fields_come_from_the_protos_at_every_depth() -> None:
    signed = authoring_pb2.AddDrawerSignedRequest.DESCRIPTOR
    assert required_paths(signed) == [
        "drawer",
        "drawer.content",
        "drawer.memory_type",
        "drawer.wing",
        "drawer.room",
        "signature",
    ]
    assert required_paths(retrieval_pb2.SearchBatchRequest.DESCRIPTOR) == [
        "searches",
        "searches.query",
    ]
    assert required_paths(retrieval_pb2.ListDrawersRequest.DESCRIPTOR) == []
