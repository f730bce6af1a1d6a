"""Authoring operations: compose jobs, dry runs, walkback, the prompt lab, the provider and
the write policy (the authoring tier)."""

from __future__ import annotations

from engram.v1 import authoring_pb2, common_pb2

from gateway.core.access import TierCalls
from gateway.core.principal import Principal
from services.runtime.grpc_client import call


class AuthoringOperations(TierCalls):
    """Compose, dry run, walkback, prompts, provider, write policy."""

    # ------------------------------------------------------------------ authoring

    async def draft_rules(self) -> authoring_pb2.DraftRules:
        """The shape rules the authoring tier enforces (its settings in force). Not an
        operation of any caller: the gateway's own faces read them to describe and check
        writes the way the tier will."""
        return await call(self._tiers.authoring.GetDraftRules, authoring_pb2.GetDraftRulesRequest())

    async def compose(
        self, principal: Principal, request: authoring_pb2.ComposeRequest
    ) -> common_pb2.Job:
        return await self._store_call(principal, "compose", request, self._tiers.authoring.Compose)

    async def dry_run(
        self, principal: Principal, request: authoring_pb2.DryRunRequest
    ) -> authoring_pb2.DryRunResponse:
        return await self._store_call(principal, "dry_run", request, self._tiers.authoring.DryRun)

    async def walkback(
        self, principal: Principal, request: authoring_pb2.WalkbackRequest
    ) -> authoring_pb2.WalkbackResponse:
        return await self._store_call(
            principal, "walkback", request, self._tiers.authoring.Walkback
        )

    async def create_prompt_version(
        self, principal: Principal, request: authoring_pb2.CreatePromptVersionRequest
    ) -> authoring_pb2.PromptVersion:
        return await self._store_call(
            principal, "create_prompt_version", request, self._tiers.authoring.CreatePromptVersion
        )

    async def list_prompt_versions(
        self, principal: Principal, request: authoring_pb2.ListPromptVersionsRequest
    ) -> authoring_pb2.ListPromptVersionsResponse:
        return await self._store_call(
            principal, "list_prompt_versions", request, self._tiers.authoring.ListPromptVersions
        )

    async def get_prompt_version(
        self, principal: Principal, request: authoring_pb2.GetPromptVersionRequest
    ) -> authoring_pb2.PromptVersion:
        return await self._store_call(
            principal, "get_prompt_version", request, self._tiers.authoring.GetPromptVersion
        )

    async def diff_prompt_versions(
        self, principal: Principal, request: authoring_pb2.DiffPromptVersionsRequest
    ) -> authoring_pb2.DiffPromptVersionsResponse:
        return await self._store_call(
            principal, "diff_prompt_versions", request, self._tiers.authoring.DiffPromptVersions
        )

    async def promote_prompt_version(
        self, principal: Principal, request: authoring_pb2.PromotePromptVersionRequest
    ) -> authoring_pb2.PromptVersion:
        return await self._store_call(
            principal,
            "promote_prompt_version",
            request,
            self._tiers.authoring.PromotePromptVersion,
        )

    async def get_provider_config(
        self, principal: Principal, request: authoring_pb2.GetProviderConfigRequest
    ) -> authoring_pb2.ProviderConfig:
        return await self._store_call(
            principal, "get_provider_config", request, self._tiers.authoring.GetProviderConfig
        )

    async def set_provider_config(
        self, principal: Principal, request: authoring_pb2.SetProviderConfigRequest
    ) -> authoring_pb2.ProviderConfig:
        return await self._store_call(
            principal, "set_provider_config", request, self._tiers.authoring.SetProviderConfig
        )

    async def smoke_test(
        self, principal: Principal, request: authoring_pb2.SmokeTestRequest
    ) -> authoring_pb2.SmokeTestResponse:
        return await self._store_call(
            principal, "smoke_test", request, self._tiers.authoring.SmokeTest
        )

    async def get_write_policy(
        self, principal: Principal, request: authoring_pb2.GetWritePolicyRequest
    ) -> authoring_pb2.WritePolicy:
        return await self._store_call(
            principal, "get_write_policy", request, self._tiers.authoring.GetWritePolicy
        )

    async def set_write_policy(
        self, principal: Principal, request: authoring_pb2.SetWritePolicyRequest
    ) -> authoring_pb2.WritePolicy:
        return await self._store_call(
            principal, "set_write_policy", request, self._tiers.authoring.SetWritePolicy
        )
