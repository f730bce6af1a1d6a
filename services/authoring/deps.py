"""What the authoring servicer and its compose worker need, wired once by `__main__` (or a test)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from engram.v1 import common_pb2, retrieval_pb2

from services.authoring.core import DraftRules
from services.authoring.invokers import ApiKeys
from services.authoring.settings import AuthoringSettings
from services.authoring.state import AuthoringState
from services.embedder.client import EmbedderClient
from services.runtime.grpc_client import call
from services.runtime.jobs import JobQueue
from services.runtime.store_router import StoreRouter
from services.runtime.stores import OpenStores

WING_SAMPLE = 64  # wings and rooms shown to an invoker as hints


@dataclass
class AuthoringDeps:
    settings: AuthoringSettings
    states: OpenStores[AuthoringState]
    retrieval: StoreRouter  # every replica; a call goes to its store's (StoreContext.placement)
    corpus: StoreRouter
    embedder: EmbedderClient  # the offline composer's sentence typing
    jobs: JobQueue
    keys: ApiKeys
    _wings: dict[str, frozenset[str]] = field(default_factory=dict)

    @property
    def rules(self) -> DraftRules:
        return DraftRules(
            max_content_chars=self.settings.max_content_chars,
            min_signature_chars=self.settings.min_signature_chars,
        )

    async def state(self, store: common_pb2.StoreContext) -> AuthoringState:
        return await asyncio.to_thread(self.states.get, store.name)

    async def places(self, store: common_pb2.StoreContext) -> tuple[list[str], list[str]]:
        """The store's wings and rooms, most used first (from the retrieval tier's facets)."""
        answer = await call(
            self.retrieval.ListDrawers,
            retrieval_pb2.ListDrawersRequest(
                store=store,
                page=common_pb2.PageRequest(page_size=1),
                include_facets=True,
            ),
        )
        wings = sorted(answer.facets.wings, key=lambda w: -w.count)
        rooms = sorted((r for w in wings for r in w.rooms), key=lambda r: -r.count)
        self._wings[store.name] = frozenset(w.wing for w in wings)
        return [w.wing for w in wings], [r.room for r in rooms]

    async def wings(self, store: common_pb2.StoreContext, wanted: str) -> frozenset[str]:
        """The existing wings; asks the retrieval tier again when `wanted` is not among the
        cached ones (a wing is never "new" on stale information)."""
        known = self._wings.get(store.name)
        if known is None or wanted not in known:
            await self.places(store)
            known = self._wings.get(store.name, frozenset())
        return known

    def note_wing(self, store: str, wing: str) -> None:
        self._wings[store] = self._wings.get(store, frozenset()) | {wing}

    def forget(self, store: str) -> None:
        self._wings.pop(store, None)

    async def close(self) -> None:
        """Close the per-store state and the channels to the other tiers."""
        self.states.close()
        await self.retrieval.close()
        await self.corpus.close()
