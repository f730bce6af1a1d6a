"""Authoring: compose drawers from raw (a job), dry runs, walkback, the prompt lab, the
provider and the write policy. (Drawer writes are in `drawers`.)"""

from __future__ import annotations

from typing import Annotated

from engram.v1 import authoring_pb2, common_pb2
from fastapi import APIRouter, Path, Request, Response

from gateway.deps import CallerDep, StorePath
from gateway.routes._proto import ProtoOp

router = APIRouter(prefix="/v1/stores/{store}/authoring", tags=["authoring"])

VersionPath = Annotated[str, Path(description="a prompt version")]

COMPOSE = ProtoOp(authoring_pb2.ComposeRequest, common_pb2.Job)
DRY_RUN = ProtoOp(authoring_pb2.DryRunRequest, authoring_pb2.DryRunResponse)
WALKBACK = ProtoOp(authoring_pb2.WalkbackRequest, authoring_pb2.WalkbackResponse)
LIST_PROMPTS = ProtoOp(
    authoring_pb2.ListPromptVersionsRequest, authoring_pb2.ListPromptVersionsResponse, body=False
)
CREATE_PROMPT = ProtoOp(authoring_pb2.CreatePromptVersionRequest, authoring_pb2.PromptVersion)
GET_PROMPT = ProtoOp(
    authoring_pb2.GetPromptVersionRequest,
    authoring_pb2.PromptVersion,
    body=False,
    path_fields=("version",),
)
DIFF_PROMPTS = ProtoOp(
    authoring_pb2.DiffPromptVersionsRequest,
    authoring_pb2.DiffPromptVersionsResponse,
    body=False,
    query=("from_version", "to_version"),
)
PROMOTE_PROMPT = ProtoOp(
    authoring_pb2.PromotePromptVersionRequest,
    authoring_pb2.PromptVersion,
    body=False,
    path_fields=("version",),
)
GET_PROVIDER = ProtoOp(
    authoring_pb2.GetProviderConfigRequest, authoring_pb2.ProviderConfig, body=False
)
SET_PROVIDER = ProtoOp(authoring_pb2.SetProviderConfigRequest, authoring_pb2.ProviderConfig)
SMOKE_TEST = ProtoOp(authoring_pb2.SmokeTestRequest, authoring_pb2.SmokeTestResponse, body=False)
GET_POLICY = ProtoOp(authoring_pb2.GetWritePolicyRequest, authoring_pb2.WritePolicy, body=False)
SET_POLICY = ProtoOp(authoring_pb2.SetWritePolicyRequest, authoring_pb2.WritePolicy)


@router.post("/compose", **COMPOSE.route(status_code=202, summary="compose drawers → job"))
async def compose(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        COMPOSE, request, caller.gateway.operation("compose"), store=store, status_code=202
    )


@router.post("/dry-run", **DRY_RUN.route(summary="what compose would write for one session"))
async def dry_run(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(DRY_RUN, request, caller.gateway.operation("dry_run"), store=store)


@router.post("/walkback", **WALKBACK.route(summary="remove what sessions or files produced"))
async def walkback(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(WALKBACK, request, caller.gateway.operation("walkback"), store=store)


@router.get("/prompts", **LIST_PROMPTS.route(summary="authoring prompt versions"))
async def list_prompt_versions(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        LIST_PROMPTS, request, caller.gateway.operation("list_prompt_versions"), store=store
    )


@router.post("/prompts", **CREATE_PROMPT.route(summary="add a prompt version"))
async def create_prompt_version(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        CREATE_PROMPT, request, caller.gateway.operation("create_prompt_version"), store=store
    )


@router.get("/prompts:diff", **DIFF_PROMPTS.route(summary="unified diff of two versions"))
async def diff_prompt_versions(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        DIFF_PROMPTS, request, caller.gateway.operation("diff_prompt_versions"), store=store
    )


@router.get("/prompts/{version}", **GET_PROMPT.route(summary="one prompt version"))
async def get_prompt_version(
    store: StorePath, version: VersionPath, request: Request, caller: CallerDep
) -> Response:
    return await caller.run(
        GET_PROMPT,
        request,
        caller.gateway.operation("get_prompt_version"),
        store=store,
        version=version,
    )


@router.post(
    "/prompts/{version}:promote", **PROMOTE_PROMPT.route(summary="make a version active (admin)")
)
async def promote_prompt_version(
    store: StorePath, version: VersionPath, request: Request, caller: CallerDep
) -> Response:
    return await caller.run(
        PROMOTE_PROMPT,
        request,
        caller.gateway.operation("promote_prompt_version"),
        store=store,
        version=version,
    )


@router.get("/provider", **GET_PROVIDER.route(summary="the compose provider (no keys)"))
async def get_provider_config(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        GET_PROVIDER, request, caller.gateway.operation("get_provider_config"), store=store
    )


@router.put("/provider", **SET_PROVIDER.route(summary="set the compose provider (admin)"))
async def set_provider_config(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        SET_PROVIDER, request, caller.gateway.operation("set_provider_config"), store=store
    )


@router.post("/provider:smoke-test", **SMOKE_TEST.route(summary="one call to the provider"))
async def smoke_test(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        SMOKE_TEST, request, caller.gateway.operation("smoke_test"), store=store
    )


@router.get("/write-policy", **GET_POLICY.route(summary="which tiers may write what"))
async def get_write_policy(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        GET_POLICY, request, caller.gateway.operation("get_write_policy"), store=store
    )


@router.put("/write-policy", **SET_POLICY.route(summary="change the write policy (admin)"))
async def set_write_policy(store: StorePath, request: Request, caller: CallerDep) -> Response:
    return await caller.run(
        SET_POLICY, request, caller.gateway.operation("set_write_policy"), store=store
    )
