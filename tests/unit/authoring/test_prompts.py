"""The default authoring prompts teach the same rules and schema the parser and validator hold."""

from __future__ import annotations

import pytest

from services.authoring.core import DraftRules, default_prompt, diff_prompts
from services.authoring.core.prompts import TYPE_GUIDANCE
from services.runtime.errors import InvalidInput
from services.vocabulary import library_for


@pytest.mark.parametrize(
    ("mode", "version"), [("default", "default-v2"), ("companion", "companion-v2")]
)
def test_each_mode_has_a_versioned_prompt(mode: str, version: str) -> None:
    prompt = default_prompt(mode)
    assert (prompt.version, prompt.mode) == (version, mode)
    assert prompt.text.endswith("\n")


@pytest.mark.parametrize("mode", ["default", "companion"])
def test_the_prompt_lists_every_type_of_the_library_with_guidance(mode: str) -> None:
    text = default_prompt(mode).text
    for memory_type in library_for(mode).types:
        assert f"\n- {memory_type}: " in text


def test_the_companion_prompt_does_not_offer_default_types() -> None:
    text = default_prompt("companion").text
    assert "- decision:" not in text
    assert "- directive:" not in text


def test_every_library_type_has_guidance() -> None:
    for mode in ("default", "companion"):
        assert set(library_for(mode).types) <= set(TYPE_GUIDANCE)


@pytest.mark.parametrize("mode", ["default", "companion"])
def test_the_prompt_states_the_schema_and_the_rules(mode: str) -> None:
    text = default_prompt(mode).text
    for field in ("content", "memory_type", "wing", "room", "derived_from", "signature"):
        assert f'"{field}"' in text
    assert '{"drawers": []}' in text
    assert "third person" in text
    assert "1–3 sentences" in text
    assert "at most 600 characters" in text
    assert "at least 12 characters" in text
    assert "wing/name" in text
    assert "Do not pin" in text


def test_the_prompt_follows_the_configured_rules() -> None:
    text = default_prompt("default", rules=DraftRules(max_content_chars=400, max_sentences=2)).text
    assert "1–2 sentences and at most 400 characters" in text


def test_the_companion_prompt_carries_the_seeds_wrong_and_right_shapes() -> None:
    text = default_prompt("companion").text
    assert "User said: 'I'm going to try that new pho place this week.'" in text
    assert "Kyle is planning to check out the new pho place this week." in text


def test_an_unknown_mode_has_no_prompt() -> None:
    with pytest.raises(InvalidInput):
        default_prompt("swarm")


def test_diff_of_equal_prompts_is_empty() -> None:
    text = default_prompt("default").text
    assert diff_prompts(text, text) == ""


def test_diff_is_unified_with_names_and_changed_lines() -> None:
    old = "line one\nline two\nline three\n"
    new = "line one\nline 2\nline three\n"
    diff = diff_prompts(old, new, from_name="default-v1", to_name="default-v2")
    assert diff.splitlines() == [
        "--- default-v1",
        "+++ default-v2",
        "@@ -1,3 +1,3 @@",
        " line one",
        "-line two",
        "+line 2",
        " line three",
    ]


def test_diff_marks_a_missing_final_newline() -> None:
    diff = diff_prompts("a\nb", "a\nc")
    assert diff.endswith("+c\n\\ No newline at end of file\n")
    assert "-b\n\\ No newline at end of file\n+c" in diff
