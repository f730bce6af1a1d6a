"""Catalog names: normalised, and every hostile shape refused with a message that names it."""

from __future__ import annotations

import unicodedata

import pytest

from services.corpus.core import validate_file_name, validate_folder_path
from services.runtime.errors import InvalidInput


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("", "is empty"),
        (".", "'.' part"),
        ("..", "'..' part"),
        ("../etc/passwd", "contains '/'"),
        ("/abs", "contains '/'"),
        ("a\\b", "backslash"),
        ("con\x00trol", "U+0000"),
        ("line\nbreak.md", "U+000A"),
        ("bell\x07.txt", "U+0007"),
        ("invoice\u202efdp.exe", "U+202E"),
        ("trailing.", "ends with a space or a dot"),
        (" leading.md", "starts with a space"),
        ("CON", "reserved device name"),
        ("lpt1.txt", "reserved device name"),
        ("x" * 256, "longer than 255 bytes"),
        ("é" * 128, "longer than 255 bytes"),  # 256 bytes in UTF-8
    ],
)
def test_hostile_file_names_are_refused_with_the_problem_named(name: str, problem: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        validate_file_name(name)
    assert problem in caught.value.message
    assert caught.value.field == "name"


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("../etc/passwd", "'..' part"),
        ("/abs", "absolute"),
        ("a/../b", "'..' part"),
        ("a/./b", "'.' part"),
        ("a//b", "empty part"),
        ("a\\b", "backslash"),
        ("notes/con\x00trol", "U+0000"),
        ("notes/" + "s" * 300, "longer than 255 bytes"),
        ("/".join(["abcdefghij"] * 100), "longer than 1024 bytes"),
        ("..", "'..' part"),
    ],
)
def test_hostile_folder_paths_are_refused_with_the_problem_named(path: str, problem: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        validate_folder_path(path)
    assert problem in caught.value.message
    assert caught.value.field == "folder"


def test_messages_quote_control_characters_escaped() -> None:
    with pytest.raises(InvalidInput) as caught:
        validate_file_name("con\x00trol")
    assert "\x00" not in caught.value.message
    assert "\\x00" in caught.value.message


def test_names_are_normalised_to_nfc() -> None:
    decomposed = unicodedata.normalize("NFD", "résumé.md")
    assert decomposed != "résumé.md"
    assert validate_file_name(decomposed) == "résumé.md"
    assert validate_folder_path(unicodedata.normalize("NFD", "notes/café")) == "notes/café"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("", ""),
        ("notes", "notes"),
        ("notes/2026/q3", "notes/2026/q3"),
        ("notes/", "notes"),
        ("projets/été 2026", "projets/été 2026"),
        ("a" * 255, "a" * 255),
    ],
)
def test_ordinary_folder_paths_pass(path: str, expected: str) -> None:
    assert validate_folder_path(path) == expected


@pytest.mark.parametrize(
    "name",
    ["notes.md", "meeting 10:30.txt", ".env.example", "x" * 255, "console.log", "👩‍💻 notes.md"],
)
def test_ordinary_file_names_pass(name: str) -> None:
    assert validate_file_name(name) == name
