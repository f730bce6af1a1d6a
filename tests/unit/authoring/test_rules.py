"""validate_draft: the type, signature, wing/room and tier-scope matrix, and soft warnings."""

from __future__ import annotations

from dataclasses import replace

import pytest

from services.authoring.core import (
    DEFAULT_WRITE_POLICY,
    DraftInput,
    DraftRules,
    Validation,
    WritePolicy,
    shape_warnings,
    validate_draft,
)
from services.authoring.core.rules import names_someone, signing_hint
from services.runtime.errors import InvalidInput, PermissionDenied
from services.vocabulary import COMPANION_LIBRARY, DEFAULT_LIBRARY

WINGS = ("projects", "philosophy", "people")
CONTENT = "The Architect decided that the API returns 404 for missing drawers."
SIGNATURE = "API returns 404 for missing drawers"


def draft(**changes: str) -> DraftInput:
    base = DraftInput(
        content=CONTENT,
        memory_type="decision",
        wing="projects",
        room="projects/rev-engram",
        topic="api-errors",
        added_by="The_Architect",
    )
    return replace(base, **changes)


def check(
    item: DraftInput,
    *,
    mode: str = "default",
    tier: str = "admin",
    signed: bool = False,
    signature: str | None = None,
    allow_new_wing: bool = False,
    policy: WritePolicy = DEFAULT_WRITE_POLICY,
    rules: DraftRules | None = None,
) -> Validation:
    return validate_draft(
        item,
        mode=mode,
        tier=tier,
        existing_wings=WINGS,
        allow_new_wing=allow_new_wing,
        signed=signed,
        signature=signature,
        policy=policy,
        rules=rules or DraftRules(),
    )


# ---------------------------------------------------------------- memory types per mode


@pytest.mark.parametrize(
    ("mode", "memory_type"),
    [("default", t) for t in DEFAULT_LIBRARY.types]
    + [("companion", t) for t in COMPANION_LIBRARY.types],
)
def test_every_type_of_the_store_library_is_accepted(mode: str, memory_type: str) -> None:
    assert check(draft(memory_type=memory_type), mode=mode).warnings == []


@pytest.mark.parametrize(
    ("mode", "memory_type", "hint"),
    [
        ("default", "want", "'want' is a companion-mode type"),
        ("default", "preference", "companion-mode type"),
        ("companion", "decision", "'decision' is a default-mode type"),
        ("companion", "directive", "default-mode type"),
        ("default", "Decision", "types are lower-case: 'decision'"),
        ("default", "banana", "valid: architecture, workflow"),
        ("companion", "banana", "valid: want, preference, opinion, observation"),
        ("default", "", "not in the default library"),
    ],
)
def test_a_type_outside_the_library_is_refused_with_the_valid_ones(
    mode: str, memory_type: str, hint: str
) -> None:
    with pytest.raises(InvalidInput) as caught:
        check(draft(memory_type=memory_type), mode=mode)
    assert caught.value.field == "memory_type"
    assert hint in caught.value.message


def test_an_unknown_mode_is_refused() -> None:
    with pytest.raises(InvalidInput) as caught:
        check(draft(), mode="swarm")
    assert caught.value.field == "mode"


# ---------------------------------------------------------------- signatures (HEAVY-SPLIT)


def test_a_signed_write_with_a_verbatim_signature_passes() -> None:
    assert check(draft(), signed=True, signature=SIGNATURE).warnings == []


def test_signature_comparison_ignores_whitespace_runs_and_line_breaks() -> None:
    wrapped = draft(content="The Architect decided that the API returns\n404 for  missing drawers.")
    check(wrapped, signed=True, signature="API returns 404 for missing drawers")
    check(draft(), signed=True, signature="API  returns\t404 for missing drawers")


