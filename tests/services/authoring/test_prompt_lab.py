"""The prompt lab over real gRPC: versions, diff, promote, the provider tab, the smoke test."""

from __future__ import annotations

import grpc
import pytest
from engram.v1 import authoring_pb2

from tests.services.authoring.conftest import Stack

pytestmark = pytest.mark.slow


async def test_prompt_versions_diff_and_promote(stack: Stack) -> None:
    listed = await stack.authoring.ListPromptVersions(
        authoring_pb2.ListPromptVersionsRequest(store=stack.store("read"))
    )
    assert [(v.version, v.active) for v in listed.versions] == [("default-v2", True)]
    builtin = listed.versions[0]

    created = await stack.authoring.CreatePromptVersion(
        authoring_pb2.CreatePromptVersionRequest(
            store=stack.store("write"),
            text=builtin.text + "\nPrefer fewer, sharper drawers.",
            note="sharper",
        )
    )
    assert created.version == "v2" and not created.active
    assert created.created_by == "write-token"
    with pytest.raises(grpc.aio.AioRpcError) as taken:
        await stack.authoring.CreatePromptVersion(
            authoring_pb2.CreatePromptVersionRequest(
                store=stack.store("write"), version="v2", text="again"
            )
        )
    assert taken.value.code() == grpc.StatusCode.ALREADY_EXISTS

    diff = await stack.authoring.DiffPromptVersions(
        authoring_pb2.DiffPromptVersionsRequest(
            store=stack.store("read"), from_version="default-v2", to_version="v2"
        )
    )
    assert "+Prefer fewer, sharper drawers." in diff.unified_diff
    assert "--- default-v2" in diff.unified_diff and "+++ v2" in diff.unified_diff

    with pytest.raises(grpc.aio.AioRpcError) as denied:
        await stack.authoring.PromotePromptVersion(
            authoring_pb2.PromotePromptVersionRequest(store=stack.store("write"), version="v2")
        )
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    promoted = await stack.authoring.PromotePromptVersion(
        authoring_pb2.PromotePromptVersionRequest(store=stack.store("admin"), version="v2")
    )
    assert promoted.active
    active = await stack.authoring.GetPromptVersion(
        authoring_pb2.GetPromptVersionRequest(store=stack.store("read"))
    )
    assert active.version == "v2"
    with pytest.raises(grpc.aio.AioRpcError) as missing:
        await stack.authoring.PromotePromptVersion(
            authoring_pb2.PromotePromptVersionRequest(store=stack.store("admin"), version="v9")
        )
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND
    for bad in ("../etc", "", "a" * 70):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stack.authoring.CreatePromptVersion(
                authoring_pb2.CreatePromptVersionRequest(
                    store=stack.store("write"), version=bad, text="" if not bad else "x"
                )
            )
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_provider_config_never_returns_a_key(stack: Stack) -> None:
    default = await stack.authoring.GetProviderConfig(
        authoring_pb2.GetProviderConfigRequest(store=stack.store("read"))
    )
    assert default.invoker == "extractive" and not default.api_key_configured
    with pytest.raises(grpc.aio.AioRpcError) as denied:
        await stack.authoring.SetProviderConfig(
            authoring_pb2.SetProviderConfigRequest(
                store=stack.store("write"), config=authoring_pb2.ProviderConfig(invoker="openai")
            )
        )
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED
    for bad in (
        authoring_pb2.ProviderConfig(invoker="gpt-please"),
        authoring_pb2.ProviderConfig(invoker="openai", reasoning_effort="maximal"),
        authoring_pb2.ProviderConfig(invoker="openai", base_url="file:///etc/passwd"),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stack.authoring.SetProviderConfig(
                authoring_pb2.SetProviderConfigRequest(store=stack.store("admin"), config=bad)
            )
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    saved = await stack.authoring.SetProviderConfig(
        authoring_pb2.SetProviderConfigRequest(
            store=stack.store("admin"),
            config=authoring_pb2.ProviderConfig(
                invoker="openai", model="gpt-test", reasoning_effort="low"
            ),
        )
    )
    # The fixture's keys hold an OpenAI key: configured, and never echoed anywhere.
    assert saved.api_key_configured
    assert "sk-test" not in str(saved)
    again = await stack.authoring.GetProviderConfig(
        authoring_pb2.GetProviderConfigRequest(store=stack.store("read"))
    )
    assert (again.invoker, again.model, again.reasoning_effort) == ("openai", "gpt-test", "low")


async def test_smoke_test_round_trip_writes_nothing(stack: Stack) -> None:
    answer = await stack.authoring.SmokeTest(
        authoring_pb2.SmokeTestRequest(store=stack.store("read"))
    )
    assert answer.ok, answer.message
    assert answer.invoker == "extractive" and "parse" in answer.message
    # The drafts the probe session gives, as compose would read them (the decision signed).
    decisions = [d for d in answer.drafts if d.memory_type == "decision"]
    assert decisions and "Redis" in decisions[0].content, list(answer.drafts)
    assert decisions[0].signature and decisions[0].signature in decisions[0].content
    assert decisions[0].attributes["speaker"] == "Architect"
    assert await stack.count() == 0

    # A provider that is not there: the smoke test says so instead of raising.
    await stack.authoring.SetProviderConfig(
        authoring_pb2.SetProviderConfigRequest(
            store=stack.store("admin"),
            config=authoring_pb2.ProviderConfig(
                invoker="openai", model="gpt-test", base_url="http://127.0.0.1:9/v1"
            ),
        )
    )
    failed = await stack.authoring.SmokeTest(
        authoring_pb2.SmokeTestRequest(store=stack.store("read"))
    )
    assert not failed.ok and failed.message and not failed.drafts
    assert "sk-test" not in failed.message
