"""Prime through the retrieval tier: a session start offers pinned and canonical drawers first,
follows the context when one is given, never offers what is superseded or deprecated, and
stays inside its budget."""

from __future__ import annotations

import grpc
import pytest
from engram.v1 import common_pb2, retrieval_pb2

from tests.services.retrieval.conftest import RunningRetrieval
from tests.services.retrieval.test_contract import drawer

PINNED = common_pb2.PIN_STATUS_PINNED
DEPRECATED = common_pb2.PIN_STATUS_DEPRECATED

DRAWERS = [
    drawer(
        "pin-style",
        "The team requires every public function to carry type hints and a docstring.",
        "directive",
        room="projects/house-style",
        pin=PINNED,
    ),
    drawer(
        "dec-queue",
        "The Architect decided that background jobs run on Redis through arq.",
        "decision",
        room="projects/jobs",
        signature="run on Redis through arq",
    ),
    drawer(
        "dec-billing",
        "The Architect decided that invoices are rounded to the cent only when they are issued.",
        "decision",
        room="projects/billing",
        signature="rounded to the cent only",
    ),
    drawer(
        "obs-billing",
        "The engineer observed that the invoice rounding test fails on leap days.",
        "observation",
        room="projects/billing",
    ),
    drawer(
        "old-queue",
        "The Architect decided that background jobs run on Celery with RabbitMQ.",
        "decision",
        room="projects/jobs",
        pin=DEPRECATED,
        signature="Celery with RabbitMQ",
    ),
    drawer(
        "obs-lunch",
        "The engineer noted that the canteen serves soup on Fridays.",
        "observation",
        room="life/office",
    ),
]


async def _prime(r: RunningRetrieval, **fields: object) -> retrieval_pb2.PrimeResponse:
    return await r.stub.Prime(retrieval_pb2.PrimeRequest(store=r.store(), **fields))  # type: ignore[arg-type]


async def _indexed(r: RunningRetrieval) -> None:
    await r.stub.IndexDrawers(retrieval_pb2.IndexDrawersRequest(store=r.store(), drawers=DRAWERS))


async def test_without_context_pinned_then_canonical_never_deprecated(
    retrieval: RunningRetrieval,
) -> None:
    await _indexed(retrieval)
    primed = await _prime(retrieval, n_results=3)
    ids = [item.drawer_id for item in primed.items]
    assert ids[0] == "pin-style", ids
    assert set(ids[1:]) == {"dec-queue", "dec-billing"}, ids
    assert [item.reason for item in primed.items] == ["pinned", "canonical", "canonical"]
    assert "old-queue" not in ids
    assert primed.text.startswith("[directive · pinned · projects/house-style")
    assert primed.tokens_used <= primed.token_budget


async def test_a_context_leads_with_what_it_reaches_then_the_pins(
    retrieval: RunningRetrieval,
) -> None:
    await _indexed(retrieval)
    primed = await _prime(retrieval, context="fixing how invoices are rounded", n_results=5)
    ids = [item.drawer_id for item in primed.items]
    reasons = [item.reason for item in primed.items]
    assert ids[:2] == ["dec-billing", "obs-billing"], f"what the context reaches leads: {ids}"
    assert reasons[:2] == ["canonical", "relevant"]
    assert ids[2:] == ["pin-style", "dec-queue"], f"then pins, then canonical claims: {ids}"
    assert "obs-lunch" not in ids, "an ambient drawer the context did not reach stays out"
    assert primed.items[0].relevance > 0.3


async def test_a_superseded_decision_is_not_offered(retrieval: RunningRetrieval) -> None:
    await _indexed(retrieval)
    newer = drawer(
        "dec-queue-2",
        "The Architect decided that background jobs run on Redis streams with consumer groups.",
        "decision",
        room="projects/jobs",
        signature="Redis streams with consumer groups",
    )
    await retrieval.stub.IndexDrawers(
        retrieval_pb2.IndexDrawersRequest(store=retrieval.store(), drawers=[newer])
    )
    await retrieval.stub.CreateLink(
        retrieval_pb2.CreateLinkRequest(
            store=retrieval.store(),
            from_id="dec-queue-2",
            to_id="dec-queue",
            type=retrieval_pb2.LINK_TYPE_SUPERSEDES,
        )
    )
    ids = [i.drawer_id for i in (await _prime(retrieval, n_results=5)).items]
    assert "dec-queue-2" in ids and "dec-queue" not in ids, ids
    ids = [i.drawer_id for i in (await _prime(retrieval, context="how jobs are queued")).items]
    assert "dec-queue" not in ids, ids


async def test_the_budget_bounds_the_text(retrieval: RunningRetrieval) -> None:
    await _indexed(retrieval)
    primed = await _prime(retrieval, token_budget=40)
    assert primed.tokens_used <= 40 and primed.token_budget == 40
    assert len(primed.items) >= 1, "the first drawer is cut to fit rather than dropped"


async def test_scope_and_limits(retrieval: RunningRetrieval) -> None:
    await _indexed(retrieval)
    primed = await _prime(retrieval, room="projects/billing")
    assert {i.drawer_id for i in primed.items} == {"dec-billing", "obs-billing"}
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await _prime(retrieval, n_results=21)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "at most 20" in (caught.value.details() or "")
    empty = await retrieval.stub.Prime(
        retrieval_pb2.PrimeRequest(store=retrieval.store(name="empty-store"))
    )
    assert list(empty.items) == [] and empty.text == ""
