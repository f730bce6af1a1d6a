"""The extractive invoker's pure rules: which sentences are read, how a typed sentence is
framed, signed, attributed and placed. Types are given here (the classifier's own behaviour is
tested over the real embedder in tests/services/authoring/test_extractive_typing.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from services.authoring.core import (
    ComposeChunk,
    ComposeInput,
    DraftProposal,
    choose_room,
    extract_drafts,
    validate_draft,
)
from services.authoring.core.extractive import (
    _needs_certainty,
    reads_as_fragment,
    reads_as_report,
    said_sentences,
)
from services.authoring.core.sentence_types import NOT_A_MEMORY
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


# The types the classifier gives the sentences of the two dialogs (pinned in the services test).
ENGINEERING_TYPES = ["bug", "decision", "directive", "implementation", "observation", "none",
                     "decision"]  # fmt: skip
COMPANION_TYPES = ["observation", "preference", "want", "opinion"]


def test_an_engineering_session_yields_typed_third_person_signed_attributed_drafts() -> None:
    drafts = extract_drafts(engineering_session(), ENGINEERING_TYPES)
    assert summary(drafts) == ENGINEERING_EXPECTED
    engineer, architect = "The_Engineer", "The_Architect"
    assert [d.speaker for d in drafts] == [
        engineer, architect, architect, engineer, engineer, architect
    ]  # fmt: skip
    assert {d.room for d in drafts} == {"projects/rev-engram"}  # the room it mentions
    assert {d.pin_status for d in drafts} == {"active"}  # pinning is an admin's call


def test_a_companion_session_yields_the_users_speech_acts_framed_by_name() -> None:
    drafts = extract_drafts(companion_session(), COMPANION_TYPES)
    assert summary(drafts) == COMPANION_EXPECTED
    assert {d.room for d in drafts} == {"people/kyle"}
    assert {d.speaker for d in drafts} == {"User"}


@pytest.mark.parametrize(
    ("make_session", "types"),
    [(engineering_session, ENGINEERING_TYPES), (companion_session, COMPANION_TYPES)],
)
def test_every_emitted_draft_passes_validation_without_warnings(
    make_session: Callable[[], ComposeInput], types: list[str]
) -> None:
    request = make_session()
    drafts = extract_drafts(request, types)
    assert drafts
    for proposal in drafts:
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


def test_a_type_list_that_does_not_match_the_sentences_is_refused() -> None:
    with pytest.raises(ValueError, match="types for"):
        extract_drafts(engineering_session(), ["bug"])


def session(
    *lines: str, mode: str = "default", speaker: str = "", user_name: str = ""
) -> ComposeInput:
    chunk = ComposeChunk("c1", speaker, "\n".join(lines))
    return ComposeInput(
        session_id="s", chunks=[chunk], prompt_text="", mode=mode, user_name=user_name
    )


WANT = " Worth asking about it later if they don't bring it up."


def typed(request: ComposeInput, *types: str) -> list[DraftProposal]:
    """The drafts when the said sentences have `types` (one per sentence)."""
    return extract_drafts(request, list(types))


def contents(request: ComposeInput, *types: str) -> list[str]:
    return [d.content for d in typed(request, *types)]


def said(request: ComposeInput) -> list[str]:
    return [s.text for s in said_sentences(request)]


@pytest.mark.parametrize(
    "line",
    [
        "The_Foreman: Should we move the queue to Redis streams next sprint?",
        "The_Foreman: Hello everyone and welcome to the sync.",
        "The_Foreman: Thanks, that sounds great to me.",
        "The_Engineer: Got it, I'll take a look at the logs.",
        "The_Engineer: Here is the patch for the retry logic.",
        "The_Engineer: The cache is stale.",  # under five words
        "[tool: Bash — pytest -q]",
        "System: You are a helpful assistant for the project.",
        "The_Engineer: result = search(query)",
        "The_Engineer: def search(query: str) -> list[str]:",
        "coding-agent: Option A: keep store credit and card refunds side by side with a flag.",
        "coding-agent: (B) refunds always go to the original card, credit via finance.",
    ],
)
def test_questions_greetings_filler_code_and_short_lines_are_never_read(line: str) -> None:
    assert said(session(line)) == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Marisol: Okay I signed the lease for the flat!!", "I signed the lease for the flat!!"),
        ("Walt: nah, I'll stick with San Marzanos this year.",
         "I'll stick with San Marzanos this year."),
        ("Amara: Wait, sorry, I just reread the email from the school.",
         "I just reread the email from the school."),
        ("Niamh: ok im going to see one more flat on Saturday.",
         "im going to see one more flat on Saturday."),
        ("Abena: lol I have groundnuts in my pocket for the night shift.",
         "I have groundnuts in my pocket for the night shift."),
        # a lead-in before anything but the speaker's own clause is left to the classifier
        ("The_PM: Nah, not worth it for now, maybe next quarter.",
         "Nah, not worth it for now, maybe next quarter."),
        ("The_PM: Sorry, the build failed again on the release branch.",
         "Sorry, the build failed again on the release branch."),
        ("The_PM: OK Go is the band playing the launch party.",
         "OK Go is the band playing the launch party."),
        # asides that frame a claim are not part of it
        ("The_PM: For the record, we tested the split in an empty building.",
         "we tested the split in an empty building."),
        ("The_PM: Reminder that the App Store review took 3 days last time.",
         "the App Store review took 3 days last time."),
        ("The_PM: Heads up: the vendor changed the API token format.",
         "the vendor changed the API token format."),
        ("The_PM: The reminder that we sent went out at nine.",
         "The reminder that we sent went out at nine."),
        # laughter closing a clause is how it was said, not what
        ("Valentina: in medellín I never owned a coat lol",
         "in medellín I never owned a coat"),
        ("Tomasz: I started baking bread lol, everyone in berlin bakes bread.",
         "I started baking bread, everyone in berlin bakes bread."),
        ("Rosa: Lolita is the name of the bakery cat.",
         "Lolita is the name of the bakery cat."),
        # chat's interjections need no comma; a confidential aside does
        ("Ji-woo: ugh their advisor moved the lab meeting to 8am saturdays",
         "their advisor moved the lab meeting to 8am saturdays"),
        ("Ji-woo: tbh I think the whole saturday meeting thing is pointless",
         "I think the whole saturday meeting thing is pointless"),
        ("Ops: Between us, the Surrey cluster leans on the M25 far too much.",
         "the Surrey cluster leans on the M25 far too much."),
        ("Ops: Between us and the depot there are six miles of roadworks.",
         "Between us and the depot there are six miles of roadworks."),
    ],
)  # fmt: skip
def test_a_chat_lead_in_before_the_speakers_clause_is_not_said(line: str, expected: str) -> None:
    assert said(session(line)) == [expected]


@pytest.mark.parametrize(
    "line",
    [
        "Marisol: That would be great actually.",
        "Marisol: that works for me, thanks",
        "Marisol: It's perfect!",
        "Marisol: Okay I agree.",  # too short once "okay" is gone, and not a claim of four words
    ],
)
def test_a_reply_that_only_acknowledges_is_never_read(line: str) -> None:
    assert said(session(line)) == []


@pytest.mark.parametrize(
    "sentence",
    [
        "The May change deadline is Friday.",  # "May" is a month, not a modal
        "That's what the ESI protocol says.",
        "The team has had four zirconia crowns come back this week.",
        "Bank A printed the same file without problems.",
        "Sensor tech is booked for Thursday.",
        "Nobody walked between rooms with a device.",
    ],
)
def test_a_sentence_that_states_how_things_are_or_were_reads_as_a_report(sentence: str) -> None:
    assert reads_as_report(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "4.12 ships Thursday with the carousel flag off on iOS.",
        "Every release candidate gets a VoiceOver smoke pass first.",
        "We will use Redis streams for the job queue.",
        "Let's go with option B for the refunds.",
        "We are switching the display auction to first-price.",
        "The team has to re-run the migration before Friday.",
        "Those icons are decorative; I'll add aria-hidden to them.",
        "Whatever is left at close goes to the food bank, never in the bin.",
        "Ship the fix behind a flag.",  # no verb found: no claim either way
    ],
)
def test_a_sentence_that_acts_or_rules_does_not_read_as_a_report(sentence: str) -> None:
    assert not reads_as_report(sentence)


def test_a_sentence_typed_not_a_memory_makes_no_drawer() -> None:
    line = "The_Foreman: Maybe we could benchmark Chroma before we commit."
    assert said(session(line)) == ["Maybe we could benchmark Chroma before we commit."]
    assert contents(session(line), NOT_A_MEMORY) == []
    assert contents(session(line), "legacy-or-foreign") == [], "a type outside the library"


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


DEFAULT_KINDS = ["decision", "decision", "decision", "decision", "decision", "directive",
                 "directive", "directive", "retrospective", "spike", "implementation"]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "kind", "expected"),
    [
        (line, kind, expected)
        for (line, expected), kind in zip(DEFAULT_FRAMES, DEFAULT_KINDS, strict=True)
    ],
)
def test_default_mode_claims_are_framed_in_the_third_person(
    line: str, kind: str, expected: str
) -> None:
    assert contents(session(line), kind) == [expected]


@pytest.mark.parametrize(
    ("line", "kind", "expected"),
    [
        ("The_PM: 4.12 ships Thursday with the carousel flag off on iOS.", "decision",
         "The PM decided that 4.12 ships Thursday with the carousel flag off on iOS."),
        ("The_PM: Every release candidate gets a VoiceOver smoke pass first.", "directive",
         "The PM directed that every release candidate gets a VoiceOver smoke pass first."),
        ("Sofia: The ledger service owns balances and the rest read its API.", "architecture",
         "Sofia explained that the ledger service owns balances and the rest read its API."),
        ("Sofia: The report is done when finance can export it to CSV.", "acceptance",
         "Sofia set the acceptance criterion that the report is done when finance can export "
         "it to CSV."),
    ],
)  # fmt: skip
def test_classifier_types_without_cue_words_get_their_own_frame(
    line: str, kind: str, expected: str
) -> None:
    assert contents(session(line), kind) == [expected]


@pytest.mark.parametrize(
    ("line", "given", "kind"),
    [
        ("The_Architect: We decided to keep the sidecar per store.", "observation", "decision"),
        ("The_Architect: Let's go with Qdrant edge for the vectors.", "spike", "decision"),
        ("The_Architect: Never write to the pool outside retrieval.", "observation", "directive"),
        ("The_Architect: The pool lives in the retrieval tier only.", "observation", "observation"),
    ],
)
def test_a_deciders_words_overrule_the_classifier_in_default_mode(
    line: str, given: str, kind: str
) -> None:
    assert [d.memory_type for d in typed(session(line), given)] == [kind]


@pytest.mark.parametrize(
    ("line", "kind", "expected"),
    [
        ("Noor: Order 5 tonnes from the Ohio distributor.", "decision",
         "Noor decided to order 5 tonnes from the Ohio distributor."),
        # a listed verb done again is one too
        ("Noor: Redo the Millbrook site map with the actual positions.", "decision",
         "Noor decided to redo the Millbrook site map with the actual positions."),
        ("Noor: Re-quote the Hendry job with the engineer's letter.", "decision",
         "Noor decided to re-quote the Hendry job with the engineer's letter."),
        ("Noor: ship it behind a flag to the Leeds team first.", "decision",
         "Noor decided to ship it behind a flag to the Leeds team first."),
        ("Noor: Tell Marco the slots moved to Thursday.", "decision",
         "Noor decided to tell Marco the slots moved to Thursday."),
        ("Noor: Let's stay on Postgres, no new infra.", "decision",
         "Noor decided to stay on Postgres, no new infra."),
        ("Noor: let's not add Fargate for a once-a-year event.", "decision",
         "Noor decided not to add Fargate for a once-a-year event."),
        ("Noor: Put every allergen change in the changeover checklist.", "directive",
         "Noor directed that the team put every allergen change in the changeover checklist."),
        ("Noor: From now on, tag each release with the ticket number.", "directive",
         "Noor directed that from now on the team tag each release with the ticket number."),
        ("Noor: Tomás, please remove it and use padStart instead.", "decision",
         "Noor asked Tomás to remove it and use padStart instead."),
        ("Noor: Please send the signed invoice to Ruth today.", "decision",
         "Noor asked the team to send the signed invoice to Ruth today."),
        ("Noor: Going forward, let's not merge on Fridays.", "directive",
         "Noor directed that going forward the team not merge on Fridays."),
        # a rule's opening makes a statement a standing rule, whatever its verb
        ("Noor: From the next tour on, the team asks every venue for a stage plan.",
         "directive", "Noor directed that from the next tour on, the team asks every venue "
         "for a stage plan."),
        # an object without an article, when no verb of its own follows it
        ("Noor: Exclude rev C from 2.4.1 and ship the rest on Monday.", "decision",
         "Noor decided to exclude rev C from 2.4.1 and ship the rest on Monday."),
        ("Noor: Isolate box 11 in the cold store today.", "decision",
         "Noor decided to isolate box 11 in the cold store today."),
        # after a connective
        ("Noor: Then report the 1.6 version to the planner.", "decision",
         "Noor decided to report the 1.6 version to the planner."),
        # under a condition: kept in the frame; "whenever" makes it a standing rule
        ("Noor: If delta E goes over 2, stop the press.", "decision",
         "Noor decided that if delta E goes over 2, the team stop the press."),
        ("Noor: Whenever a box smells of vinegar, isolate it on its own shelf.", "directive",
         "Noor directed that whenever a box smells of vinegar, the team isolate it on its own "
         "shelf."),
    ],
)  # fmt: skip
def test_a_persons_bare_imperative_is_a_decision_or_a_standing_directive(
    line: str, kind: str, expected: str
) -> None:
    drafts = typed(session(line), "observation")
    assert [(d.memory_type, d.content) for d in drafts] == [(kind, expected)]
    assert drafts[0].signature is not None


@pytest.mark.parametrize(
    "line",
    [
        # an agent's instruction is advice or a next step, not the call
        "deploy-bot: Restart the ingest worker after the config change.",
        "assistant: Check the replica lag before you fail over.",
        # a noun phrase that shares a verb's spelling
        "Noor: Pick rate on the night shift looks low this week.",
        "Noor: Test results from the second batch came back clean.",
        "Noor: Route 42's on-time performance dropped to 71% in March.",
        "Noor: Bank A was printing the same file without problems.",
        # a subject and its own verb after a word spelled like a verb
        "Noor: Order volume dropped 20% after the price change.",
        "Noor: Change log says the fix shipped in 4.2.",
        "Noor: Drop rates live in remote config.",
        "Noor: Offer sent to Marsh at 18:12.",
        "Noor: Price comes down about 780 pounds.",
        "Noor: DO came out at 38 ppb on the second tank.",
        # an agent's rule opening is a suggestion
        "qa-agent: Going forward, the nightly suite runs on both browsers.",
        # a verb not used to act on work, and "let's" before a talk about it
        "Noor: Let's talk about the rota on Monday.",
    ],
)
def test_other_sentences_that_open_with_a_verb_keep_the_classifiers_type(line: str) -> None:
    assert [d.memory_type for d in typed(session(line), "observation")] == ["observation"]


@pytest.mark.parametrize(
    ("line", "mode", "kind", "expected"),
    [
        # an AI agent's instruction is advice to whoever it addresses
        ("deploy-bot: Restart the ingest worker after the config change.", "default",
         "observation",
         "Deploy-bot suggested that the team restart the ingest worker after the config "
         "change."),
        # a favour asked for oneself settles nothing about the work: the classifier's type
        ("user: Remind me how the ingest path works, I need to explain it to Sam.", "default",
         "implementation",
         "The user asked the assistant to remind them how the ingest path works, the user "
         "needs to explain it to Sam."),
        # a companion's user tells the companion what to do
        ("Noor: never suggest meal kits to me, they're a waste.", "companion", "preference",
         "Noor asked the companion never to suggest meal kits to them, they're a waste."),
        ("Noor: dont recommend me the chain cafés, the coffee is terrible.", "companion",
         "opinion",
         "Noor asked the companion not to recommend them the chain cafés, the coffee is "
         "terrible."),
        ("Noor: please remind me to call my sister on Sunday.", "companion", "want",
         "Noor asked the companion to remind them to call their sister on Sunday." + WANT),
    ],
)  # fmt: skip
def test_an_instruction_that_decides_nothing_is_framed_as_advice_or_a_request(
    line: str, mode: str, kind: str, expected: str
) -> None:
    request = session(line, mode=mode, user_name="Noor" if mode == "companion" else "")
    assert [(d.memory_type, d.content) for d in typed(request, kind)] == [(kind, expected)]


def test_never_before_a_word_that_is_no_verb_is_not_an_instruction() -> None:
    # chat that dropped its "I've": "never been to Lisbon" asks the companion nothing
    request = session("Noor: never been to Lisbon but it's on the list.", mode="companion")
    [draft] = typed(request, "want")
    assert "asked the companion" not in draft.content


def test_an_agents_handle_is_an_ai_speaker() -> None:
    request = ComposeInput(
        session_id="s",
        chunks=[
            ComposeChunk("c1", "ops_agent", "ops_agent: The changes go live tomorrow morning."),
            ComposeChunk("c2", "recon-bot", "recon-bot: Rerun leaves 17 refunds unmatched."),
            ComposeChunk("c3", "Noor", "Noor: Queue them for manual review today."),
        ],
        prompt_text="",
    )
    assert [s.turn.speaker.is_assistant for s in said_sentences(request)] == [True, True, False]


def test_a_settled_option_is_resolved_to_what_an_earlier_turn_described() -> None:
    request = ComposeInput(
        session_id="s",
        chunks=[
            ComposeChunk(
                "t1",
                "assistant",
                "assistant: Two options: (A) keep both refund paths with a flag, or (B) refund to "
                "the original payment method only, with store credit as a finance exception.",
            ),
            ComposeChunk("t2", "user", "user: What does compliance say about A?"),
            ComposeChunk("t3", "user", "user: Ok, option B then."),
        ],
        prompt_text="",
    )
    said_now = said_sentences(request)
    settled = [s for s in said_now if s.settled]
    assert [s.cited for s in settled] == [("t1", "t3")]
    drafts = extract_drafts(request, [NOT_A_MEMORY] * len(said_now))
    assert [(d.memory_type, d.speaker, d.derived_from) for d in drafts] == [
        ("decision", "user", ("t1", "t3"))
    ]
    assert drafts[0].content == (
        "The user decided that option B: refund to the original payment method only, with "
        "store credit as a finance exception."
    )


def test_labels_of_any_spelling_split_a_bundled_arc_and_are_never_glued_in() -> None:
    request = ComposeInput(
        session_id="s",
        chunks=[
            ComposeChunk(
                "c1",
                "Maya",
                "Maya: What are the options then?\n"
                "coding-agent: I added a retry wrapper around the refund call.\n"
                "dana.k: Implemented: the export now streams rows instead of buffering.",
            )
        ],
        prompt_text="",
    )
    drafts = typed(request, "implementation", "implementation")
    assert [(d.speaker, d.content) for d in drafts] == [
        ("coding-agent", "Coding-agent added a retry wrapper around the refund call."),
        ("dana.k", "Dana.k reported that the export now streams rows instead of buffering."),
    ]


def test_a_capitalised_word_inside_a_speakers_chunk_is_prose_not_a_speaker() -> None:
    request = session("Configured: the nightly export now runs at 02:00 UTC.", speaker="Raj")
    assert contents(request, "implementation") == [
        "Raj reported that the nightly export now runs at 02:00 UTC."
    ]


def test_a_named_option_keeps_its_capital() -> None:
    assert contents(session("Maya: A is simpler to run for the refund team."), "observation") == [
        "Maya noted that A is simpler to run for the refund team."
    ]


@pytest.mark.parametrize(
    ("lines", "kind", "expected"),
    [
        (["Recon-bot: Rerun for Feb 4 leaves 17 unmatched, all refunds."], "observation",
         "Recon-bot noted that rerun for Feb 4 leaves 17 unmatched, all refunds."),
        (["Fatima: Of the 1,204 unmatched, 1,187 are after midnight UTC."], "observation",
         "Fatima noted that of the 1,204 unmatched, 1,187 are after midnight UTC."),
        # a name the session capitalises mid-sentence keeps its capital, possessive or not
        (["Fatima: We pay out through Stripe every night.",
          "Oleg: Stripe's cutoff moved to 17:00."],
         "observation", "Oleg noted that Stripe's cutoff moved to 17:00."),
        (["Ops-bot: February's no-show rate was 14.2 percent."], "observation",
         "Ops-bot noted that February's no-show rate was 14.2 percent."),
    ],
)  # fmt: skip
def test_a_sentences_capital_is_lowered_after_that_unless_the_session_uses_it_as_a_name(
    lines: list[str], kind: str, expected: str
) -> None:
    assert contents(session(*lines), *[kind] * len(lines))[-1] == expected


@pytest.mark.parametrize(
    ("line", "kind", "expected"),
    [
        ("Inventory-bot: Reassigned four spare scanners to Zone C for the night shift.",
         "implementation",
         "Inventory-bot reassigned four spare scanners to Zone C for the night shift."),
        ("Dev-agent: removed 10 stale flags in PR #988, all tests pass.", "acceptance",
         "Dev-agent removed 10 stale flags in PR #988, all tests pass."),
        ("Ana: Checked remotely, the battery reads 11.2V.", "bug",
         "Ana checked remotely, the battery reads 11.2V."),
        ("Lin: Rebuilt the image without the debug symbols.", "implementation",
         "Lin rebuilt the image without the debug symbols."),
        ("Lin: Just rebuilt the image without the debug symbols.", "implementation",
         "Lin just rebuilt the image without the debug symbols."),
        # any irregular past the third-person rewrite knows
        ("Ana: Drove out to the substation to check the breaker.", "implementation",
         "Ana drove out to the substation to check the breaker."),
        # a passive or a feeling is no report of something the speaker did
        ("Ana: Caused by a stale cache entry on the edge node.", "bug",
         "Ana reported that caused by a stale cache entry on the edge node."),
        ("Ana: Worried about the release date slipping again.", "observation",
         "Ana noted that worried about the release date slipping again."),
    ],
)  # fmt: skip
def test_a_report_opening_with_its_past_tense_verb_has_the_speaker_as_subject(
    line: str, kind: str, expected: str
) -> None:
    assert contents(session(line), kind) == [expected]


@pytest.mark.parametrize(
    ("line", "kind", "expected"),
    [
        ("Jess: can't sleep after the third night shift in a row", "observation",
         "Jess can't sleep after the third night shift in a row."),
        # chat's apostrophe-less negation drops the "I" as well
        ("Jess: didnt get the charge nurse job in the end", "observation",
         "Jess didn't get the charge nurse job in the end."),
        ("Walt: thinking about starting tomatoes from seed indoors this year", "want",
         "Walt is thinking about starting tomatoes from seed indoors this year."),
        ("Marisol: need to find movers who will do a Saturday", "want",
         "Marisol needs to find movers who will do a Saturday."),
        ("Noor: had to pick off all the cilantro from the tacos", "preference",
         "Noor had to pick off all the cilantro from the tacos."),
        # a sentence adverbial is not a dropped "I", nor is a dropped "it"
        ("Maya: Going forward, nobody publishes a rota without the conflict report.",
         "directive",
         "Maya directed that going forward, nobody publishes a rota without the conflict "
         "report."),
        ("Caroline: been a really busy week at the shelter since we talked", "observation",
         "Caroline noted that been a really busy week at the shelter since the team talked."),
    ],
)  # fmt: skip
def test_a_sentence_whose_i_chat_dropped_is_told_of_its_speaker(
    line: str, kind: str, expected: str
) -> None:
    request = session(line, mode="companion" if kind in ("want", "preference") else "default")
    [content] = contents(request, kind)
    assert content.removesuffix(WANT) == (expected)


@pytest.mark.parametrize(
    "line", ["Have fun and stay safe out there!", "Feel better soon and rest up this weekend!"]
)
def test_a_wish_said_to_the_listener_is_not_told_of_the_speaker(line: str) -> None:
    [content] = contents(session(f"Melanie: {line}", mode="companion"), "observation")
    assert content.startswith("Melanie mentioned that"), content


def test_a_transcripts_stage_direction_is_not_a_sentence_said() -> None:
    request = session(
        "Melanie: We went camping with the kids last weekend! [shares a photo of a tent] [WIP]"
    )
    assert said(request) == ["We went camping with the kids last weekend! [WIP]"]
    alone = session("Melanie: The kids loved the lake so much.\n\n[shares a photo of a lake]")
    assert said(alone) == ["The kids loved the lake so much."]


def test_uncapitalised_chat_sentences_are_split_and_each_opens_with_a_capital() -> None:
    request = session("Jess: can't sleep at all. third night shift in a row, body is confused")
    assert said(request) == ["can't sleep at all.", "third night shift in a row, body is confused"]
    [draft] = contents(request, "observation", "observation")
    assert "all. Third night shift" in draft, draft


def test_decisions_and_directives_are_signed_and_nothing_else_is() -> None:
    drafts = extract_drafts(engineering_session(), ENGINEERING_TYPES)
    for proposal in drafts:
        assert proposal.signed == (proposal.memory_type in {"decision", "directive"})
        if proposal.signature is not None:
            assert proposal.signature in proposal.content
            assert len(proposal.signature) >= 12


def test_a_signature_comes_from_the_framed_clause_when_framing_rewrote_the_sentence() -> None:
    (proposal,) = typed(session("The_Architect: We decided we use our own tokenizer."), "decision")
    assert proposal.content == "The Architect decided that the team uses the team's own tokenizer."
    assert proposal.signature == "team uses the team's own tokenizer"


def test_a_signature_prefers_the_original_words_that_survived_framing() -> None:
    line = "The_Architect: We decided we store our vectors in Qdrant edge."
    (proposal,) = typed(session(line), "decision")
    assert proposal.content == (
        "The Architect decided that the team stores the team's vectors in Qdrant edge."
    )
    assert proposal.signature == "vectors in Qdrant edge"


def test_a_decision_without_a_distinctive_phrase_stays_unsigned() -> None:
    (proposal,) = typed(session("The_Architect: We decided to do it that way."), "decision")
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
        "Kyle's sister is moving in with them in May.",
    ),
    (
        "User: I was feeling sore after the long run.",
        "observation",
        "Kyle was feeling sore after the long run.",
    ),
    # short, but five words as the composer counts them ("can't" is two)
    ("User: I can't eat pork.", "preference", "Kyle can't eat pork."),
]


@pytest.mark.parametrize(("line", "kind", "expected"), COMPANION_FRAMES)
def test_companion_cues_are_framed_around_the_user(line: str, kind: str, expected: str) -> None:
    request = session(line, mode="companion", user_name="Kyle")
    want = expected + (WANT if kind == "want" else "")
    assert [(d.memory_type, d.content) for d in typed(request, kind)] == [(kind, want)]


def test_a_clause_a_lead_in_shortened_stands_only_inside_a_longer_drawer() -> None:
    joined = session(
        "User: okay I signed the lease. Moving into the new place on the 15th.",
        mode="companion",
        user_name="Kyle",
    )
    assert contents(joined, "observation", "observation") == [
        "Kyle signed the lease. Moving into the new place on the 15th."
    ]
    alone = session("User: okay I signed the lease.", mode="companion", user_name="Kyle")
    assert contents(alone, "observation") == [], "four words are a drawer only when joined"


@pytest.mark.parametrize("ai", ["Assistant", "Companion", "AI"])
def test_companion_mode_reads_only_the_users_turns(ai: str) -> None:
    request = session(
        f"{ai}: I think you should try the pho place this week.",
        "User: The launch made this week really hectic at work.",
        mode="companion",
    )
    assert said(request) == ["The launch made this week really hectic at work."]
    assert contents(request, "observation") == [
        "The user mentioned that the launch made this week really hectic at work."
    ]


def test_companion_mode_has_no_rule_overrides() -> None:
    line = "User: We decided to move the book club to Thursdays."
    assert contents(session(line, mode="companion"), NOT_A_MEMORY) == []


def test_companion_mode_reads_the_people_and_never_the_assistant() -> None:
    lines = (
        "Kyle: I prefer quiet cafes over loud bars.",
        "Sly: I prefer to listen more than talk.",
    )
    # Two people talking (a chat export): each is remembered under their own name.
    assert contents(session(*lines, mode="companion"), "preference", "preference") == [
        "Kyle prefers quiet cafes over loud bars.",
        "Sly prefers to listen more than talk.",
    ]
    # A name sent with the assistant role is the companion itself: never read.
    request = ComposeInput(
        session_id="s",
        chunks=[
            ComposeChunk("c1", "Kyle", lines[0], role="user"),
            ComposeChunk("c2", "Sly", lines[1], role="assistant"),
        ],
        prompt_text="",
        mode="companion",
    )
    assert said(request) == ["I prefer quiet cafes over loud bars."]


def test_two_people_talking_are_each_others_you() -> None:
    lines = (
        "Caroline: I wanted to tell you about the pottery class I joined last week.",
        "Melanie: Hey Caroline, your vase from that class looks amazing on my shelf.",
    )
    assert contents(session(*lines, mode="companion"), "observation", "observation") == [
        "Caroline wanted to tell Melanie about the pottery class Caroline joined last week.",
        "Melanie mentioned that Caroline's vase from that class looks amazing on their shelf.",
    ]
    # With the companion among the speakers, "you" stays the companion.
    request = ComposeInput(
        session_id="s",
        chunks=[
            ComposeChunk("c1", "Kyle", "Kyle: I wanted to tell you about my new bike.", "user"),
            ComposeChunk("c2", "Sly", "Sly: Tell me more about it.", role="assistant"),
        ],
        prompt_text="",
        mode="companion",
    )
    assert [d.content for d in extract_drafts(request, ["observation"])] == [
        "Kyle wanted to tell the companion about their new bike."
    ]


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("Kyle: Aww, that painting of the lake is so lovely.", "that painting of the lake"),
        ("Kyle: Hey Sam, the road trip last weekend was wild.", "the road trip last weekend"),
        ("Kyle: Wow, the new climbing gym opened near my flat.", "the new climbing gym"),
        ("Kyle: Fine, the team will live with those three bookings.", "the team will live"),
    ],
)
def test_interjections_and_greetings_do_not_open_a_drawer(line: str, kept: str) -> None:
    assert said(session(line, mode="companion")) == [line.split(", ", 1)[1]]
    assert kept in said(session(line, mode="companion"))[0]


@pytest.mark.parametrize(
    ("line", "kept"),
    [
        ("Kenji: Agreed — event currencies get their own item IDs.",
         "event currencies get their own item IDs."),
        ("Kenji: No - the Y9 group keeps its lab every week.",
         "the Y9 group keeps its lab every week."),
        ("Kenji: No one has signed off the March rota yet.",
         "No one has signed off the March rota yet."),
        # a short answer before a comma, and a yes that chat does not punctuate
        ("Ben: not yet, I want to see how the review goes first.",
         "I want to see how the review goes first."),
        ("Ben: maybe later, the kids have homework tonight.",
         "the kids have homework tonight."),
        ("Arjun: yes the 8 inch dobsonian finally arrived", "the 8 inch dobsonian finally arrived"),
        ("Kenji: Not yet finished, the rota still has gaps.",
         "Not yet finished, the rota still has gaps."),
    ],
)  # fmt: skip
def test_an_answer_word_before_a_dash_is_a_lead_in(line: str, kept: str) -> None:
    assert said(session(line)) == [kept]


def test_unlabelled_text_takes_the_chunk_speaker_or_the_team() -> None:
    line = "We decided to keep the FTS5 sidecar per store."
    assert contents(session(line), "decision") == [
        "The team decided to keep the FTS5 sidecar per store."
    ]
    assert contents(session(line, speaker="The_Architect"), "decision") == [
        "The Architect decided to keep the FTS5 sidecar per store."
    ]
    line = "assistant: I added the missing index to the drawer table."
    assert contents(session(line), "implementation") == [
        "The assistant added the missing index to the drawer table."
    ]


def test_a_multi_word_name_is_a_speaker_label() -> None:
    lines = ("Kyle Smith: I prefer quiet cafes over loud bars.",)
    assert contents(session(*lines, mode="companion", user_name="Kyle Smith"), "preference") == [
        "Kyle Smith prefers quiet cafes over loud bars."
    ]


@pytest.mark.parametrize("name", ["Élodie", "Ōta Ren", "Łukasz Żak", "Ирина"])
def test_a_name_in_any_alphabet_is_a_speaker_label_never_glued_in(name: str) -> None:
    lines = (f"{name}: started at 3h30 like always.", "assistant: Long day at the bakery?")
    request = session(*lines, mode="companion", speaker=name, user_name=name)
    assert contents(request, "observation") == [f"{name} started at 3h30 like always."]


def test_a_lowercase_word_after_a_name_is_prose_not_a_label() -> None:
    line = "Élodie said this: the supplier raised the flour price again."
    request = session(line, mode="companion", speaker="Élodie", user_name="Élodie")
    assert said(request) == [line]


def test_chat_without_apostrophes_still_speaks_in_the_first_person() -> None:
    lines = ("Ji-woo: im in year 3 of my phd and the grant renewal is stressing me out",)
    request = session(*lines, mode="companion", user_name="Ji-woo")
    assert contents(request, "observation") == [
        "Ji-woo is in year 3 of their phd and the grant renewal is stressing them out."
    ]


def test_a_chat_exports_me_is_the_user() -> None:
    lines = ("me: I never work with venues that force their in-house caterer.", "Lwazi: true")
    request = session(*lines, mode="companion", user_name="Thandi")
    assert contents(request, "preference") == [
        "Thandi never works with venues that force their in-house caterer."
    ]
    assert [d.speaker for d in typed(request, "preference")] == ["me"]


def test_prose_labels_are_neither_speakers_nor_content() -> None:
    line = "Note: the retrieval tier answers in about 40 ms per query."
    assert contents(session(line, speaker="The_Engineer"), "observation") == [
        "The Engineer noted that the retrieval tier answers in about 40 ms per query."
    ]


def test_relative_time_is_anchored_only_when_the_chunk_is_dated() -> None:
    line = "User: I'm exhausted today after the long drive home."
    assert contents(session(line, mode="companion"), "observation") == [
        "The user is exhausted today after the long drive home."
    ]
    dated = session(line, mode="companion")
    dated = replace(dated, chunks=[dated.chunks[0]._replace(occurred_at=TUESDAY)])
    assert contents(dated, "observation") == [
        "The user is exhausted today after the long drive home (as of 2025-03-04)."
    ]


def test_the_same_claim_said_twice_is_one_drawer_citing_both_chunks() -> None:
    line = "The_Architect: Let's go with Qdrant edge for the embedded vector store."
    request = ComposeInput(
        session_id="s",
        chunks=[ComposeChunk("c1", "", line), ComposeChunk("c2", "", line)],
        prompt_text="",
    )
    (proposal,) = typed(request, "decision", "decision")
    assert proposal.derived_from == ("c1", "c2")


def test_an_overlong_claim_is_skipped_not_cut() -> None:
    line = "The_Engineer: The indexer fails " + "again and " * 70 + "again on empty files."
    assert contents(session(line), "bug") == []


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(InvalidInput):
        typed(session("The_Architect: We decided to ship it.", mode="swarm"), "decision")


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
    kinds = DEFAULT_KINDS if mode == "default" else [kind for _, kind, _ in COMPANION_FRAMES]
    drafts = extract_drafts(request, kinds)
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


@pytest.mark.parametrize(
    ("sentence", "fragment"),
    [
        ("About 14 stops per shift.", True),
        ("212 of 240 stations reporting.", True),
        ("At least €4.1M for Q3.", True),
        ("All on the Prusa bank B, all PETG jobs.", True),
        ("Every four hours while inflow is above 120 cumecs, otherwise twice a shift.", True),
        ("Maybe 10 centimes on the tradition.", True),
        # a verb anywhere in the main clause makes it a sentence
        ("9 of the 40 overnight prints failed.", False),
        ("All 6 failures are in test_checkout_e2e.", False),
        ("About 20% of orders fail at checkout.", False),
        ("Around 6 grand for the one that fits our tanks.", True),
        ("Nothing with bones, I cant abide picking bones out.", False),
        ("46 at a €26 discount, that's about 1,200 euros.", False),
        ("Every new flag must have an owner.", False),
        # it must open like a fragment: a quantity, a quantifier or a preposition
        ("The weekly sync on Thursdays at ten.", False),
        # an "-s" form is a verb unless a number or a determiner counts it
        ("Next sprint the team moves to Postgres.", False),
        # a status line: a bare noun phrase and a participle without its auxiliary
        ("212 issues flagged: 140 terminology, 51 numbers, 21 formatting.", True),
        ("Vertiv call logged, ref VRT-22981, engineer ETA 16:00.", True),
        ("Nightly parity check scheduled for 02:00, covering Booking.com.", True),
        # ...not a clause with its auxiliary, its possessive, its subject or a verb of saying
        ("Fire officer wasn't thrilled.", False),
        ("Stripe's cutoff moved to 17:00.", False),
        ("Weather station says gusts peaked at 48 last night.", False),
        ("The pipeline failed at 3am.", False),
    ],
)
def test_a_verbless_answer_or_status_line_reads_as_a_fragment(
    sentence: str, fragment: bool
) -> None:
    assert reads_as_fragment(sentence) is fragment, sentence


def test_a_fragment_is_framed_without_that() -> None:
    request = session(
        "Telemetry-bot: 212 of 240 stations reporting overnight on the LoRa gateways."
    )
    assert contents(request, "observation") == [
        "Telemetry-bot noted 212 of 240 stations reporting overnight on the LoRa gateways."
    ]
    companion = session("Kyle: Maybe in a couple of months, after the holidays.", mode="companion")
    assert contents(companion, "want") == [
        "Kyle mentioned maybe in a couple of months, after the holidays." + WANT
    ]


def test_a_fragment_finishes_the_sentence_before_it_whatever_its_type() -> None:
    request = session(
        "Bea: 9 of the 40 overnight prints failed. All on the Prusa bank B, all PETG jobs."
    )
    drafts = typed(request, "bug", "observation")
    assert [(d.memory_type, d.content) for d in drafts] == [
        (
            "bug",
            "Bea reported that 9 of the 40 overnight prints failed, all on the Prusa bank B, "
            "all PETG jobs.",
        )
    ]


def asked_and_answered(question: str, answer: str) -> ComposeInput:
    """Ines asks `question`, Okafor answers `answer`: one chunk each."""
    return ComposeInput(
        session_id="s",
        chunks=[
            ComposeChunk("c1", "Ines", f"Ines: {question}"),
            ComposeChunk("c2", "Okafor", f"Okafor: {answer}"),
        ],
        prompt_text="",
        mode="default",
    )


def test_a_fragment_that_answers_a_question_quotes_it_and_cites_both_turns() -> None:
    request = asked_and_answered(
        "Nice work. Manual gauge readings at what interval?",
        "Every four hours while inflow is above 120.",
    )
    (draft,) = typed(request, "observation")
    assert draft.content == (
        'Okafor answered Ines\'s question "Manual gauge readings at what interval": '
        "every four hours while inflow is above 120."
    )
    assert draft.derived_from == ("c1", "c2")
    assert draft.speaker == "Okafor"


@pytest.mark.parametrize(
    "question",
    [
        "Why?",  # too short to say anything beside its answer
        "What did I say about the readings last week?",  # someone's first person
    ],
)
def test_a_question_that_cannot_be_quoted_leaves_the_plain_fragment_frame(question: str) -> None:
    request = asked_and_answered(question, "Every four hours while inflow is above 120.")
    (draft,) = typed(request, "observation")
    assert draft.content == "Okafor noted every four hours while inflow is above 120."
    assert draft.derived_from == ("c2",)


def test_a_canonical_fragment_keeps_its_own_frame() -> None:
    request = session("Lena: No auto-publish on embargoed material, ever.")
    assert contents(request, "directive")[0].startswith("Lena directed that")


@pytest.mark.parametrize(
    ("line", "sure_only"),
    [
        # no word of a rule: a directive only when the classifier is sure (and no deed told:
        # nor an implementation)
        ("Kenji: Inspectors keep losing forms when they go into basements with no signal.",
         {"directive", "implementation"}),
        ("Lena: The photo desk says the CMS keeps stripping photographer credits.",
         {"directive", "implementation"}),
        # an obligation, a scope or a time the rule holds
        ("Kenji: Every form change needs a test that kills the app mid-edit.", {"implementation"}),
        ("Kenji: Form storage changes must ship with a kill test.", {"implementation"}),
        ("Kenji: From now on, the team attaches the device to each bug.", set()),
        ("Kenji: Nobody prunes in bays 7 and 8 until the heating comes back.", {"implementation"}),
        ("Lena: No laptops leave the building without disk encryption.", {"implementation"}),
        # a report takes neither canonical type unless the classifier is sure
        ("Kenji: The deadline for the form rollout is Friday.",
         {"decision", "directive", "implementation"}),
        # an implementation tells of work done: a past, a perfect, a change now in force
        ("Kenji: I added a kill test to the form storage suite yesterday.",
         {"decision", "directive"}),
        ("Kenji: The offline drafts are live for every inspector now.", {"decision", "directive"}),
        # an offer, a plan or how a thing works is one only when the classifier is sure
        ("Kenji: I can trigger the provisioning ticket when an offer comes in.",
         {"directive", "implementation"}),
        ("Kenji: Requests hit Envoy at the edge, which validates the tokens.",
         {"directive", "implementation"}),
    ],
)  # fmt: skip
def test_a_directive_needs_the_words_of_a_rule_or_a_sure_classifier(
    line: str, sure_only: set[str]
) -> None:
    (sentence,) = said_sentences(session(line))
    assert _needs_certainty(sentence) == sure_only, line


@pytest.mark.parametrize(
    ("line", "given", "expected"),
    [
        # a head that only announces the rule becomes its opening
        ("PM: Also, new rule from now on: every release candidate gets a smoke pass first.",
         "acceptance",
         ("directive", "PM directed that from now on, every release candidate gets a smoke pass "
          "first.")),
        # a head that says more stays as said (a signature across it stays verbatim)
        ("Anika: For REC experiments from now on: primary metric is revenue per session.",
         "observation",
         ("directive", "Anika directed that for REC experiments from now on: primary metric is "
          "revenue per session.")),
        # the rule's time anywhere in a person's sentence
        ("Ruth: Performance sets never leave the building from now on.", "observation",
         ("directive", "Ruth directed that performance sets never leave the building from now "
          "on.")),
        # a suggestion about the future is no rule
        ("Kim: Going forward it'd be worth adding a memory assertion to the eval loop.",
         "implementation",
         ("implementation", "Kim reported that going forward it'd be worth adding a memory "
          "assertion to the eval loop.")),
    ],
)  # fmt: skip
def test_a_rule_announced_or_timed_is_a_directive(
    line: str, given: str, expected: tuple[str, str]
) -> None:
    (draft,) = typed(session(line), given)
    assert (draft.memory_type, draft.content) == expected


# ---------------------------------------------------------------- said to someone, said in chat


@pytest.mark.parametrize(
    ("lines", "types", "expected"),
    [
        # an instruction to someone the session names, without a "please"
        (("Tariq: The GCPs are off by 7%.", "Noor: Tariq, resurvey all GCPs before the next "
          "flight."), ("observation", "observation"),
         ["Tariq noted that the GCPs are off by 7%.",
          "Noor asked Tariq to resurvey all GCPs before the next flight."]),
        # chat's lower-case name, when the session names that person
        (("carlos: The four crowns came back warped.", "Bea: carlos, remake the four with "
          "priority."), ("observation", "observation"),
         ["Carlos noted that the four crowns came back warped.",
          "Bea asked Carlos to remake the four with priority."]),
        # a standing rule said to an agent by its handle
        (("Noor: coding-agent — never push to main directly, always open a PR.",), ("directive",),
         ["Noor directed that coding-agent never push to main directly, always open a PR."]),
        # a claim said to someone: the vocative is not part of it
        (("Noor: dev-agent, we have 143 feature flags in the claims service.",),
         ("observation",), ["Noor noted that the team has 143 feature flags in the claims "
                            "service."]),
        # a capitalised word before a comma is no one addressed unless the session names it
        (("Noor: Short-term, stagger the baler cycles so they never overlap.",), ("observation",),
         ["Noor noted that Short-term, stagger the baler cycles so they never overlap."]),
    ],
)  # fmt: skip
def test_a_vocative_names_who_is_asked_and_is_never_part_of_the_claim(
    lines: tuple[str, ...], types: tuple[str, ...], expected: list[str]
) -> None:
    assert contents(session(*lines), *types) == expected


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("Understood; I'll follow proto-first for all new v2 endpoints.",
         "I'll follow proto-first for all new v2 endpoints."),
        ("Also remember — anything we decline goes to a second handler first.",
         "anything we decline goes to a second handler first."),
        ("Speaking of, the analyser read 13.9 on a load this morning.",
         "the analyser read 13.9 on a load this morning."),
        ("Thing is, I actually like the dates a lot.", "I actually like the dates a lot."),
        ("That's smart, I will book a Manchester trip for September.",
         "I will book a Manchester trip for September."),
        # "remember" that is the sentence's own verb stays
        ("Remember the milk for the party tonight please.",
         "Remember the milk for the party tonight please."),
    ],
)  # fmt: skip
def test_a_speakers_acknowledgements_and_asides_are_not_said(line: str, expected: str) -> None:
    assert said(session(f"Noor: {line}")) == [expected]


def test_a_continuing_sentence_that_dropped_its_subject_gets_the_speaker_back() -> None:
    request = session(
        "Claude: I changed the baler PLC so it waits for 6.3 bar before a cycle. Added a "
        "dashboard alert when the header drops below 6 bar."
    )
    assert contents(request, "implementation", "implementation") == [
        "Claude changed the baler PLC so it waits for 6.3 bar before a cycle. Claude added a "
        "dashboard alert when the header drops below 6 bar."
    ]


def test_chat_spelling_reads_as_a_record_spells_it() -> None:
    request = session(
        "Dave: her mum's in perth so its just us on saturdays and its fine tbh.",
        mode="companion",
    )
    assert contents(request, "observation") == [
        "Dave mentioned that her mum's in perth so it's just them on Saturdays and it's fine."
    ]


def test_a_sentence_that_points_back_joins_the_drawer_it_points_at() -> None:
    request = session(
        "Cellar_Manager: The pale ale in FV4 is stuck at 1.018. It's been sitting there for "
        "three days. We decided to rouse the yeast tomorrow."
    )
    drafts = typed(request, "bug", "observation", "decision")
    assert [(d.memory_type, d.content) for d in drafts] == [
        ("bug", "Cellar Manager reported that the pale ale in FV4 is stuck at 1.018. It's been "
                "sitting there for three days."),
        ("decision", "Cellar Manager decided to rouse the yeast tomorrow."),
    ]  # fmt: skip
    # a decision that points back is still a drawer of its own
    request = session("Noor: The venue offered the hall for Friday. That works, let's book it.")
    assert [d.memory_type for d in typed(request, "observation", "decision")] == [
        "observation",
        "decision",
    ]


def test_an_agents_handle_keeps_its_spelling_with_a_hyphen() -> None:
    request = session("qa_bot: The nightly axe run found four critical violations in step two.")
    assert contents(request, "bug") == [
        "Qa-bot reported that the nightly axe run found four critical violations in step two."
    ]
    request = session("raj_patel: The nightly axe run found four critical violations again.")
    assert contents(request, "bug") == [
        "Raj Patel reported that the nightly axe run found four critical violations again."
    ]
