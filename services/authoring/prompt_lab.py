"""The prompt lab: versioned prompts per store, the provider tab, and the smoke test.

Prompt versions are immutable once created; promoting one makes it the prompt of every
compose job from then on (a running job keeps the version it started with). The provider
config names an invoker and model — never a key: keys come from the environment or a secret
file, and the API only says whether one is configured.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

from engram.v1 import authoring_pb2

from services.authoring.compose import invoker_for, proposal_preview
from services.authoring.convert import mode_of, prompt_proto, tier_of
from services.authoring.core import (
    ComposeChunk,
    ComposeInput,
    diff_prompts,
    finished_output,
)
from services.authoring.deps import AuthoringDeps
from services.authoring.invokers import ProviderSpec, key_provider
from services.authoring.state import Provider
from services.runtime.errors import EngramError, PermissionDenied
from services.vocabulary import TIER_ADMIN

_SMOKE_SESSION = "smoke-test"
_SMOKE_CHUNKS = (
    ComposeChunk(
        "smoke-1",
        "Architect",
        "We decided to keep the job queue in Redis, because it already runs on every host.",
        datetime(2026, 1, 5, 10, 0, tzinfo=UTC),
    ),
    ComposeChunk(
        "smoke-2",
        "Engineer",
        "Agreed. I prefer short job leases so a crashed worker is noticed quickly.",
        datetime(2026, 1, 5, 10, 1, tzinfo=UTC),
    ),
)


def require_admin(store_tier: str, what: str) -> None:
    if store_tier != TIER_ADMIN:
        raise PermissionDenied(f"{what} needs the admin tier", field="store.caller_tier")


async def create_version(
    deps: AuthoringDeps, request: authoring_pb2.CreatePromptVersionRequest
) -> authoring_pb2.PromptVersion:
    tier = tier_of(request.store)
    if tier == "read":
        raise PermissionDenied("creating a prompt version needs a write token", field="tier")
    state = await deps.state(request.store)
    prompt = await asyncio.to_thread(
        state.create_prompt,
        mode_of(request.store),
        version=request.version,
        text=request.text,
        created_by=request.store.caller_id,
        note=request.note,
    )
    return prompt_proto(prompt)


async def list_versions(
    deps: AuthoringDeps, request: authoring_pb2.ListPromptVersionsRequest
) -> authoring_pb2.ListPromptVersionsResponse:
    state = await deps.state(request.store)
    prompts = await asyncio.to_thread(state.prompts, mode_of(request.store))
    return authoring_pb2.ListPromptVersionsResponse(versions=[prompt_proto(p) for p in prompts])


async def get_version(
    deps: AuthoringDeps, request: authoring_pb2.GetPromptVersionRequest
) -> authoring_pb2.PromptVersion:
    state = await deps.state(request.store)
    prompt = await asyncio.to_thread(state.prompt, mode_of(request.store), request.version)
    return prompt_proto(prompt)


async def diff_versions(
    deps: AuthoringDeps, request: authoring_pb2.DiffPromptVersionsRequest
) -> authoring_pb2.DiffPromptVersionsResponse:
    state = await deps.state(request.store)
    mode = mode_of(request.store)
    before = await asyncio.to_thread(state.prompt, mode, request.from_version)
    after = await asyncio.to_thread(state.prompt, mode, request.to_version)
    return authoring_pb2.DiffPromptVersionsResponse(
        unified_diff=diff_prompts(
            before.text, after.text, from_name=before.version, to_name=after.version
        )
    )


async def promote(
    deps: AuthoringDeps, request: authoring_pb2.PromotePromptVersionRequest
) -> authoring_pb2.PromptVersion:
    require_admin(tier_of(request.store), "promoting a prompt version")
    state = await deps.state(request.store)
    prompt = await asyncio.to_thread(state.promote, mode_of(request.store), request.version)
    return prompt_proto(prompt)


def _config(deps: AuthoringDeps, provider: Provider) -> authoring_pb2.ProviderConfig:
    needs = key_provider(provider.invoker)
    return authoring_pb2.ProviderConfig(
        invoker=provider.invoker,
        model=provider.model,
        reasoning_effort=provider.reasoning_effort,
        base_url=provider.base_url,
        api_key_configured=deps.keys.configured(needs) if needs else False,
    )


async def get_provider(
    deps: AuthoringDeps, request: authoring_pb2.GetProviderConfigRequest
) -> authoring_pb2.ProviderConfig:
    mode_of(request.store)
    state = await deps.state(request.store)
    return _config(deps, await asyncio.to_thread(state.provider))


async def set_provider(
    deps: AuthoringDeps, request: authoring_pb2.SetProviderConfigRequest
) -> authoring_pb2.ProviderConfig:
    require_admin(tier_of(request.store), "changing the provider")
    config = request.config
    invoker = config.invoker or "extractive"
    # ProviderSpec is the one check of a provider tab (names, effort, URL shape).
    ProviderSpec(
        invoker=invoker,
        model=config.model,
        reasoning_effort=config.reasoning_effort,
        base_url=config.base_url,
    )
    state = await deps.state(request.store)
    provider = Provider(invoker, config.model, config.reasoning_effort, config.base_url)
    await asyncio.to_thread(state.set_provider, provider)
    return _config(deps, provider)


async def smoke_test(
    deps: AuthoringDeps, request: authoring_pb2.SmokeTestRequest
) -> authoring_pb2.SmokeTestResponse:
    """A two-turn round trip at the live config: the provider answers, its answer parses, and
    the drafts it proposed are shown. Writes nothing; a failure is reported, not raised."""
    store = request.store
    mode = mode_of(store)
    state = await deps.state(store)
    prompt = await asyncio.to_thread(state.prompt, mode, "")
    async with invoker_for(deps, store) as invoker:
        started = time.perf_counter()
        try:
            text = await invoker.compose(
                ComposeInput(
                    session_id=_SMOKE_SESSION,
                    chunks=_SMOKE_CHUNKS,
                    prompt_text=prompt.text,
                    mode=mode,
                )
            )
            parsed = finished_output(text, mode=mode, chunks=_SMOKE_CHUNKS)
            drafts = [proposal_preview(p) for p in parsed.drafts]
            ok = True
            message = (
                f"the {invoker.name} invoker answered with {len(parsed.drafts)} drawer(s) that "
                f"parse (prompt {prompt.version})"
            )
        except EngramError as error:
            ok = False
            message = error.message
            drafts = []
        return authoring_pb2.SmokeTestResponse(
            ok=ok,
            invoker=invoker.name,
            model=invoker.model,
            latency_ms=(time.perf_counter() - started) * 1000,
            message=message,
            drafts=drafts,
        )
