"""Exports and transcripts are untrusted: a field of the wrong type anywhere (a list where a
type name belongs, a number where the parts are) is read past or refused with InvalidInput,
never a crash that fails the whole ingest. Mutations of the fixtures, seeded."""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

from services.corpus.core import ChunkReport, chunk_jsonl_file, read_lines
from services.corpus.core.chunk_export import ExportFormat, chunk_export
from services.runtime.errors import InvalidInput

FIXTURES = Path(__file__).parent / "fixtures"
ODD: list[Any] = [None, 1, "s", [], {}, [1, "x", None], {"a": 1}, True, 1.5]
ROUNDS = 150


def _mutated(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        return {
            k: rng.choice(ODD) if rng.random() < 0.15 else _mutated(v, rng)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [rng.choice(ODD) if rng.random() < 0.15 else _mutated(v, rng) for v in value]
    return value


@pytest.mark.parametrize(
    ("export", "fixture"),
    [("chatgpt", "chatgpt_conversations.json"), ("claude_ai", "claude_conversations.json")],
)
def test_an_export_with_odd_field_types_is_read_or_refused(
    export: ExportFormat, fixture: str
) -> None:
    rng = random.Random(7)
    base = json.loads((FIXTURES / fixture).read_text())
    for _ in range(ROUNDS):
        body = json.dumps(_mutated(base, rng)).encode()
        with contextlib.suppress(InvalidInput):
            list(chunk_export(io.BytesIO(body), export=export, name="c.json", report=ChunkReport()))


@pytest.mark.parametrize(
    "fixture",
    [
        "claude_code_session.jsonl",
        "codex_rollout.jsonl",
        "codex_rollout_legacy.jsonl",
        "chat_log.jsonl",
    ],
)
def test_a_transcript_with_odd_field_types_is_read(fixture: str) -> None:
    rng = random.Random(11)
    records = []
    for line in (FIXTURES / fixture).read_text().splitlines():
        try:
            records.append(json.loads(line))
        except ValueError:
            continue  # the fixture's own malformed lines
    for _ in range(ROUNDS):
        body = "\n".join(json.dumps(_mutated(r, rng)) for r in records).encode() + b"\n"
        report = ChunkReport()
        _, chunks = chunk_jsonl_file(read_lines(io.BytesIO(body), report=report), report=report)
        list(chunks)
