"""Chat exports: ChatGPT's and Claude.ai's ``conversations.json``, one session per conversation.

Both services export a JSON array of conversations (the ``conversations.json`` inside the zip
their settings page mails you):

- **ChatGPT**: ``{title, create_time, update_time, mapping, current_node, conversation_id |
  id, …}``. ``mapping`` is a tree of nodes ``{id, parent, children, message}``; what the user
  saw is the branch from the root to ``current_node`` (edits and regenerations are the other
  branches, left out). A message is ``{author: {role, name}, create_time, content:
  {content_type, parts | text | …}, recipient, metadata}``: an assistant message to a
  ``recipient`` other than ``all`` is a tool call, a ``tool`` message its output; ``thoughts``
  and ``reasoning_recap`` are thinking; system messages, hidden messages and the user's
  custom-instruction context are bookkeeping.
- **Claude.ai**: ``{uuid, name, created_at, updated_at, chat_messages: [{uuid, sender: human |
  assistant, text, content: [blocks], created_at, attachments, files}]}``; blocks are
  ``text``, ``thinking``, ``tool_use`` and ``tool_result``, as in the API.

Each conversation's turns become arcs (`_arcs.bundle_arcs`), ``"User: …\\nAssistant: …"``,
timed by their messages (the conversation's own time where a message has none), with the
conversation's id and title in every chunk's attributes and its id as the chunk's
`session_key`: the ingest gives each conversation a session of its own. An arc's byte and line
ranges are its conversation's place in the file, so a citation re-reads that conversation.

The array is read element by element from the stream, never whole. An export that is not
valid JSON, is not an array of conversations, or holds a conversation that is not shaped like
its service's raises `InvalidInput` naming the line and the conversation at fault; the ingest
then writes nothing of the file.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal

from services.corpus.core._arcs import Place, ToolEvents, bundle_arcs
from services.corpus.core._dialog import (
    Event,
    Turn,
    list_field,
    parts_text,
    text_field,
    tool_call,
    tool_output,
    when_of,
)
from services.corpus.core.chunks import (
    DEFAULT_MAX_CHUNK_CHARS,
    ORIGIN_CHATGPT,
    ORIGIN_CLAUDE_AI,
    ChunkDraft,
    ChunkReport,
)
from services.runtime.errors import InvalidInput

ExportFormat = Literal["chatgpt", "claude_ai"]

READ_BYTES: Final = 64 * 1024
_SESSION_KEY_CHARS: Final = 64
_UNSAFE_KEY = re.compile(r"[^A-Za-z0-9_.-]+")
_WHITESPACE: Final = " \t\r\n"
_ESCAPED_BYTE: Final = re.compile("[\udc80-\udcff]")  # an invalid byte, surrogate-escaped
_THINKING_TYPES: Final = frozenset({"thoughts", "reasoning_recap"})
_CONTEXT_TYPES: Final = frozenset({"user_editable_context", "model_editable_context"})


def sniff_export(head: bytes) -> ExportFormat | None:
    """Which service's export a body's first bytes look like, if any."""
    body = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not body.startswith(b"["):
        return None
    if not body[1:].lstrip().startswith(b"{"):
        return None
    if b'"mapping"' in body and (b'"current_node"' in body or b'"create_time"' in body):
        return "chatgpt"
    if b'"chat_messages"' in body and b'"uuid"' in body:
        return "claude_ai"
    return None


@dataclass(frozen=True, slots=True)
class Element:
    """One element of a JSON array with its place in the file."""

    index: int  # 1-based
    value: Any
    place: Place


class _ArrayReader:
    """A JSON array read from a byte stream one element at a time, with byte and line places."""

    def __init__(self, stream: Any, name: str, report: ChunkReport) -> None:
        self._stream = stream
        self._name = name
        self._report = report
        # Invalid bytes become lone surrogates, so that every character maps back to its bytes.
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="surrogateescape")
        self._buf = ""
        self._byte = 0  # byte offset of _buf[0]
        self._line = 1  # line number of _buf[0]
        self._eof = False
        self._read = READ_BYTES

    def _fill(self) -> bool:
        """Read more of the body; False at its end."""
        if self._eof:
            return False
        block = self._stream.read(self._read)
        if not block:
            self._buf += self._decoder.decode(b"", final=True)
            self._eof = True
            return True
        self._buf += self._decoder.decode(block)
        return True

    def _advance(self, count: int) -> None:
        consumed = self._buf[:count]
        self._byte += len(consumed.encode("utf-8", "surrogateescape"))
        self._line += consumed.count("\n")
        self._buf = self._buf[count:]

    def _skip_space(self) -> str:
        """The next significant character ("" at the end of the body), consuming whitespace."""
        while True:
            stripped = len(self._buf) - len(self._buf.lstrip(_WHITESPACE))
            self._advance(stripped)
            if self._buf:
                return self._buf[0]
            if not self._fill():
                return ""

    def _fail(self, what: str, *, at: int = 0, element: int | None = None) -> InvalidInput:
        line = self._line + self._buf.count("\n", 0, at)
        where = f" (conversation {element})" if element is not None else ""
        return InvalidInput(f"{self._name}: {what} at line {line}{where}", field="file")

    def elements(self) -> Iterator[Element]:
        self._fill()
        if self._buf.startswith("\ufeff"):
            self._advance(1)  # a byte order mark: three bytes, no line
        first = self._skip_space()
        if first != "[":
            raise self._fail("a chat export is a JSON array of conversations; found no '['")
        self._advance(1)
        index = 0
        while True:
            found = self._skip_space()
            if found == "]":
                self._advance(1)
                if self._skip_space():
                    raise self._fail("text after the end of the array")
                return
            if index:
                if found != ",":
                    raise self._fail("expected ',' or ']' between conversations", element=index)
                self._advance(1)
                found = self._skip_space()
            if not found:
                raise self._fail("the export ends before its array closes", element=index + 1)
            index += 1
            yield self._element(index)

    def _element(self, index: int) -> Element:
        decoder = json.JSONDecoder()
        try:
            while True:
                try:
                    value, end = decoder.raw_decode(self._buf)
                    break
                except json.JSONDecodeError as error:
                    if self._fill():
                        self._read = min(self._read * 2, 16 << 20)
                        continue
                    raise self._fail(
                        f"not valid JSON ({error.msg})", at=error.pos, element=index
                    ) from None
            text = self._buf[:end]
            start_byte, start_line = self._byte, self._line
            self._advance(end)
            replaced = len(_ESCAPED_BYTE.findall(text))
            if replaced:  # invalid UTF-8 read as lone surrogates: replaced, as files are
                self._report.invalid_utf8_replacements += replaced
                clean = text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
                value = json.loads(clean)
        except RecursionError:
            raise self._fail("nested too deeply to read", element=index) from None
        self._read = READ_BYTES
        return Element(index, value, Place(start_byte, self._byte, start_line, self._line))


def read_export(stream: Any, *, name: str, report: ChunkReport) -> Iterator[Element]:
    """The conversations of an export, one at a time, with their places in the file."""
    return _ArrayReader(stream, name, report).elements()


# ---------------------------------------------------------------- one conversation


@dataclass(frozen=True, slots=True)
class Conversation:
    key: str  # the session key: the export's own id, made safe
    conversation_id: str
    title: str
    created: datetime | None
    events: list[Event]


def _session_key(raw: Any, index: int) -> str:
    text = _UNSAFE_KEY.sub("-", str(raw or "")).strip("-.")[:_SESSION_KEY_CHARS]
    return text or f"conversation-{index}"


def _invalid(name: str, element: Element, what: str) -> InvalidInput:
    value = element.value
    label = ""
    if isinstance(value, dict):
        title = value.get("title") or value.get("name")
        if isinstance(title, str) and title:
            label = f" {title[:60]!r}"
    return InvalidInput(
        f"{name}: conversation {element.index}{label} (line {element.place.line_start}): {what}",
        field="file",
    )


def _chatgpt_node(mapping: dict[str, Any], node_id: Any) -> dict[str, Any] | None:
    node = mapping.get(node_id) if isinstance(node_id, str) else None
    return node if isinstance(node, dict) else None


def _chatgpt_path(mapping: dict[str, Any], current: Any) -> list[dict[str, Any]]:
    """The nodes from the root to the current node (the branch the user last saw)."""
    node_id = current if _chatgpt_node(mapping, current) is not None else None
    if node_id is None:
        # No current node: follow the last child from the root, as the app shows it.
        roots = [n for n in mapping.values() if isinstance(n, dict) and not n.get("parent")]
        node_id = roots[0].get("id") if roots else None
        while (node := _chatgpt_node(mapping, node_id)) is not None:
            children = list_field(node, "children")
            if not children or _chatgpt_node(mapping, children[-1]) is None:
                break
            node_id = children[-1]
    path: list[dict[str, Any]] = []
    seen: set[str] = set()
    while (node := _chatgpt_node(mapping, node_id)) is not None:
        if node_id in seen:
            raise ValueError(f"its message tree loops at node {node_id!r}")
        seen.add(str(node_id))
        path.append(node)
        node_id = node.get("parent")
    path.reverse()
    return path


def _chatgpt_text(content: dict[str, Any]) -> str:
    kind = text_field(content, "content_type")
    if kind in ("text", "multimodal_text"):
        texts = []
        for part in list_field(content, "parts"):
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, dict):
                if isinstance(part.get("text"), str):
                    texts.append(part["text"])  # audio transcriptions
                elif "image" in text_field(part, "content_type"):
                    texts.append("[image]")
        return "\n".join(t for t in texts if t)
    for key in ("text", "result", "content"):
        if isinstance(content.get(key), str):
            return str(content[key])
    return ""


def _chatgpt_events(
    nodes: list[dict[str, Any]], created: datetime | None, report: ChunkReport
) -> list[Event]:
    events: list[Event] = []
    for node in nodes:
        message = node.get("message")
        if message is None:
            continue  # the root
        if not isinstance(message, dict):
            raise ValueError(f"node {node.get('id')!r} has a message that is not an object")
        author = message.get("author")
        content = message.get("content")
        if not isinstance(author, dict) or not isinstance(content, dict):
            raise ValueError(f"message {message.get('id')!r} has no author or content object")
        role = text_field(author, "role")
        kind = text_field(content, "content_type")
        metadata = message.get("metadata")
        hidden = isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation")
        when = when_of(message.get("create_time")) or created
        if kind in _THINKING_TYPES:
            report.skipped_thinking_blocks += 1
            continue
        if role == "system" or kind in _CONTEXT_TYPES or hidden:
            report.skipped_meta_lines += 1
            continue
        text = _chatgpt_text(content).strip()
        recipient = text_field(message, "recipient") or "all"
        if role == "assistant" and recipient != "all":
            events.append(tool_call(recipient, text))
        elif role == "tool":
            events.append(tool_output(text, error=kind == "system_error"))
        elif role in ("user", "assistant") and text:
            side: Literal["user", "assistant"] = "user" if role == "user" else "assistant"
            events.append(Turn(side, "User" if side == "user" else "Assistant", text, when))
        else:
            report.skipped_meta_lines += 1
    return events


def _conversation(element: Element, name: str, key: str, kind: type, service: str) -> Any:
    """The conversation object and its `key` field (of `kind`), or InvalidInput saying why."""
    value = element.value
    if not isinstance(value, dict):
        raise _invalid(name, element, "is not an object")
    found = value.get(key)
    if not isinstance(found, kind):
        shape = "object" if kind is dict else "list"
        raise _invalid(name, element, f"has no {key!r} {shape} (not a {service} conversation)")
    return value, found


def _chatgpt(element: Element, name: str, report: ChunkReport) -> Conversation:
    value, mapping = _conversation(element, name, "mapping", dict, "ChatGPT")
    created = when_of(value.get("create_time"))
    try:
        events = _chatgpt_events(_chatgpt_path(mapping, value.get("current_node")), created, report)
    except ValueError as error:
        raise _invalid(name, element, str(error)) from None
    conversation_id = str(value.get("conversation_id") or value.get("id") or "")
    return Conversation(
        key=_session_key(conversation_id, element.index),
        conversation_id=conversation_id,
        title=str(value.get("title") or ""),
        created=created,
        events=events,
    )


def _claude_blocks(message: dict[str, Any], report: ChunkReport) -> tuple[str, list[Event]]:
    blocks = message.get("content")
    if not isinstance(blocks, list) or not blocks:
        return str(message.get("text") or ""), []
    texts: list[str] = []
    tools: list[Event] = []
    for block in blocks:
        kind = text_field(block)
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind in ("thinking", "redacted_thinking"):
            report.skipped_thinking_blocks += 1
        elif kind == "tool_use":
            tools.append(tool_call(block.get("name"), block.get("input")))
        elif kind == "tool_result":
            output = parts_text(block.get("content"))
            tools.append(tool_output(output, error=bool(block.get("is_error"))))
    return "\n".join(t for t in texts if t), tools


def _claude(element: Element, name: str, report: ChunkReport) -> Conversation:
    value, messages = _conversation(element, name, "chat_messages", list, "Claude")
    created = when_of(value.get("created_at"))
    events: list[Event] = []
    for number, message in enumerate(messages, 1):
        if not isinstance(message, dict) or message.get("sender") not in ("human", "assistant"):
            raise _invalid(name, element, f"message {number} has no sender 'human' or 'assistant'")
        side: Literal["user", "assistant"] = "user" if message["sender"] == "human" else "assistant"
        text, tools = _claude_blocks(message, report)
        for attachment in list_field(message, "attachments") + list_field(message, "files"):
            if text_field(attachment, "file_name"):
                text += f"\n[attachment: {text_field(attachment, 'file_name')}]"
        text = text.strip()
        when = when_of(message.get("created_at")) or created
        if text:
            events.append(Turn(side, "User" if side == "user" else "Assistant", text, when))
        events.extend(tools)
        if not text and not tools:
            report.skipped_meta_lines += 1
    conversation_id = str(value.get("uuid") or "")
    return Conversation(
        key=_session_key(conversation_id, element.index),
        conversation_id=conversation_id,
        title=str(value.get("name") or ""),
        created=created,
        events=events,
    )


def read_conversations(
    stream: Any, *, export: ExportFormat, name: str, report: ChunkReport
) -> Iterator[tuple[Conversation, Place]]:
    """Every conversation of an export with its place; raises InvalidInput on a bad one."""
    parse = _chatgpt if export == "chatgpt" else _claude
    for element in read_export(stream, name=name, report=report):
        yield parse(element, name, report), element.place


def chunk_export(
    stream: Any,
    *,
    export: ExportFormat,
    name: str,
    report: ChunkReport,
    max_chunk_chars: int = DEFAULT_MAX_CHUNK_CHARS,
    tool_events: ToolEvents = "summarise",
) -> Iterator[ChunkDraft]:
    """The arcs of every conversation of an export, each conversation its own session."""
    origin = ORIGIN_CHATGPT if export == "chatgpt" else ORIGIN_CLAUDE_AI
    ordinal = 0
    keys: set[str] = set()
    for conversation, place in read_conversations(stream, export=export, name=name, report=report):
        key = conversation.key
        if key in keys:  # the same id twice in one export: keep both, apart
            key = f"{key}-{len(keys)}"
        keys.add(key)
        attributes = {"conversation_id": conversation.conversation_id}
        if conversation.title:
            attributes["conversation_title"] = conversation.title[:200]
        if conversation.created is not None:
            attributes["conversation_started"] = conversation.created.astimezone(UTC).isoformat()
        for draft in bundle_arcs(
            ((event, place) for event in conversation.events),
            origin_kind=origin,
            report=report,
            max_chunk_chars=max_chunk_chars,
            tool_events=tool_events,
            first_ordinal=ordinal,
            attributes=attributes,
            session_key=key,
        ):
            ordinal = draft.ordinal + 1
            yield draft
