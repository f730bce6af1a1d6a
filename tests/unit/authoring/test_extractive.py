"""The extractive invoker: typed, third-person, signed drafts from realistic sessions."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

import pytest

from services.authoring.core import (
    ComposeChunk,
    ComposeInput,
    DraftProposal,
    ExtractiveInvoker,
    choose_room,
    compose_json,
    extract_drafts,
    parse_output,
    validate_draft,
)
from services.runtime.errors import InvalidInput
from tests.unit.authoring._dialogs import (
    TUESDAY,
    companion_session,
    engineering_session,
)

ENGINEERING_EXPECTED = [
    (
        "bug",
        "The Engineer reported that the search endpoint crashes with a KeyError when the query "
        "string is empty.",
        None,
        ("raw-eng-0",),
    ),
    (
        "decision",
        "The Architect decided that the API returns 404 for missing drawers.",
        "API returns 404 for missing drawers",
        ("raw-eng-1",),
    ),
    (
        "directive",
        "The Architect directed that the team never write to the drawer pool outside the "
        "retrieval tier.",
        "drawer pool outside the retrieval tier",
        ("raw-eng-1",),
    ),
    (
        "implementation",
        "The Engineer fixed the empty-query crash by validating the request in the servicer.",
        None,
        ("raw-eng-1",),
    ),
    (
        "observation",
        "The Engineer noted that the retrieval tier answers in about 40 ms per query on the H100.",
        None,
        ("raw-eng-1",),
    ),
    (
        "decision",
        "The Architect decided to go with Qdrant edge for the embedded vector store.",
        "Qdrant edge for the embedded vector store",
        ("raw-eng-2",),
    ),
]

COMPANION_EXPECTED = [
    (
        "observation",
        "Kyle is running on fumes today after back-to-back meetings (as of 2025-03-04).",
        None,
        ("raw-kyle-0",),
    ),
    (
        "preference",
        "Kyle prefers tea over coffee in the evenings, coffee keeps them up.",
        None,
        ("raw-kyle-0",),
    ),
    (
        "want",
        "Kyle is planning to check out the new pho place this week (as of 2025-03-04). Worth "
        "asking about it later if they don't bring it up.",
        None,
        ("raw-kyle-1",),
    ),
    (
        "opinion",
        "Kyle thinks meal kits are not worth the money at all.",
        None,
        ("raw-kyle-1",),
    ),
]


def summary(drafts: list[DraftProposal]) -> list[tuple[str, str, str | None, tuple[str, ...]]]:
    return [(d.memory_type, d.content, d.signature, d.derived_from) for d in drafts]


async def test_an_engineering_session_yields_typed_third_person_signed_drafts() -> None:
    text = await ExtractiveInvoker().compose(engineering_session())
    parsed = parse_output(text, mode="default")
    assert parsed.problems == []
    assert summary(parsed.drafts) == ENGINEERING_EXPECTED
    assert {d.room for d in parsed.drafts} == {"projects/rev-engram"}  # the room it mentions
    assert {d.pin_status for d in parsed.drafts} == {"active"}  # pinning is an admin's call


async def test_a_companion_session_yields_the_users_speech_acts_framed_by_name() -> None:
    text = await ExtractiveInvoker().compose(companion_session())
    parsed = parse_output(text, mode="companion")
    assert parsed.problems == []
    assert summary(parsed.drafts) == COMPANION_EXPECTED
    assert {d.room for d in parsed.drafts} == {"people/kyle"}


@pytest.mark.parametrize("make_session", [engineering_session, companion_session])
async def test_composition_is_deterministic(make_session: Callable[[], ComposeInput]) -> None:
    invoker = ExtractiveInvoker()
    first, second = await invoker.compose(make_session()), await invoker.compose(make_session())
    assert first == second
    assert first == compose_json(make_session())


@pytest.mark.parametrize("make_session", [engineering_session, companion_session])
async def test_every_emitted_draft_passes_validation_without_warnings(
    make_session: Callable[[], ComposeInput],
) -> None:
    request = make_session()
    parsed = parse_output(
        await ExtractiveInvoker().compose(request),
        mode=request.mode,
        chunk_ids={c.chunk_id for c in request.chunks},
    )
    assert parsed.drafts
    for proposal in parsed.drafts:
        result = validate_draft(
            proposal.to_input(),
            mode=request.mode,
            tier="admin",
            existing_wings=request.wings,
            allow_new_wing=False,
            signed=proposal.signed,
            signature=proposal.signature,
        )
        assert result.warnings == [], proposal.content
        assert not result.new_wing


def test_the_output_is_json_in_the_schema() -> None:
    loaded = json.loads(compose_json(engineering_session()))
    assert set(loaded) == {"drawers"}
    assert loaded["drawers"][1]["signature"] == "API returns 404 for missing drawers"
    assert "signature" not in loaded["drawers"][0]


def session(
    *lines: str, mode: str = "default", speaker: str = "", user_name: str = ""
) -> ComposeInput:
    chunk = ComposeChunk("c1", speaker, "\n".join(lines))
    return ComposeInput(
        session_id="s", chunks=[chunk], prompt_text="", mode=mode, user_name=user_name
    )


def contents(request: ComposeInput) -> list[str]:
    return [d.content for d in extract_drafts(request)]


@pytest.mark.parametrize(
    "line",
    [
        "The_Foreman: Should we move the queue to Redis streams next sprint?",
        "The_Foreman: Hello everyone and welcome to the sync.",
        "The_Foreman: Thanks, that sounds great to me.",
        "The_Foreman: Maybe we could benchmark Chroma before we commit.",
        "The_Foreman: We should probably look at the cache later.",
        "The_Engineer: Got it, I'll take a look at the logs.",
        "The_Engineer: Here is the patch for the retry logic.",
        "The_Engineer: The cache is stale.",  # under five words
        "The_Engineer: You're right about the cache being stale.",
        "[tool: Bash — pytest -q]",
        "System: You are a helpful assistant for the project.",
        "The_Engineer: result = search(query)",
    ],
)
def test_questions_greetings_filler_and_proposals_are_skipped(line: str) -> None:
    assert contents(session(line)) == []


DEFAULT_FRAMES = [
    (
        "The_Architect: We'll use Redis streams for the job queue.",
        "The Architect decided to use Redis streams for the job queue.",
    ),
    (
        "The_Architect: After the outage, we decided to add retries to every client.",
        "After the outage, The Architect decided to add retries to every client.",
    ),
    (
        "The_Architect: After the outage we decided to add retries to every client.",
        "The Architect recorded that after the outage the team decided to add retries to "
        "every client.",
    ),
    (
        "The_Architect: Decision: the gateway owns the store registry from now on.",
        "The Architect decided that the gateway owns the store registry from now on.",
    ),
    (
        "The_Architect: We agreed to ship the companion mode before the dashboard.",
        "The Architect agreed to ship the companion mode before the dashboard.",
    ),
    (
        "The_Architect: Don't call the embedder from the gateway directly.",
        "The Architect directed that the team not call the embedder from the gateway directly.",
    ),
    (
        "The_Architect: Always run ruff and mypy before you push a branch.",
        "The Architect directed that the team always run ruff and mypy before the team "
        "pushes a branch.",
    ),
    (
        "The_Architect: Every drawer must carry a room written as wing/name.",
        "The Architect directed that every drawer must carry a room written as wing/name.",
    ),
    (
        "The_Engineer: In hindsight we should have load-tested the embedder first.",
        "The Engineer reflected that in hindsight the team should have load-tested the "
        "embedder first.",
    ),
    (
        "The_Engineer: I prototyped a FTS5 sidecar and it halves keyword latency.",
        "The Engineer prototyped a FTS5 sidecar and it halves keyword latency.",
    ),
    (
        "The_Engineer: We added a retry with backoff to our embedder client.",
        "The Engineer reported that the team added a retry with backoff to the team's "
        "embedder client.",
    ),
]


@pytest.mark.parametrize(("line", "expected"), DEFAULT_FRAMES)
def test_default_mode_cues_are_framed_in_the_third_person(line: str, expected: str) -> None:
    assert contents(session(line)) == [expected]


def test_kinds_follow_the_cue_order() -> None:
    lines = (
        "The_Engineer: The indexer fails on empty files after the upgrade.",
        "The_Engineer: I fixed the crash by skipping empty files in the indexer.",
        "The_Engineer: I benchmarked the embedder and it takes 95 ms warm.",
        "The_Engineer: Looking back, the sidecar design went well for us.",
    )
    kinds = [d.memory_type for d in extract_drafts(session(*lines))]
    assert kinds == ["bug", "implementation", "spike", "retrospective"]


def test_decisions_and_directives_are_signed_and_nothing_else_is() -> None:
    drafts = extract_drafts(engineering_session())
    for proposal in drafts:
        assert proposal.signed == (proposal.memory_type in {"decision", "directive"})
        if proposal.signature is not None:
            assert proposal.signature in proposal.content
            assert len(proposal.signature) >= 12


def test_a_signature_comes_from_the_framed_clause_when_framing_rewrote_the_sentence() -> None:
    (proposal,) = extract_drafts(session("The_Architect: We decided we use our own tokenizer."))
    assert proposal.content == "The Architect decided that the team uses the team's own tokenizer."
    assert proposal.signature == "team uses the team's own tokenizer"


def test_a_signature_prefers_the_original_words_that_survived_framing() -> None:
    line = "The_Architect: We decided we store our vectors in Qdrant edge."
    (proposal,) = extract_drafts(session(line))
    assert proposal.content == (
        "The Architect decided that the team stores the team's vectors in Qdrant edge."
    )
    assert proposal.signature == "vectors in Qdrant edge"


def test_a_decision_without_a_distinctive_phrase_stays_unsigned() -> None:
    (proposal,) = extract_drafts(session("The_Architect: We decided to do it that way."))
    assert proposal.memory_type == "decision"
    assert proposal.signature is None


COMPANION_FRAMES = [
    (
        "User: I want to learn to make pho at home.",
        "want",
        "Kyle wants to learn to make pho at home.",
    ),
    (
        "User: I'd like to visit Japan next spring.",
        "want",
        "Kyle would like to visit Japan next spring.",
    ),
    (
        "User: I really love long walks by the river.",
        "preference",
        "Kyle really loves long walks by the river.",
    ),
    (
        "User: I can't stand warm tomatoes in my salad.",
        "preference",
        "Kyle can't stand warm tomatoes in their salad.",
    ),
    (
        "User: My favorite band is playing in Denver.",
        "preference",
        "Kyle's favorite band is playing in Denver.",
    ),
    (
        "User: In my opinion remote work is overrated now.",
        "opinion",
        "Kyle mentioned that in their opinion remote work is overrated now.",
    ),
    (
        "User: My sister is moving in with us in May.",
        "observation",
        "Kyle's sister is moving in with Kyle and company in May.",
    ),
    (
        "User: I was feeling sore after the long run.",
        "observation",
        "Kyle was feeling sore after the long run.",
    ),
]


@pytest.mark.parametrize(("line", "kind", "expected"), COMPANION_FRAMES)
def test_companion_cues_are_framed_around_the_user(line: str, kind: str, expected: str) -> None:
    request = session(line, mode="companion", user_name="Kyle")
    want = expected + (
        " Worth asking about it later if they don't bring it up." if kind == "want" else ""
    )
    assert [(d.memory_type, d.content) for d in extract_drafts(request)] == [(kind, want)]


def test_companion_mode_reads_only_the_users_turns() -> None:
    request = session(
        "Assistant: I think you should try the pho place this week.",
        "User: The launch made this week really hectic at work.",
        mode="companion",
    )
    assert contents(request) == [
        "The user mentioned that the launch made this week really hectic at work."
    ]


def test_companion_mode_without_a_cue_keeps_nothing() -> None:
    assert contents(session("User: The train to work was on time again.", mode="companion")) == []


def test_named_companion_speakers_make_the_first_speaker_the_user_unless_named() -> None:
    lines = (
        "Kyle: I prefer quiet cafes over loud bars.",
        "Sly: I prefer to listen more than talk.",
    )
    assert contents(session(*lines, mode="companion")) == [
        "Kyle prefers quiet cafes over loud bars."
    ]
    assert contents(session(*lines, mode="companion", user_name="Sly")) == [
        "Sly prefers to listen more than talk."
    ]


def test_unlabelled_text_takes_the_chunk_speaker_or_the_team() -> None:
    line = "We decided to keep the FTS5 sidecar per store."
    assert contents(session(line)) == ["The team decided to keep the FTS5 sidecar per store."]
    assert contents(session(line, speaker="The_Architect")) == [
        "The Architect decided to keep the FTS5 sidecar per store."
    ]
    assert contents(session("assistant: I added the missing index to the drawer table.")) == [
        "The assistant added the missing index to the drawer table."
    ]


def test_a_multi_word_name_is_a_speaker_label() -> None:
    lines = ("Kyle Smith: I prefer quiet cafes over loud bars.",)
    assert contents(session(*lines, mode="companion", user_name="Kyle Smith")) == [
        "Kyle Smith prefers quiet cafes over loud bars."
    ]


def test_prose_labels_are_neither_speakers_nor_content() -> None:
    line = "Note: the retrieval tier answers in about 40 ms per query."
    assert contents(session(line, speaker="The_Engineer")) == [
        "The Engineer noted that the retrieval tier answers in about 40 ms per query."
    ]


def test_relative_time_is_anchored_only_when_the_chunk_is_dated() -> None:
    line = "User: I'm exhausted today after the long drive home."
    assert contents(session(line, mode="companion")) == [
        "The user is exhausted today after the long drive home."
    ]
    dated = session(line, mode="companion")
    dated = replace(dated, chunks=[dated.chunks[0]._replace(occurred_at=TUESDAY)])
    assert contents(dated) == [
        "The user is exhausted today after the long drive home (as of 2025-03-04)."
    ]


def test_the_same_claim_said_twice_is_one_drawer_citing_both_chunks() -> None:
    line = "The_Architect: Let's go with Qdrant edge for the embedded vector store."
    request = ComposeInput(
        session_id="s",
        chunks=[ComposeChunk("c1", "", line), ComposeChunk("c2", "", line)],
        prompt_text="",
    )
    (proposal,) = extract_drafts(request)
    assert proposal.derived_from == ("c1", "c2")


def test_an_overlong_claim_is_skipped_not_cut() -> None:
    line = "The_Engineer: The indexer fails " + "again and " * 70 + "again on empty files."
    assert contents(session(line)) == []


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(InvalidInput):
        extract_drafts(session("The_Architect: We decided to ship it.", mode="swarm"))


@pytest.mark.parametrize(
    ("mode", "wings", "rooms", "user", "expected"),
    [
        (
            "default",
            (),
            ("philosophy/agent-design", "projects/rev-engram"),
            "",
            "projects/rev-engram",
        ),
        ("default", (), ("work/ops", "projects/other"), "", "work/ops"),  # no mention: first hint
        ("default", (), ("bad room", "Projects/x"), "", "projects/shared"),  # malformed hints
        ("default", (), (), "", "projects/shared"),
        ("default", ("work",), (), "", "work/shared"),  # reuse a wing over opening one
        ("companion", (), (), "Kyle Smith", "people/kyle-smith"),
        ("companion", ("people",), (), "", "people/user"),
    ],
)
def test_drafts_go_to_a_stable_room(
    mode: str, wings: tuple[str, ...], rooms: tuple[str, ...], user: str, expected: str
) -> None:
    request = ComposeInput(
        session_id="s",
        chunks=[ComposeChunk("c1", "", "The engram retrieval log is append-only.")],
        prompt_text="",
        mode=mode,
        wings=wings,
        rooms=rooms,
        user_name=user,
    )
    assert choose_room(request) == expected


@pytest.mark.parametrize(
    ("mode", "lines"),
    [
        ("default", [line for line, _ in DEFAULT_FRAMES]),
        ("companion", [line for line, _, _ in COMPANION_FRAMES]),
    ],
)
def test_every_framing_rule_yields_drafts_that_pass_validation(mode: str, lines: list[str]) -> None:
    request = session(*lines, mode=mode, user_name="Kyle")
    drafts = extract_drafts(request)
    assert len(drafts) == len(lines)
    for proposal in drafts:
        result = validate_draft(
            proposal.to_input(),
            mode=mode,
            tier="admin",
            existing_wings=(),
            allow_new_wing=False,
            signed=proposal.signed,
            signature=proposal.signature,
        )
        assert result.warnings == [], proposal.content
