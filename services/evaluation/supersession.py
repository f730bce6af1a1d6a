"""Supersession scenario sets (eval/sets/supersession): the thesis schema plus explicit links.

A scenario is a chain of decisions, each replaced by the next through a `supersedes` link
(newer → older); the older drawers stay `active`, so only the link says they are stale.
Queries are `current` (what holds now: the chain's latest drawer), `history` (how it
changed: every drawer of the chain) or `stable` (a topic nothing superseded: its decision).
The runner asks each set with its links absent and then present (services/evaluation/
runners.run_supersession)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from services.evaluation.thesis import ThesisSet, thesis_set_from


@dataclass(frozen=True)
class SupersedesLink:
    newer: str
    older: str
    reason: str = ""


@dataclass(frozen=True)
class SupersessionSet:
    thesis: ThesisSet
    links: tuple[SupersedesLink, ...]

    @property
    def name(self) -> str:
        return self.thesis.name

    def older_than(self, drawer_id: str) -> frozenset[str]:
        """Every drawer `drawer_id` supersedes, directly or down its chain."""
        replaced: Mapping[str, list[str]] = _replaced(self.links)
        seen: set[str] = set()
        stack = list(replaced.get(drawer_id, ()))
        while stack:
            older = stack.pop()
            if older not in seen:
                seen.add(older)
                stack.extend(replaced.get(older, ()))
        return frozenset(seen)


def _replaced(links: tuple[SupersedesLink, ...]) -> dict[str, list[str]]:
    replaced: dict[str, list[str]] = {}
    for link in links:
        replaced.setdefault(link.newer, []).append(link.older)
    return replaced


def load_supersession_set(path: Path) -> SupersessionSet:
    """Read a supersession set; every link must join two drawers of the set."""
    data = json.loads(path.read_text())
    thesis = thesis_set_from(data)
    ids = {drawer.id for drawer in thesis.drawers}
    links = []
    for raw in data.get("links", ()):
        if raw.get("type", "supersedes") != "supersedes":
            raise ValueError(f"{path.name}: only supersedes links are scored, got {raw!r}")
        link = SupersedesLink(raw["from"], raw["to"], raw.get("reason", ""))
        missing = {link.newer, link.older} - ids
        if missing:
            raise ValueError(f"{path.name}: link {raw!r} names unknown drawers {sorted(missing)}")
        links.append(link)
    return SupersessionSet(thesis, tuple(links))
