"""Realistic sessions for the extractive invoker, shaped the way the corpus tier renders arcs.

One multi-agent engineering session (The_Architect decides, The_Engineer reports a bug and
a fix, The_Foreman asks and proposes) and one companion session (a user and the companion).
Each carries the chatter an authoring agent must skip: greetings, questions, filler,
tentative proposals, tool lines.
"""

from __future__ import annotations

from datetime import UTC, datetime

from services.authoring.core import ComposeChunk, ComposeInput

MONDAY = datetime(2025, 3, 3, 9, 30, tzinfo=UTC)
TUESDAY = datetime(2025, 3, 4, 18, 5, tzinfo=UTC)

ENGINEERING_CHUNKS = (
    ComposeChunk(
        "raw-eng-0",
        "The_Foreman",
        "The_Foreman: Morning all, thanks for joining the Engram sync.\n"
        "The_Foreman: What should the API return when a drawer is missing?\n"
        "The_Engineer: The search endpoint crashes with a KeyError when the query string is "
        "empty.\n"
        "[tool: Bash — pytest tests/services/retrieval -q]\n"
        "[tool output: 12 lines]",
        MONDAY,
    ),
    ComposeChunk(
        "raw-eng-1",
        "The_Architect",
        "The_Architect: OK, so we decided that the API returns 404 for missing drawers.\n"
        "The_Architect: Never write to the drawer pool outside the retrieval tier.\n"
        "The_Engineer: Got it, I'll take a look.\n"
        "The_Engineer: I fixed the empty-query crash by validating the request in the "
        "servicer.\n"
        "The_Engineer: The retrieval tier answers in about 40 ms per query on the H100.",
        MONDAY,
    ),
    ComposeChunk(
        "raw-eng-2",
        "The_Foreman",
        "The_Foreman: Maybe we could benchmark Chroma before we commit to anything.\n"
        "The_Architect: Let's go with Qdrant edge for the embedded vector store.\n"
        "The_Architect: Sounds good, thanks everyone.",
        MONDAY,
    ),
)


def engineering_session() -> ComposeInput:
    return ComposeInput(
        session_id="sess-eng",
        chunks=ENGINEERING_CHUNKS,
        prompt_text="",
        mode="default",
        wings=("projects", "philosophy"),
        rooms=("philosophy/agent-design", "projects/rev-engram"),
    )


COMPANION_CHUNKS = (
    ComposeChunk(
        "raw-kyle-0",
        "user",
        "User: Hey Sly!\n"
        "Assistant: Welcome back, Kyle. How was your day?\n"
        "User: Honestly I'm running on fumes today after back-to-back meetings.\n"
        "User: I prefer tea over coffee in the evenings, coffee keeps me up.",
        TUESDAY,
    ),
    ComposeChunk(
        "raw-kyle-1",
        "user",
        "User: I'm planning to check out the new pho place this week.\n"
        "Assistant: That sounds fun! Want me to remind you on Friday?\n"
        "User: Sure. I think meal kits are not worth the money at all.\n"
        "User: What do you think?",
        TUESDAY,
    ),
)


def companion_session() -> ComposeInput:
    return ComposeInput(
        session_id="sess-kyle",
        chunks=COMPANION_CHUNKS,
        prompt_text="",
        mode="companion",
        wings=("people",),
        rooms=(),
        user_name="Kyle",
    )
