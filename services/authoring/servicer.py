"""AuthoringService: protobuf → authoring domain → protobuf, nothing else."""

from __future__ import annotations

import asyncio
from typing import Any, TypeAlias

import grpc
from engram.v1 import authoring_pb2, authoring_pb2_grpc, common_pb2

from services.authoring import compose, consolidate, prompt_lab, writes
from services.authoring.convert import (
    mode_of,
    policy_from_proto,
    policy_proto,
    provenance_proto,
    tier_of,
)
from services.authoring.deps import AuthoringDeps
from services.authoring.state import AuthoringState
from services.runtime.errors import InvalidInput
from services.runtime.store_backup import BackupRpcs, Snapshots

Context: TypeAlias = grpc.aio.ServicerContext[Any, Any]


class AuthoringServicer(BackupRpcs, authoring_pb2_grpc.AuthoringServiceServicer):
    def __init__(self, deps: AuthoringDeps) -> None:
        self._deps = deps

    # ------------------------------------------------------------------ direct writes

    async def AddDrawer(
        self, request: authoring_pb2.AddDrawerRequest, context: Context
    ) -> authoring_pb2.WriteDrawerResponse:
        mode_of(request.store)
        return await writes.add_drawer(
            self._deps,
            request.store,
            request.drawer,
            signature=None,
            allow_new_wing=request.allow_new_wing,
            reason=request.reason,
            supersedes=list(request.supersedes),
        )

    async def AddDrawerSigned(
        self, request: authoring_pb2.AddDrawerSignedRequest, context: Context
    ) -> authoring_pb2.WriteDrawerResponse:
        mode_of(request.store)
        return await writes.add_drawer(
            self._deps,
            request.store,
            request.drawer,
            signature=request.signature,
            allow_new_wing=request.allow_new_wing,
            reason=request.reason,
            supersedes=list(request.supersedes),
        )

    async def UpdateDrawer(
        self, request: authoring_pb2.UpdateDrawerRequest, context: Context
    ) -> authoring_pb2.WriteDrawerResponse:
        mode_of(request.store)
        return await writes.update_drawer(self._deps, request)

    async def DeleteDrawer(
        self, request: authoring_pb2.DeleteDrawerRequest, context: Context
    ) -> authoring_pb2.DeleteDrawerResponse:
        mode_of(request.store)
        return await writes.delete_drawer(self._deps, request)

    async def GetProvenance(
        self, request: authoring_pb2.GetProvenanceRequest, context: Context
    ) -> authoring_pb2.GetProvenanceResponse:
        mode_of(request.store)
        if not request.id:
            raise InvalidInput("id is empty", field="id")
        state = await self._deps.state(request.store)
        entries = await asyncio.to_thread(state.provenance, request.id)
        return authoring_pb2.GetProvenanceResponse(entries=[provenance_proto(e) for e in entries])

    # ------------------------------------------------------------------ composing

    async def Compose(
        self, request: authoring_pb2.ComposeRequest, context: Context
    ) -> common_pb2.Job:
        mode_of(request.store)
        payload = await compose.plan(self._deps, request)
        return await self._deps.jobs.enqueue(compose.COMPOSE_KIND, request.store.name, payload)

    async def DryRun(
        self, request: authoring_pb2.DryRunRequest, context: Context
    ) -> authoring_pb2.DryRunResponse:
        mode_of(request.store)
        return await compose.dry_run(self._deps, request)

    async def Walkback(
        self, request: authoring_pb2.WalkbackRequest, context: Context
    ) -> authoring_pb2.WalkbackResponse:
        mode_of(request.store)
        return await compose.walkback(self._deps, request)

    # ------------------------------------------------------------------ consolidation

    async def Consolidate(
        self, request: authoring_pb2.ConsolidateRequest, context: Context
    ) -> common_pb2.Job:
        mode_of(request.store)
        payload = await consolidate.plan(self._deps, request)
        return await self._deps.jobs.enqueue(
            consolidate.CONSOLIDATE_KIND, request.store.name, payload
        )

    async def UndoConsolidation(
        self, request: authoring_pb2.UndoConsolidationRequest, context: Context
    ) -> authoring_pb2.Consolidation:
        mode_of(request.store)
        return await consolidate.undo(self._deps, request)

    async def ListConsolidations(
        self, request: authoring_pb2.ListConsolidationsRequest, context: Context
    ) -> authoring_pb2.ListConsolidationsResponse:
        mode_of(request.store)
        return await consolidate.list_consolidations(self._deps, request)

    # ------------------------------------------------------------------ prompt lab

    async def CreatePromptVersion(
        self, request: authoring_pb2.CreatePromptVersionRequest, context: Context
    ) -> authoring_pb2.PromptVersion:
        return await prompt_lab.create_version(self._deps, request)

    async def ListPromptVersions(
        self, request: authoring_pb2.ListPromptVersionsRequest, context: Context
    ) -> authoring_pb2.ListPromptVersionsResponse:
        return await prompt_lab.list_versions(self._deps, request)

    async def GetPromptVersion(
        self, request: authoring_pb2.GetPromptVersionRequest, context: Context
    ) -> authoring_pb2.PromptVersion:
        return await prompt_lab.get_version(self._deps, request)

    async def DiffPromptVersions(
        self, request: authoring_pb2.DiffPromptVersionsRequest, context: Context
    ) -> authoring_pb2.DiffPromptVersionsResponse:
        return await prompt_lab.diff_versions(self._deps, request)

    async def PromotePromptVersion(
        self, request: authoring_pb2.PromotePromptVersionRequest, context: Context
    ) -> authoring_pb2.PromptVersion:
        return await prompt_lab.promote(self._deps, request)

    async def GetProviderConfig(
        self, request: authoring_pb2.GetProviderConfigRequest, context: Context
    ) -> authoring_pb2.ProviderConfig:
        return await prompt_lab.get_provider(self._deps, request)

    async def SetProviderConfig(
        self, request: authoring_pb2.SetProviderConfigRequest, context: Context
    ) -> authoring_pb2.ProviderConfig:
        return await prompt_lab.set_provider(self._deps, request)

    async def SmokeTest(
        self, request: authoring_pb2.SmokeTestRequest, context: Context
    ) -> authoring_pb2.SmokeTestResponse:
        return await prompt_lab.smoke_test(self._deps, request)

    async def GetDraftRules(
        self, request: authoring_pb2.GetDraftRulesRequest, context: Context
    ) -> authoring_pb2.DraftRules:
        rules = self._deps.rules
        return authoring_pb2.DraftRules(
            max_content_chars=rules.max_content_chars,
            min_signature_chars=rules.min_signature_chars,
            max_sentences=rules.max_sentences,
            max_topic_chars=rules.max_topic_chars,
        )

    async def GetWritePolicy(
        self, request: authoring_pb2.GetWritePolicyRequest, context: Context
    ) -> authoring_pb2.WritePolicy:
        mode_of(request.store)
        state = await self._deps.state(request.store)
        return policy_proto(await asyncio.to_thread(state.policy))

    async def SetWritePolicy(
        self, request: authoring_pb2.SetWritePolicyRequest, context: Context
    ) -> authoring_pb2.WritePolicy:
        prompt_lab.require_admin(tier_of(request.store), "changing the write policy")
        policy = policy_from_proto(request.policy)
        state = await self._deps.state(request.store)
        return policy_proto(await asyncio.to_thread(state.set_policy, policy))

    # ------------------------------------------------------------------ stores

    def snapshots(self) -> Snapshots[AuthoringState]:
        return Snapshots("authoring", self._deps.states, AuthoringState.snapshot_parts)

    async def DropStore(
        self, request: common_pb2.DropStoreRequest, context: Context
    ) -> common_pb2.DropStoreResponse:
        mode_of(request.store)
        self._deps.forget(request.store.name)
        dropped = await asyncio.to_thread(
            self._deps.states.drop, request.store.name, keep_shared=request.keep_shared
        )
        return common_pb2.DropStoreResponse(dropped=dropped)