@pytest.mark.parametrize(
    ("signature", "problem"),
    [
        (None, "needs a signature"),
        ("", "needs a signature"),
        ("   ", "needs a signature"),
        ("404 for", "is 7 characters; at least 12"),
        ("api returns 404 for missing", "does not appear verbatim"),  # case matters
        ("API returns 404 for lost drawers", "does not appear verbatim"),
        ("PI returns 404 for missing", "does not appear verbatim"),  # half a word
        ("API returns 404 for missing drawer", "does not appear verbatim"),
        (CONTENT, "is the whole content"),
        (CONTENT.rstrip("."), "is the whole content"),
    ],
)
def test_signed_writes_refuse_a_bad_signature(signature: str | None, problem: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        check(draft(), signed=True, signature=signature)
    assert caught.value.field == "signature"
    assert problem in caught.value.message


def test_the_minimum_signature_length_is_a_rule() -> None:
    rules = DraftRules(min_signature_chars=40)
    with pytest.raises(InvalidInput, match="at least 40"):
        check(draft(), signed=True, signature=SIGNATURE, rules=rules)


def test_an_ambient_write_with_a_signature_is_told_to_use_the_signed_operation() -> None:
    with pytest.raises(InvalidInput) as caught:
        check(draft(), signed=False, signature=SIGNATURE)
    assert caught.value.field == "signature"
    assert "use add_drawer_signed" in caught.value.message


def test_an_ambient_write_with_an_empty_signature_is_fine() -> None:
    check(draft(), signed=False, signature="")


# ---------------------------------------------------------------- wings and rooms


@pytest.mark.parametrize(
    ("room", "problem"),
    [
        ("rev-engram", "must be written wing/name"),
        ("projects/rev/engram", "exactly one '/'"),
        ("projects/", "the name must be 1-64"),
        ("projects/Rev-Engram", "the name must be 1-64"),
        ("projects/-engram", "starting with a letter or digit"),
        ("projects/..", "starting with a letter or digit"),
        ("projects/rev engram", "the name must be 1-64"),
        ("projects/" + "x" * 65, "the name must be 1-64"),
        ("philosophy/agent-design", "belongs to wing 'philosophy'"),
        ("", "must be written wing/name"),
    ],
)
def test_a_room_must_be_a_slug_inside_the_drawers_wing(room: str, problem: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        check(draft(room=room))
    assert caught.value.field == "room"
    assert problem in caught.value.message


@pytest.mark.parametrize("wing", ["", "Projects", "my projects", "-projects", "x" * 33, "a/b"])
def test_a_wing_must_be_a_slug(wing: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        check(draft(wing=wing, room=f"{wing}/rev-engram"))
    assert caught.value.field == "wing"


def test_room_names_accept_dots_and_underscores() -> None:
    check(draft(room="projects/engram_v2.1"))


def test_a_new_wing_is_refused_for_the_write_tier_with_a_suggestion() -> None:
    with pytest.raises(PermissionDenied) as caught:
        check(draft(wing="project", room="project/rev-engram"), tier="write")
    assert caught.value.field == "wing"
    assert "did you mean 'projects'?" in caught.value.message
    assert "allow_new_wing" in caught.value.message


def test_a_new_wing_is_allowed_for_admin_and_reported() -> None:
    result = check(draft(wing="research", room="research/embedders"), tier="admin")
    assert result.new_wing is True


def test_a_new_wing_is_allowed_for_the_write_tier_with_the_explicit_flag() -> None:
    result = check(
        draft(wing="research", room="research/embedders"), tier="write", allow_new_wing=True
    )
    assert result.new_wing is True


def test_an_existing_wing_is_not_new_and_a_new_room_in_it_needs_nothing() -> None:
    assert check(draft(room="projects/brand-new-project"), tier="write").new_wing is False


# ---------------------------------------------------------------- tier scope


def test_the_read_tier_never_writes_even_a_perfect_draft() -> None:
    with pytest.raises(PermissionDenied) as caught:
        check(draft(), tier="read")
    assert caught.value.field == "tier"


def test_the_read_tier_is_refused_before_the_draft_is_inspected() -> None:
    with pytest.raises(PermissionDenied):
        check(draft(content="", memory_type="nonsense"), tier="read")


@pytest.mark.parametrize("tier", ["", "owner", "CALLER_TIER_WRITE"])
def test_an_unknown_tier_is_refused(tier: str) -> None:
    with pytest.raises(PermissionDenied, match="unknown caller tier"):
        check(draft(), tier=tier)


def test_the_write_tier_may_author_ordinary_types() -> None:
    for memory_type in ("decision", "bug", "observation", "architecture"):
        check(draft(memory_type=memory_type), tier="write")


def test_the_write_tier_may_not_author_a_directive() -> None:
    with pytest.raises(PermissionDenied) as caught:
        check(draft(memory_type="directive"), tier="write")
    assert caught.value.field == "memory_type"
    assert "write tier may not author 'directive'" in caught.value.message


def test_the_write_tier_may_not_pin() -> None:
    with pytest.raises(PermissionDenied) as caught:
        check(draft(pin_status="pinned"), tier="write")
    assert caught.value.field == "pin_status"


@pytest.mark.parametrize("pin_status", ["active", "deprecated", "", "ACTIVE"])
def test_the_write_tier_may_write_unpinned_statuses(pin_status: str) -> None:
    check(draft(pin_status=pin_status), tier="write")


def test_admin_may_author_a_pinned_directive_in_a_new_wing() -> None:
    item = draft(memory_type="directive", pin_status="pinned", wing="rules", room="rules/writes")
    check(item, tier="Admin", signed=True, signature=SIGNATURE)


def test_an_unknown_pin_status_is_refused() -> None:
    with pytest.raises(InvalidInput) as caught:
        check(draft(pin_status="sticky"))
    assert caught.value.field == "pin_status"


# ---------------------------------------------------------------- the policy is configurable


def test_a_store_policy_can_let_the_write_tier_pin_and_forbid_decisions() -> None:
    policy = WritePolicy.from_config(
        {"pinners": ["write", "admin"], "forbidden_types": {"write": ["decision"]}}
    )
    check(draft(memory_type="directive", pin_status="pinned"), tier="write", policy=policy)
    with pytest.raises(PermissionDenied, match="'decision'"):
        check(draft(), tier="write", policy=policy)


def test_a_store_policy_can_open_writes_to_the_read_tier_and_wings_to_write() -> None:
    policy = WritePolicy.from_config(
        {"writers": ["read", "write", "admin"], "wing_creators": ["write", "admin"]}
    )
    check(draft(), tier="read", policy=policy)
    assert check(draft(wing="research", room="research/x"), tier="write", policy=policy).new_wing


def test_policy_config_round_trips_and_defaults_fill_missing_keys() -> None:
    assert WritePolicy.from_config({}) == DEFAULT_WRITE_POLICY
    assert WritePolicy.from_config(DEFAULT_WRITE_POLICY.to_config()) == DEFAULT_WRITE_POLICY
    assert DEFAULT_WRITE_POLICY.to_config() == {
        "writers": ["admin", "write"],
        "forbidden_types": {"write": ["directive"]},
        "pinners": ["admin"],
        "wing_creators": ["admin"],
    }


@pytest.mark.parametrize(
    ("config", "problem"),
    [
        ({"writers": ["root"]}, "unknown tiers ['root']"),
        ({"writer": ["admin"]}, "unknown keys ['writer']"),
        ({"pinners": "admin"}, "must be a list"),
        ({"forbidden_types": ["directive"]}, "must map a tier"),
        ({"forbidden_types": {"guest": ["directive"]}}, "unknown tiers ['guest']"),
    ],
)
def test_a_bad_policy_config_is_refused(config: dict[str, object], problem: str) -> None:
    with pytest.raises(InvalidInput, match=problem.replace("[", r"\[").replace("]", r"\]")):
        WritePolicy.from_config(config)


# ---------------------------------------------------------------- content and topic


def test_empty_content_is_refused() -> None:
    with pytest.raises(InvalidInput) as caught:
        check(draft(content="  \n "))
    assert caught.value.field == "content"


def test_content_over_the_limit_is_refused_with_the_sizes() -> None:
    with pytest.raises(InvalidInput, match="is 601 characters; the limit is 600"):
        check(draft(content="The Architect said " + "x" * 582))
    check(draft(content="The Architect said " + "x" * 581))


def test_a_long_or_multi_line_topic_is_refused() -> None:
    for topic in ("t" * 65, "api\nerrors"):
        with pytest.raises(InvalidInput) as caught:
            check(draft(topic=topic))
        assert caught.value.field == "topic"


def test_draft_rules_must_be_positive() -> None:
    with pytest.raises(InvalidInput, match="max_sentences"):
        DraftRules(max_sentences=0)


# ---------------------------------------------------------------- soft warnings


def test_a_well_framed_drawer_has_no_warnings() -> None:
    assert shape_warnings(CONTENT) == []
    assert shape_warnings("Kyle prefers tea over coffee in the evenings.") == []


@pytest.mark.parametrize(
    "content",
    [
        "User: I'm going to try that new pho place.\nAssistant: Sounds fun!",
        "User said: 'I'm going to try that new pho place this week.'",  # the seed's wrong shape
        "[tool: Bash — pytest -q]\nThe tests passed on the second run.",
        "2025-03-04 10:12 The daemon restarted after the lock timed out.",
        "[10:12] Kyle said the daemon restarted.",
        "The_Architect: we use Redis.\nThe_Engineer: agreed, Redis it is.",
        "Élodie: started at 3h30.\nÉmile: same as always then.",
    ],
)
def test_a_verbatim_log_is_warned_about_not_refused(content: str) -> None:
    warnings = check(draft(content=content)).warnings
    assert len(warnings) == 1
    assert "looks like a verbatim log" in warnings[0]


@pytest.mark.parametrize(
    "content",
    [
        "I prefer tea over coffee in the evenings.",
        "I think my laptop can't handle the embedder, so I'm switching to the server.",
        "We decided to use Redis and our queue works now.",
    ],
)
def test_a_first_person_transcript_is_warned_about(content: str) -> None:
    warnings = check(draft(content=content)).warnings
    assert len(warnings) == 1
    assert "first-person transcript" in warnings[0]


def test_first_person_words_inside_a_framed_drawer_do_not_warn() -> None:
    assert shape_warnings("Kyle said that my way or the highway is his motto.") == []


def test_content_that_names_no_one_is_warned_about() -> None:
    warnings = shape_warnings("the cache is stale after restarts.")
    assert len(warnings) == 1
    assert "does not say who" in warnings[0]


@pytest.mark.parametrize(
    "content",
    [
        "The payments team decided that refunds always go to the original card.",
        "Our on-call engineer restarts the ingest worker after every deploy.",
        "Finance approved the Q3 budget for the data platform.",
        "coding-agent added a retry wrapper around the refund call.",
        "Maya noted that the export runs at 02:00 UTC.",
        "Raj Patel said the vendor sandbox resets every night.",
        "Kyle's sister is moving in with him in May.",
        "The user wants to visit Lisbon in the spring.",
    ],
)
def test_a_role_a_team_an_agent_or_a_name_doing_something_says_who(content: str) -> None:
    assert names_someone(content), content
    assert shape_warnings(content) == []


@pytest.mark.parametrize(
    "content",
    [
        "Payouts use SEPA Instant for transfers under 100k.",
        "The nightly batch 100 was exported to the ledger bucket at 02:00.",
        "Postgres Replication Lag stays under two seconds.",
    ],
)
def test_capitalised_words_alone_do_not_say_who(content: str) -> None:
    assert not names_someone(content), content
    assert any("does not say who" in w for w in shape_warnings(content))


@pytest.mark.parametrize(
    ("content", "memory_type", "signed", "hinted"),
    [
        ("The Architect decided that the API returns 404.", "decision", False, True),
        ("The Architect decided that the API returns 404.", "decision", True, False),
        ("Maya noted that deploys must never happen on Fridays.", "observation", False, True),
        ("The team decided to move the sync to Thursdays.", "observation", False, True),
        ("Maya noted that the export runs at 02:00 UTC.", "observation", False, False),
    ],
)
def test_an_ambient_write_that_reads_canonical_gets_a_hint_to_sign_it(
    content: str, memory_type: str, signed: bool, hinted: bool
) -> None:
    hint = signing_hint(content, memory_type, signed=signed)
    assert (hint is not None) == hinted, hint
    if hint is not None:
        assert "add_drawer_signed" in hint


def test_more_than_three_sentences_is_warned_about() -> None:
    content = "The Architect chose Redis. The team agreed. The Engineer built it. Kyle tested it."
    warnings = shape_warnings(content)
    assert warnings == [
        "content has 4 sentences; a drawer is 1–3: split it into separate drawers so each is "
        "retrievable on its own"
    ]


def test_abbreviations_do_not_count_as_sentences() -> None:
    content = "The Architect chose a store, e.g. Qdrant. It runs in-process, i.e. without a server."
    assert shape_warnings(content) == []
