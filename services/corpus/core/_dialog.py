"""Reading one record of a dialog transcript: Claude Code, Codex, or a generic chat log.

A record becomes a list of events: turns (who said what, when) and tool events (one summary
line each). A record that holds neither (bookkeeping, system prompts, injected context,
thinking) becomes no events and is counted in the report. The formats are described in
`chunk_jsonl`; this module only knows their fields.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal

from services.corpus.core.chunks import (
    ORIGIN_CLAUDE_CODE,
    ORIGIN_CODEX,
    ORIGIN_DIALOG,
    ChunkReport,
)

_BRIEF_CHARS: Final = 80
_CODEX_ENVELOPES: Final = frozenset(
    {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
)
_CODEX_TOOL_CALLS: Final = frozenset(
    {"function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
_CODEX_TOOL_OUTPUTS: Final = frozenset({"function_call_output", "custom_tool_call_output"})
_TEXT_PARTS: Final = frozenset({"text", "input_text", "output_text"})
_IMAGE_PARTS: Final = frozenset({"image", "input_image", "image_url"})
# Text a client injects as a "user" message that the user never typed.
_INJECTED_PREFIXES: Final = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md instructions",
    "<command-name>",
    "<command-message>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "Caveat: The messages below were generated",
)
_TOOL_DETAIL_KEYS: Final = (
    "command", "cmd", "file_path", "path", "pattern", "url", "query", "description", "prompt",
)  # fmt: skip
_USER_ROLES: Final = frozenset({"user", "human", "customer"})
_ASSISTANT_ROLES: Final = frozenset({"assistant", "ai", "bot", "model", "gpt", "chatbot", "agent"})
_SYSTEM_ROLES: Final = frozenset({"system", "developer"})
_TOOL_ROLES: Final = frozenset({"tool", "function", "ipython"})


@dataclass(frozen=True, slots=True)
class Turn:
    side: Literal["user", "assistant"]
    label: str  # "User", "Assistant", or a speaker's name
    text: str
    occurred_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class ToolEvent:
    summary: str


Event = Turn | ToolEvent


def sniff_record(record: dict[str, Any]) -> tuple[str | None, str | None]:
    """(the dialog format this record belongs to or None, the session id it names or None)."""
    kind = text_field(record)
    if (
        kind in ("user", "assistant")
        and isinstance(record.get("message"), dict)
        and any(key in record for key in ("sessionId", "uuid", "parentUuid"))
    ):
        return ORIGIN_CLAUDE_CODE, _str(record.get("sessionId"))
    if (kind == "summary" and "leafUuid" in record) or kind == "file-history-snapshot":
        return ORIGIN_CLAUDE_CODE, _str(record.get("sessionId"))
    payload = record.get("payload")
    if kind in _CODEX_ENVELOPES and isinstance(payload, dict):
        return ORIGIN_CODEX, _str(payload.get("id")) if kind == "session_meta" else None
    if "instructions" in record and "id" in record and "timestamp" in record:
        return ORIGIN_CODEX, _str(record.get("id"))  # the header of an older rollout
    if "record_type" in record or (kind == "message" and _has_codex_parts(record)):
        return ORIGIN_CODEX, None
    if isinstance(record.get("role"), str) and "content" in record:
        return ORIGIN_DIALOG, _str(record.get("session_id") or record.get("conversation_id"))
    if isinstance(record.get("speaker"), str) and isinstance(record.get("text"), str):
        return ORIGIN_DIALOG, _str(record.get("session_id") or record.get("conversation_id"))
    return None, None


def parse_record(
    dialog: str, record: dict[str, Any], report: ChunkReport, speakers: list[str]
) -> list[Event]:
    """The events of one record; counts what it skips. `speakers` persists across records."""
    if dialog == ORIGIN_CLAUDE_CODE:
        events = _claude_code(record, report)
    elif dialog == ORIGIN_CODEX:
        events = _codex(record, report)
    else:
        events = _chat(record, report, speakers)
    return events


def text_field(record: Any, key: str = "type") -> str:
    """A record's field as text, "" when it is absent or not a string: exports and transcripts
    are untrusted, and a list where a type name belongs must not break the reader."""
    value = record.get(key) if isinstance(record, dict) else None
    return value if isinstance(value, str) else ""


def list_field(record: Any, key: str) -> list[Any]:
    """A record's field as a list, [] when it is absent or not a list."""
    value = record.get(key) if isinstance(record, dict) else None
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _has_codex_parts(record: dict[str, Any]) -> bool:
    content = record.get("content")
    return isinstance(content, list) and any(
        text_field(part) in ("input_text", "output_text") for part in content
    )


