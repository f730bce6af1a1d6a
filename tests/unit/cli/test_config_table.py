"""The README's configuration table is the one the code prints: every setting is documented."""

from __future__ import annotations

from pathlib import Path

from services.cli.config import markdown, readme_table, setting_rows

README = Path(__file__).resolve().parents[3] / "README.md"


def test_readme_configuration_table_matches_the_code() -> None:
    assert readme_table(README.read_text()) == markdown(), (
        "README.md's configuration table is stale: run `engram config --write-readme README.md`"
    )


def test_every_setting_has_a_description() -> None:
    missing = [variable for variable, _, description in setting_rows() if not description]
    assert not missing, f"settings without a description: {missing}"
