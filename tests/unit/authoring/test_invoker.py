"""parse_output: the one schema every invoker's text must meet, all-or-nothing on structure."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt
import pytest

from services.authoring.core import (
    ComposeChunk,
    ComposeInput,
    DraftProposal,
    ExtractiveInvoker,
    Invoker,
    MalformedOutput,
    parse_output,
    render_session,
)
from services.runtime.errors import InvalidInput


def drawer(**changes: object) -> dict[str, object]:
    item: dict[str, object] = {
        "content": "The Architect decided that the API returns 404 for missing drawers.",
        "memory_type": "decision",
        "wing": "projects",
        "room": "projects/rev-engram",
        "derived_from": ["c1"],
    }
    item.update(changes)
    return {k: v for k, v in item.items() if v is not _DROP}


_DROP = object()


def output(*items: object) -> str:
    return json.dumps({"drawers": list(items)})


def test_a_full_drawer_is_read_into_a_proposal() -> None:
    text = output(
        drawer(
            pin_status="Pinned",
            topic=" api-errors ",
            signature="API returns 404 for missing drawers",
            confidence=0.9,
            derived_from=["c1", "c2", "c1"],
            memory_type="Decision",
        )
    )
    parsed = parse_output(text, mode="default")
    assert parsed.problems == []
    assert parsed.drafts == [
        DraftProposal(
            content="The Architect decided that the API returns 404 for missing drawers.",
            memory_type="decision",
            wing="projects",
            room="projects/rev-engram",
            derived_from=("c1", "c2"),
            pin_status="pinned",
            topic="api-errors",
            signature="API returns 404 for missing drawers",
            confidence=0.9,
        )
    ]
    assert parsed.drafts[0].signed


def test_optional_fields_may_be_null_or_left_out() -> None:
    text = output(drawer(pin_status=None, topic=None, signature=None, confidence=None))
    (proposal,) = parse_output(text, mode="default").drafts
    assert (proposal.pin_status, proposal.topic, proposal.signature, proposal.confidence) == (
        "active",
        "",
        None,
        None,
    )
    assert not proposal.signed


def test_an_empty_signature_reads_as_an_ambient_drawer() -> None:
    (proposal,) = parse_output(output(drawer(signature="  ")), mode="default").drafts
    assert proposal.signature is None


def test_a_bare_list_and_a_code_fence_are_accepted() -> None:
    bare = json.dumps([drawer()])
    fenced = "```json\n" + output(drawer()) + "\n```\n"
    assert parse_output(bare, mode="default") == parse_output(fenced, mode="default")
    assert len(parse_output(bare, mode="default").drafts) == 1


def test_no_drawers_is_a_valid_answer() -> None:
    parsed = parse_output('{"drawers": []}', mode="companion")
    assert (parsed.drafts, parsed.problems) == ([], [])


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "it is empty"),
        ("Here are the drawers you asked for: ...", "not JSON"),
        ('{"drawers": [', "not JSON"),
        ('{"drawers": [{"confidence": NaN}]}', "not JSON"),
        ('"drawers"', "the top level is a string"),
        ("42", "the top level is a number"),
        ("null", "the top level is null"),
        ('{"drawer": []}', "exactly the key 'drawers'"),
        ('{"drawers": [], "notes": "none"}', "exactly the key 'drawers'"),
        ('{"drawers": {"content": "x"}}', "'drawers' is an object; expected a list"),
        ('{"drawers": ["The Architect decided."]}', "drawer #1 is a string"),
        ("```json\nnot json\n```", "not JSON"),
    ],
)
def test_output_that_is_not_the_schema_fails_the_session(text: str, problem: str) -> None:
    with pytest.raises(MalformedOutput) as caught:
        parse_output(text, mode="default")
    assert problem in caught.value.message
    assert caught.value.field == "output"


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"content": 42}, "field 'content' is a number; expected a string"),
        ({"memory_type": None}, "field 'memory_type' is null; expected a string"),
        ({"wing": ["projects"]}, "field 'wing' is a list"),
        ({"room": {"wing": "projects"}}, "field 'room' is an object"),
        ({"derived_from": "c1"}, "field 'derived_from' is a string; expected a list"),
        ({"derived_from": [1, 2]}, "expected a list of chunk ids"),
        ({"derived_from": [""]}, "expected a list of chunk ids"),
        ({"signature": 5}, "field 'signature' is a number; expected a string or null"),
        ({"topic": True}, "field 'topic' is a boolean"),
        ({"pin_status": "sticky"}, "'pin_status' is 'sticky'; expected one of"),
        ({"confidence": "high"}, "field 'confidence' is a string; expected a number"),
        ({"confidence": True}, "field 'confidence' is a boolean; expected a number"),
        ({"confidence": 1.5}, "'confidence' is 1.5; expected 0..1"),
        ({"author": "The_Architect"}, "unknown fields ['author']"),
        ({"speaker": ["The_Architect"]}, "field 'speaker' is a list"),
        ({"derived_from": _DROP}, "lacks required fields ['derived_from']"),
        ({"content": _DROP, "room": _DROP}, "lacks required fields ['content', 'room']"),
    ],
)
def test_a_drawer_with_wrong_fields_fails_the_whole_session(
    changes: dict[str, object], problem: str
) -> None:
    text = output(
        drawer(content="The Engineer fixed the crash in the servicer."), drawer(**changes)
    )
    with pytest.raises(MalformedOutput) as caught:
        parse_output(text, mode="default")
    assert "drawer #2" in caught.value.message
    assert problem in caught.value.message


def test_malformed_output_is_an_invalid_input_error() -> None:
    assert issubclass(MalformedOutput, InvalidInput)


def test_a_type_outside_the_mode_is_dropped_and_named() -> None:
    text = output(drawer(memory_type="want"), drawer(content="The Engineer added a retry."))
    parsed = parse_output(text, mode="default")
    assert [d.content for d in parsed.drafts] == ["The Engineer added a retry."]
    assert len(parsed.problems) == 1
    assert parsed.problems[0].startswith("drawer #1: memory_type 'want' is not in the default")


def test_a_repeated_drawer_is_dropped() -> None:
    parsed = parse_output(output(drawer(), drawer(derived_from=["c2"])), mode="default")
    assert len(parsed.drafts) == 1
    assert parsed.problems == ["drawer #2: repeats drawer #1; dropped"]


def test_invented_chunk_ids_are_ignored_and_a_drawer_citing_none_is_dropped() -> None:
    text = output(
        drawer(derived_from=["c1", "c9"]),
        drawer(content="The Engineer added a retry.", derived_from=["c7"]),
        drawer(content="The Engineer removed the cache.", derived_from=[]),
    )
    parsed = parse_output(text, mode="default", chunk_ids={"c1", "c2"})
    assert [d.derived_from for d in parsed.drafts] == [("c1",)]
    assert parsed.problems == [
        "drawer #1: cites chunks not in the session ['c9']; ignored",
        "drawer #2: cites chunks not in the session ['c7']; ignored",
        "drawer #2: cites no chunk of the session, so it cannot be walked back; dropped",
        "drawer #3: cites no chunk of the session, so it cannot be walked back; dropped",
    ]


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(InvalidInput) as caught:
        parse_output(output(drawer()), mode="swarm")
    assert caught.value.field == "mode"


def test_a_proposal_becomes_the_validators_input() -> None:
    (proposal,) = parse_output(output(drawer(topic="api")), mode="default").drafts
    item = proposal.to_input(added_by="The_Architect")
    assert (item.content, item.memory_type, item.room, item.topic, item.added_by) == (
        proposal.content,
        "decision",
        "projects/rev-engram",
        "api",
        "The_Architect",
    )


def test_to_json_round_trips_through_the_parser() -> None:
    (proposal,) = parse_output(output(drawer(signature="API returns 404")), mode="default").drafts
    again = parse_output(json.dumps({"drawers": [proposal.to_json()]}), mode="default")
    assert again.drafts == [proposal]


async def _no_vectors(texts: list[str]) -> npt.NDArray[np.float32]:
    raise AssertionError("building an invoker embeds nothing")


def test_the_extractive_invoker_is_an_invoker() -> None:
    invoker = ExtractiveInvoker(_no_vectors)
    assert isinstance(invoker, Invoker)
    assert (invoker.name, invoker.model) == ("extractive", "extractive-v8")


def test_a_speaker_is_read_trimmed_and_written_back() -> None:
    (proposal,) = parse_output(output(drawer(speaker="  coding-agent ")), mode="default").drafts
    assert proposal.speaker == "coding-agent"
    assert proposal.to_json()["speaker"] == "coding-agent"


def test_render_session_heads_each_chunk_with_its_id_and_lists_the_hints() -> None:
    request = ComposeInput(
        session_id="s1",
        chunks=[
            ComposeChunk("c1", "user", "User: I prefer tea.", datetime(2025, 3, 4, tzinfo=UTC)),
            ComposeChunk("c2", "", "Assistant: Noted."),
        ],
        prompt_text="",
        mode="companion",
        wings=("people",),
        rooms=("people/kyle",),
        user_name="Kyle",
    )
    text = render_session(request)
    assert "Existing wings: people" in text
    assert "Existing rooms: people/kyle" in text
    assert "The user's name: Kyle" in text
    assert "--- chunk c1 (user) at 2025-03-04T00:00:00+00:00\nUser: I prefer tea." in text
    assert "--- chunk c2\nAssistant: Noted." in text