def when_of(value: Any) -> datetime | None:
    """A time: ISO 8601 (a trailing Z too) or epoch seconds/milliseconds; UTC. None if not one."""
    try:
        if isinstance(value, str) and value:
            moment = datetime.fromisoformat(value)
        elif isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            moment = datetime.fromtimestamp(value / 1000 if value > 1e11 else value, UTC)
        else:
            return None
    except (ValueError, OverflowError, OSError):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _when(record: dict[str, Any]) -> datetime | None:
    """A record's time, from the first of its usual time fields that holds one."""
    for key in ("timestamp", "time", "created_at", "ts"):
        moment = when_of(record.get(key))
        if moment is not None:
            return moment
    return None


def _brief(value: Any) -> str:
    """One line of at most 80 characters."""
    text = " ".join(str(value).split())
    return text if len(text) <= _BRIEF_CHARS else text[: _BRIEF_CHARS - 1] + "…"


def tool_call(name: Any, arguments: Any) -> ToolEvent:
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError):
            arguments = json.loads(arguments)
    detail: Any = arguments if isinstance(arguments, str) else ""
    if isinstance(arguments, dict):
        for key in _TOOL_DETAIL_KEYS:
            value = arguments.get(key)
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                # Codex runs ["bash", "-lc", "<script>"]: the script is what was done.
                value = value[2] if len(value) >= 3 and value[1] in ("-lc", "-c") else value
                value = value if isinstance(value, str) else " ".join(value)
            if value:
                detail = value
                break
        else:
            detail = json.dumps(arguments, ensure_ascii=False) if arguments else ""
    label = _brief(name) if name else "tool"
    return ToolEvent(f"[tool: {label} — {_brief(detail)}]" if detail else f"[tool: {label}]")


def tool_output(text: str, *, error: bool) -> ToolEvent:
    if error:
        first = next((line for line in text.splitlines() if line.strip()), "failed")
        return ToolEvent(f"[tool error: {_brief(first)}]")
    count = len(text.splitlines())
    return ToolEvent(f"[tool output: {count} line{'' if count == 1 else 's'}]")


