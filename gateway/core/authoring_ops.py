"""What the gateway asks of the authoring tier for itself (its draft rules). The authoring
operations of the public API (writes, compose, dry runs, the prompt lab, the provider, the
write policy) are forwarded as the operation table declares (`TierCalls.forward`)."""

from __future__ import annotations

from engram.v1 import authoring_pb2

from gateway.core.access import TierCalls
from services.runtime.grpc_client import call


class AuthoringOperations(TierCalls):
    """The authoring tier's rules, for the gateway's own faces."""

    async def draft_rules(self) -> authoring_pb2.DraftRules:
        """The shape rules the authoring tier enforces (its settings in force). Not an
        operation of any caller: the gateway's own faces read them to describe and check
        writes the way the tier will."""
        return await call(self._tiers.authoring.GetDraftRules, authoring_pb2.GetDraftRulesRequest())