def parts_text(content: Any) -> str:
    """The text of a string, or of a list of content parts (images as "[image]")."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif text_field(part) in _TEXT_PARTS:
            texts.append(str(part.get("text") or ""))
        elif text_field(part) in _IMAGE_PARTS:
            texts.append("[image]")
    return "\n".join(t for t in texts if t)


def _turn(side: Literal["user", "assistant"], text: str, when: datetime | None) -> list[Event]:
    text = text.strip()
    if not text or (side == "user" and text.startswith(_INJECTED_PREFIXES)):
        return []
    return [Turn(side, "User" if side == "user" else "Assistant", text, when)]


def _claude_code(record: dict[str, Any], report: ChunkReport) -> list[Event]:
    message = record.get("message")
    kind = text_field(record)
    if kind not in ("user", "assistant") or not isinstance(message, dict):
        report.skipped_meta_lines += 1  # summary, system, file-history-snapshot, …
        return []
    if record.get("isMeta") or record.get("isCompactSummary"):
        report.skipped_meta_lines += 1
        return []
    if record.get("isSidechain"):
        report.skipped_tool_events += 1  # a subagent's own conversation: tool chatter
        return []
    side: Literal["user", "assistant"] = "assistant" if kind == "assistant" else "user"
    when = _when(record)
    content = message.get("content")
    if not isinstance(content, list):
        content = [{"type": "text", "text": parts_text(content)}]
    texts: list[dict[str, Any]] = []
    tools: list[Event] = []
    thinking = 0
    for block in content:
        block_type = text_field(block)
        if block_type in _TEXT_PARTS or block_type in _IMAGE_PARTS:
            texts.append(block)
        elif block_type in ("thinking", "redacted_thinking"):
            thinking += 1
        elif block_type == "tool_use":
            tools.append(tool_call(block.get("name"), block.get("input")))
        elif block_type == "tool_result":
            text = parts_text(block.get("content"))
            tools.append(tool_output(text, error=bool(block.get("is_error"))))
    report.skipped_thinking_blocks += thinking
    events = _turn(side, parts_text(texts), when) + tools
    if not events and not thinking:
        report.skipped_meta_lines += 1  # empty, or only injected text
    return events


def _codex(record: dict[str, Any], report: ChunkReport) -> list[Event]:
    kind = text_field(record)
    item: Any = record
    if kind in _CODEX_ENVELOPES:
        if kind != "response_item" or not isinstance(record.get("payload"), dict):
            report.skipped_meta_lines += 1  # session_meta, event_msg copies, turn_context, …
            return []
        item = record["payload"]
    when = _when(record) or _when(item)
    item_type = text_field(item)
    if item_type == "message" and item.get("role") in ("user", "assistant"):
        events = _turn(item["role"], parts_text(item.get("content")), when)
    elif item_type == "reasoning":
        report.skipped_thinking_blocks += 1
        return []
    elif item_type in _CODEX_TOOL_CALLS:
        action = item.get("action")
        return [tool_call(item.get("name") or item_type, item.get("arguments") or action)]
    elif item_type in _CODEX_TOOL_OUTPUTS:
        return [_codex_output(item.get("output"))]
    else:
        events = []
    if not events:
        report.skipped_meta_lines += 1  # developer/system messages, headers, state records
    return events


def _codex_output(output: Any) -> ToolEvent:
    """A function_call_output: a string, often JSON {output, metadata: {exit_code}}."""
    if isinstance(output, str):
        try:
            parsed = json.loads(output)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and "output" in parsed:
            metadata = parsed.get("metadata")
            code = metadata.get("exit_code") if isinstance(metadata, dict) else None
            return tool_output(str(parsed["output"]), error=code not in (None, 0))
        return tool_output(output, error=False)
    return tool_output(parts_text(output), error=False)


def _chat(record: dict[str, Any], report: ChunkReport, speakers: list[str]) -> list[Event]:
    when = _when(record)
    name = record.get("role") if "role" in record else record.get("speaker")
    body = record.get("content") if "content" in record else record.get("text")
    if not isinstance(name, str) or not name.strip():
        report.skipped_meta_lines += 1
        return []
    role = name.strip().lower()
    events: list[Event] = []
    if role in _SYSTEM_ROLES:
        report.skipped_meta_lines += 1
        return []
    if role in _TOOL_ROLES:
        return [tool_output(parts_text(body), error=False)]
    if role in _USER_ROLES:
        events = _turn("user", parts_text(body), when)
    elif role in _ASSISTANT_ROLES:
        events = _turn("assistant", parts_text(body), when)
        for call in list_field(record, "tool_calls"):
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                events.append(tool_call(function.get("name"), function.get("arguments")))
    else:
        # Named speakers: whoever speaks first opens the arcs, everyone else answers.
        label = name.strip()
        if label not in speakers:
            speakers.append(label)
        text = parts_text(body).strip()
        if text:
            side: Literal["user", "assistant"] = "user" if label == speakers[0] else "assistant"
            events = [Turn(side, label, text, when)]
    if not events:
        report.skipped_meta_lines += 1
    return events
