"""The MCP tool table: each tool is a name, the protobuf request it takes, the gateway
operation it calls, and a description that teaches the framing schema.

Input schemas are derived from the proto request messages (`gateway.proto_schema.schema_for`,
the same derivation the REST face uses) and then tightened for agents: every object is closed
(`additionalProperties: false`), the store is a plain `store` string (the caller's token
decides the tier, the gateway fills in the rest of StoreContext), `signature` carries the
authoring tier's `minLength`, required fields are marked, and `memory_type` / `intent` list
the type libraries' vocabularies. Nothing about a shape is written here a second time: a field
added to a request message reaches its tool without an edit to this file.

Arguments become the request and answers JSON through the gateway's one converter
(`gateway.protojson`: proto field names, enum names, RFC 3339 timestamps; answers compact).
"""

from __future__ import annotations

import base64
import binascii
import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, cast

from engram.v1 import (
    common_pb2,
    corpus_pb2,
    gateway_pb2,
    retrieval_pb2,
)
from google.protobuf.descriptor import Descriptor
from google.protobuf.message import Message
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

from gateway.core.operations import OPERATIONS, Operation, message_class
from gateway.mcp import framing
from gateway.proto_schema import required_paths, schema_for
from gateway.protojson import parse, to_json
from services.runtime.errors import InvalidInput
from services.vocabulary import library_for

Json = dict[str, Any]


# Where a tool's `store` argument goes in its request message.
STORE_CONTEXT: Final = "store"  # request.store.name (every tier request)
STORE_NAME_FIELD: Final = "name"  # request.name (the registry's GetStoreRequest)

# Request fields no agent should set: evaluation knobs of the ranker.
_RANKER_KNOBS: Final = ("ranker", "candidate_depth")
# `as_of` replays a past moment (evaluation, the dashboard): every listed field costs the
# agent's context.
_SEARCH_HIDES: Final = (*_RANKER_KNOBS, "as_of")
# Fields of a drawer an agent's write leaves to others: pinning is an admin's act (and
# engram_update_drawer's), attributes are the composer's bookkeeping.
# A draft's own `signature` is an answer field (dry runs show it); a write signs with
# engram_add_drawer_signed's top-level `signature`.
_WRITE_HIDES: Final = ("pin_status", "attributes", "drawer.signature")
_UINT32_MAX: Final = 2**32 - 1

# A listing that only wants facets asks for one drawer.
_FACETS_ONLY: Final[Json] = {"include_facets": True, "page": {"page_size": 1}}

# The body limit of the streamable HTTP transport (the SDK's default, which /mcp keeps).
MAX_MCP_BODY_BYTES: Final = DEFAULT_MAX_REQUEST_BODY_SIZE

# Upload content given as text (an agent's usual case) or as base64 bytes.
_UPLOAD_TEXT: Final = "content"
_UPLOAD_BYTES: Final = "data"


# Toolsets: an agent is offered the memory tools unless its connection asks for more
# (`/mcp?tools=memory,lifecycle` or `all`; engram-mcp: ENGRAM_MCP_TOOLS). Every listed tool
# costs the agent's context before its first call; any tool can be called either way.
MEMORY: Final = "memory"  # search, context packs, priming, writes, raw lookup
BROWSE: Final = "browse"  # reading around: drawers, wings, raw and source search, documents
LIFECYCLE: Final = "lifecycle"  # links, updates, consolidation
INGEST: Final = "ingest"  # raw sessions, uploads, ingest and compose jobs
TOOLSETS: Final = (MEMORY, BROWSE, LIFECYCLE, INGEST)
ALL_TOOLSETS: Final = "all"


def parse_toolsets(text: str) -> frozenset[str]:
    """``"memory,lifecycle"`` or ``"all"`` → the toolsets; InvalidInput naming the known ones."""
    names = {part.strip().lower() for part in text.split(",") if part.strip()}
    if ALL_TOOLSETS in names:
        return frozenset(TOOLSETS)
    unknown = names - set(TOOLSETS)
    if unknown or not names:
        raise InvalidInput(
            f"unknown toolset {sorted(unknown)[0] if unknown else text!r}; "
            f"toolsets: {', '.join(TOOLSETS)}, or {ALL_TOOLSETS}",
            field="tools",
        )
    return frozenset(names)


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool over one gateway operation."""

    name: str
    operation: str  # the operation (gateway/core/operations.py) the tool calls
    description: str
    # Where `store` goes: STORE_CONTEXT, STORE_NAME_FIELD, or None (no store argument).
    store: str | None = STORE_CONTEXT
    # The message the arguments describe, when not the request itself; with `nest`, the
    # arguments are parsed into this message at that field of the request.
    arguments: type[Message] | None = None
    nest: str | None = None
    # Top-level fields shown (None: all but the store); `hide` is removed at every depth, or
    # (a dotted path, "drawer.signature") from that nested message only.
    expose: tuple[str, ...] | None = None
    hide: tuple[str, ...] = ()
    # Request fields the tool always sets (merged under the arguments' own fields).
    fixed: Mapping[str, Any] = field(default_factory=dict)
    # Turns the operation's answer into the tool's JSON answer (default: the whole message).
    result: Callable[[Message], Json] | None = None
    # The request message, where it is not the operation's (an upload's header, not its
    # stream of chunks); otherwise read from the operation table.
    request_message: type[Message] | None = None
    toolset: str = MEMORY

    @property
    def declared(self) -> Operation:
        return OPERATIONS[self.operation]

    @property
    def request(self) -> type[Message]:
        """The proto request the operation takes."""
        if self.request_message is not None:
            return self.request_message
        return message_class(self.declared.request)

    @property
    def read_only(self) -> bool:
        return self.declared.effect == "reads"

    @property
    def argument_message(self) -> type[Message]:
        return self.arguments or self.request


# ---------------------------------------------------------------- answers


def _wings(answer: Message) -> Json:
    assert isinstance(answer, retrieval_pb2.ListDrawersResponse)
    return {
        "wings": [
            {"wing": w.wing, "drawers": w.count, "rooms": len(w.rooms)} for w in answer.facets.wings
        ],
        "drawers": answer.page.total,
    }


def _rooms(answer: Message) -> Json:
    assert isinstance(answer, retrieval_pb2.ListDrawersResponse)
    return {
        "rooms": [
            {"room": r.room, "wing": w.wing, "drawers": r.count}
            for w in answer.facets.wings
            for r in w.rooms
        ],
    }


def _store_info(answer: Message) -> Json:
    """The store's registry entry plus the vocabulary its mode gives it."""
    assert isinstance(answer, gateway_pb2.StoreInfo)
    mode = (
        "companion"
        if answer.spec.deployment_mode == common_pb2.DEPLOYMENT_MODE_COMPANION
        else "default"
    )
    info = to_json(answer, compact=True)
    info["library"] = framing.library_summary(library_for(mode))
    return info


# ---------------------------------------------------------------- descriptions


def _describe(*parts: str) -> str:
    return "\n\n".join(part.strip() for part in parts if part.strip())


def build_tools(
    min_signature_chars: int = framing.DEFAULT_MIN_SIGNATURE_CHARS,
) -> tuple[ToolSpec, ...]:
    """Every MCP tool, in the order they are listed."""
    return (
        ToolSpec(
            name="engram_search",
            operation="search",
            hide=_SEARCH_HIDES,
            description=_describe(
                "Search the store's drawers (framed memories) for those that answer a "
                "question, ranked by similarity re-weighted by type × intent, pin status, "
                "salience and confidence; filter by wing, room or memory_types.",
                framing.SILENCE_BRIEF,
                framing.INTENTS_BRIEF,
                "Report the drawers you used with engram_record_retrieval.",
            ),
        ),
        ToolSpec(
            name="engram_search_batch",
            toolset=BROWSE,
            operation="search_batch",
            hide=_RANKER_KNOBS,
            description=_describe(
                "Several engram_search queries against one store in one call; `searches` "
                "takes the same fields as engram_search, answers come back in order.",
                framing.SILENCE_BRIEF,
            ),
        ),
        ToolSpec(
            name="engram_context_pack",
            operation="build_context_pack",
            hide=("as_of",),
            description=_describe(
                "The best drawers for a goal as one compact text with a provenance header "
                "each, sized to a token budget (0 = your tier's). Describe what you are about "
                "to do, not everything that might be relevant.",
                framing.SILENCE_BRIEF,
            ),
        ),
        ToolSpec(
            name="engram_prime",
            operation="prime",
            hide=("as_of",),
            description=_describe(
                "Call once at the start of a session: the few drawers that bind it (pinned and "
                "signed first; with a `context`, what a search for it reaches), rendered like "
                "a context pack. Search for anything else when you need it.",
            ),
        ),
        ToolSpec(
            name="engram_record_retrieval",
            operation="record_retrieval",
            description=_describe(
                "Report the drawers from a search you actually used (not all you were shown): "
                "their salience rises. A use counts once per search that returned it to you "
                "in the last 24 hours; others come back in `refused`.",
            ),
        ),
        ToolSpec(
            name="engram_add_drawer",
            operation="add_drawer",
            hide=_WRITE_HIDES,
            description=_describe(
                "Write an ambient memory: context worth keeping that is not a canonical claim "
                "(decisions, directives, settled facts: engram_add_drawer_signed). Frame it as "
                "the instructions say: 1–3 sentences, third person, naming who. A near-copy "
                "comes back as `duplicate`; `warnings` say what will read badly; name the "
                "drawers it replaces in `supersedes`.",
            ),
        ),
        ToolSpec(
            name="engram_add_drawer_signed",
            operation="add_drawer_signed",
            hide=_WRITE_HIDES,
            description=_describe(
                "Write a canonical memory — a decision, directive or settled fact later "
                "questions should resolve to — signed with a distinctive phrase of at least "
                f"{min_signature_chars} characters copied verbatim from its content (whole "
                "words, case kept). Framed and filed as engram_add_drawer says.",
            ),
        ),
        ToolSpec(
            name="engram_update_drawer",
            toolset=LIFECYCLE,
            operation="update_drawer",
            description=_describe(
                "Change a drawer: fields that are set replace the current ones (content is "
                "re-embedded); `reason` goes to the drawer's provenance log. Deprecate a "
                "superseded memory (pin_status) rather than deleting it, so its history "
                "stays answerable. The whole drawer is validated again.",
                framing.PINS_BRIEF,
                framing.WINGS_BRIEF,
            ),
        ),
        ToolSpec(
            name="engram_get_drawer",
            toolset=BROWSE,
            operation="get_drawer",
            description=_describe(
                "Read one drawer by id, with its provenance fields and the raw sessions it "
                "was composed from (`sessions`).",
            ),
        ),
        ToolSpec(
            name="engram_link_drawers",
            toolset=LIFECYCLE,
            operation="create_link",
            description=_describe(
                "Link two drawers with what one says of the other, directed from `from_id` "
                "to `to_id`: supersedes (the newer decision replaces the older one), "
                "caused_by, relates_to, implements, reverts, contradicts; `evidence_ids` "
                "name drawers that support it. Both ends must exist. A link holds from "
                "`valid_from` (now) until it is ended (engram_end_link).",
            ),
        ),
        ToolSpec(
            name="engram_end_link",
            toolset=LIFECYCLE,
            operation="end_link",
            description=_describe(
                "End a link (it stops holding from `valid_to`, now by default, and stays "
                "listed as history).",
            ),
        ),
        ToolSpec(
            name="engram_drawer_links",
            toolset=LIFECYCLE,
            operation="list_links",
            description=_describe(
                "A drawer's links, both ends, oldest first; `types` narrows them and `as_of` "
                "keeps only those holding at that time.",
            ),
        ),
        ToolSpec(
            name="engram_traverse_links",
            toolset=LIFECYCLE,
            operation="traverse_links",
            description=_describe(
                "Walk the links from a drawer, breadth first, `depth` links away (2; at most "
                "5), by `types`, `direction` and `as_of`: e.g. the chain of decisions that "
                "superseded one another.",
            ),
        ),
        ToolSpec(
            name="engram_list_wings",
            toolset=BROWSE,
            operation="list_drawers",
            expose=(),
            fixed=_FACETS_ONLY,
            result=_wings,
            description=_describe(
                "List the store's wings with how many drawers and rooms each holds. Call it "
                "before writing, and reuse a wing rather than opening a near-synonym.",
                framing.WINGS_BRIEF,
            ),
        ),
        ToolSpec(
            name="engram_list_rooms",
            toolset=BROWSE,
            operation="list_drawers",
            arguments=retrieval_pb2.DrawerFilter,
            nest="filter",
            expose=("wing",),
            fixed=_FACETS_ONLY,
            result=_rooms,
            description=_describe(
                "The store's rooms (of one wing, or all) with drawer counts: file a memory in "
                "the room of the identity it is about, and reuse rooms and wings.",
            ),
        ),
        ToolSpec(
            name="engram_search_raw",
            toolset=BROWSE,
            operation="search_raw",
            description=_describe(
                "Search raw memories: the unframed, verbatim chunks of ingested files and "
                "recorded sessions (not drawers). Use it to check what was actually said, "
                "with citation anchors (file, lines, page); engram_expand_raw shows the "
                "surrounding chunks. A raw chunk is evidence, not a framed memory.",
                framing.SILENCE_BRIEF,
            ),
        ),
        ToolSpec(
            name="engram_expand_raw",
            operation="expand_raw",
            description=_describe(
                "The verbatim raw chunk a memory came from, with `before`/`after` neighbours "
                "of its session: by `chunk_id`, or by `session_id` and `ordinal` (a drawer's "
                "derived_from, a context pack's session; 0 is the first).",
            ),
        ),
        ToolSpec(
            name="engram_add_raw_memory",
            toolset=INGEST,
            operation="add_raw_memory",
            description=_describe(
                "Record one raw memory (verbatim, unframed) in the raw tier; it does not "
                "enter the drawer pool until drawers are composed from it "
                "(engram_compose_from_raw). Leave session_id empty to start a new session.",
            ),
        ),
        ToolSpec(
            name="engram_add_raw_session",
            toolset=INGEST,
            operation="add_raw_session",
            description=_describe(
                "Record a conversation (turns of role and content) as a raw session, "
                "verbatim; bundle_turn_pairs keeps a user turn and its reply in one chunk. "
                "Compose drawers from it afterwards with engram_compose_from_raw.",
            ),
        ),
        ToolSpec(
            name="engram_search_source",
            toolset=BROWSE,
            operation="search_source",
            description=_describe(
                "Search synced source files (code and docs): a separate surface from "
                "memories, answering 'where is this in the source', with paths and line "
                "ranges. Set hybrid to also match identifiers and file names by keyword.",
            ),
        ),
        ToolSpec(
            name="engram_query_document",
            toolset=BROWSE,
            operation="query_document",
            description=_describe(
                "Look inside one stored document: spans matching `pattern` (a substring, or "
                "a regex with `regex`) and/or the windows most similar to `semantic_query`, "
                "within a character budget.",
            ),
        ),
        ToolSpec(
            name="engram_upload_file",
            toolset=INGEST,
            operation="upload_file",
            request_message=corpus_pb2.UploadFileHeader,
            expose=("name", "folder"),
            description=_describe(
                "Upload a file into the store's corpus (markdown, text, JSONL transcripts, "
                f"PDF): give `{_UPLOAD_TEXT}` as text, or `{_UPLOAD_BYTES}` as base64 bytes. "
                "Uploading derives nothing yet: ingest it with engram_ingest_files, then "
                "compose drawers with engram_compose_from_raw. An MCP request carries at most "
                f"{MAX_MCP_BODY_BYTES // (1024 * 1024)} MiB: larger files go through the REST "
                "upload (POST /v1/stores/{store}/files, multipart).",
            ),
        ),
        ToolSpec(
            name="engram_ingest_files",
            toolset=INGEST,
            operation="ingest_files",
            description=_describe(
                "Ingest uploaded files into raw memories (chunked, embedded) as a background "
                "job; follow it with engram_job_status.",
            ),
        ),
        ToolSpec(
            name="engram_compose_from_raw",
            toolset=INGEST,
            operation="compose",
            description=_describe(
                "Compose framed drawers from raw sessions (session_ids) or from the sessions "
                "of ingested files (file_ids) as a background job; the store's authoring "
                "invoker frames each session into third-person drawers linked back to their "
                "raw chunks. Follow it with engram_job_status. allow_new_wing lets composed "
                "drawers open wings the store does not have yet.",
            ),
        ),
        ToolSpec(
            name="engram_consolidate",
            toolset=LIFECYCLE,
            operation="consolidate",
            description=_describe(
                "Find drawers of a room (or wing, or the whole store) that say the same thing "
                "and propose one drawer for each group, as a background job (follow it with "
                "engram_job_status: the result lists every proposal). A dry run unless "
                "`apply`; with `apply`, `proposal_ids` choose which (none: every mergeable "
                "one). Groups whose numbers, names or negations differ are flagged, never "
                "merged. An applied merge replaces its sources in search (they are linked and "
                "deprecated); an admin can undo it.",
            ),
        ),
        ToolSpec(
            name="engram_job_status",
            toolset=INGEST,
            operation="get_job",
            store=None,
            description=_describe(
                "The state and progress of a background job (ingest or compose): "
                "JOB_STATE_QUEUED, RUNNING, DONE, FAILED or CANCELLED, with per-item errors."
            ),
        ),
        ToolSpec(
            name="engram_list_stores",
            operation="list_stores",
            store=None,
            description=_describe(
                "The stores this token may use, with mode and drawer count; other tools take "
                "one of these names as `store`."
            ),
        ),
        ToolSpec(
            name="engram_store_info",
            toolset=BROWSE,
            operation="get_store",
            store=STORE_NAME_FIELD,
            result=_store_info,
            description=_describe(
                "One store's settings and its vocabulary: `library` gives the memory types "
                "and intents of the store's deployment mode — the values memory_type and "
                "intent take in this store.",
                framing.TYPES_BRIEF,
            ),
        ),
    )


# ---------------------------------------------------------------- input schemas


class SchemaError(RuntimeError):
    """A tool names a field its message does not have (a programming error)."""


def _inline_refs(schema: Json) -> Json:
    """Replace every local `$ref` by its definition, so each tool schema stands alone (some
    agents' clients do not resolve references). A recursive definition stays a reference."""
    defs: Json = {}
    for key in ("$defs", "definitions"):
        defs.update(schema.get(key, {}))

    def resolve(node: Any, trail: tuple[str, ...]) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                name = ref.rsplit("/", 1)[-1]
                if name in defs and name not in trail:
                    merged = {k: v for k, v in node.items() if k != "$ref"}
                    merged.update(copy.deepcopy(defs[name]))
                    merged.pop("title", None)  # the proto message name says nothing to agents
                    return resolve(merged, (*trail, name))
                return node
            return {k: resolve(v, trail) for k, v in node.items()}
        if isinstance(node, list):
            return [resolve(item, trail) for item in node]
        return node

    inlined: Json = resolve(
        {k: v for k, v in schema.items() if k not in ("$defs", "definitions")}, ()
    )
    text = repr(inlined)
    if "$ref" in text:  # something stayed a reference: keep the definitions it needs
        inlined["$defs"] = defs
    return inlined


def _objects(node: Any) -> list[Json]:
    """Every object schema at any depth (properties, items, combinators, definitions)."""
    found: list[Json] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if value.get("type") == "object" or "properties" in value:
                found.append(value)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(node)
    return found


def _is_message_object(node: Json) -> bool:
    """A proto message (closed), as opposed to a map field (open, typed values)."""
    extra = node.get("additionalProperties")
    return "properties" in node or not isinstance(extra, dict)


def _descend(node: Json, name: str, path: str) -> Json:
    """The schema of field `name` of the object `node` (walking into array items)."""
    while "properties" not in node and isinstance(node.get("items"), dict):
        node = node["items"]
    properties = node.get("properties", {})
    if name not in properties:
        raise SchemaError(f"required path {path!r}: no field {name!r} in {sorted(properties)}")
    child: Json = properties[name]
    return child


def _require(schema: Json, path: str) -> None:
    *parents, leaf = path.split(".")
    node = schema
    for name in parents:
        node = _descend(node, name, path)
    while "properties" not in node and isinstance(node.get("items"), dict):
        node = node["items"]
    _descend(node, leaf, path)  # the field exists
    required: list[str] = node.setdefault("required", [])
    if leaf not in required:
        required.append(leaf)


def _describe_property(node: Json, text: str) -> None:
    if "description" not in node:
        node["description"] = text


def _tighten(schema: Json, spec: ToolSpec, min_signature_chars: int) -> None:
    """Close every message object, constrain the fields agents get wrong, mark required."""
    for hidden in (h for h in spec.hide if "." in h):  # one field of a nested message
        parent_path, _, leaf = hidden.rpartition(".")
        parent = schema
        for part in parent_path.split("."):
            parent = _descend(parent, part, hidden)
        parent.get("properties", {}).pop(leaf, None)
    for node in _objects(schema):
        properties: Json = node.get("properties", {})
        for hidden in (h for h in spec.hide if "." not in h):
            properties.pop(hidden, None)
            if hidden in node.get("required", []):
                node["required"].remove(hidden)
        if _is_message_object(node):
            node["additionalProperties"] = False
        for name, prop in properties.items():
            if not isinstance(prop, dict):
                continue
            if name == "signature":
                prop["minLength"] = min_signature_chars
                _describe_property(
                    prop,
                    f"distinctive phrase of at least {min_signature_chars} characters, "
                    "copied verbatim from the content",
                )
            elif name == "memory_type" and prop.get("type") == "string":
                # No enum: the store's mode decides which types it takes (the instructions
                # list both libraries; the tier refuses another with the store's own list).
                _describe_property(prop, "a type of the store's library (instructions)")
            elif name == "intent" and prop.get("type") == "string":
                _describe_property(prop, "kind of question, of the store's mode; empty = inferred")
            elif name == "room" and prop.get("type") == "string":
                _describe_property(prop, "wing/name")
            if prop.get("maximum") == _UINT32_MAX:
                del prop["maximum"]  # the proto's bound, never near what an agent asks
    for path in required_paths(cast(Descriptor, spec.argument_message.DESCRIPTOR)):
        _require(schema, path)


def input_schema(
    spec: ToolSpec, min_signature_chars: int = framing.DEFAULT_MIN_SIGNATURE_CHARS
) -> Json:
    """The tool's JSON Schema: derived from its proto message, then tightened."""
    descriptor = cast(Descriptor, spec.argument_message.DESCRIPTOR)
    names = [f.name for f in descriptor.fields]
    omit = {STORE_CONTEXT} if spec.store == STORE_CONTEXT else set()
    if spec.store == STORE_NAME_FIELD:
        omit.add(STORE_NAME_FIELD)
    if spec.expose is not None:
        unknown = set(spec.expose) - set(names)
        if unknown:
            raise SchemaError(f"{spec.name}: {descriptor.full_name} has no fields {unknown}")
        omit |= set(names) - set(spec.expose)
    omit &= set(names)
    schema = _inline_refs(schema_for(descriptor, omit=tuple(sorted(omit))))
    schema.pop("$schema", None)
    schema.pop("title", None)
    schema["type"] = "object"
    schema.setdefault("properties", {})
    _tighten(schema, spec, min_signature_chars)
    properties: Json = schema["properties"]
    if spec.name == "engram_upload_file":
        properties[_UPLOAD_TEXT] = {
            "type": "string",
            "description": "the file's content as text (UTF-8)",
        }
        properties[_UPLOAD_BYTES] = _upload_bytes_schema()
        schema["oneOf"] = [{"required": [_UPLOAD_TEXT]}, {"required": [_UPLOAD_BYTES]}]
    if spec.store is not None:
        properties["store"] = {"type": "string", "description": "from engram_list_stores"}
        required: list[str] = schema.setdefault("required", [])
        required.insert(0, "store")
    schema["additionalProperties"] = False
    if not schema.get("required"):
        schema.pop("required", None)
    return schema


def _upload_bytes_schema() -> Json:
    """The `data` bytes of an upload chunk, as the proto derivation spells bytes."""
    chunk = corpus_pb2.UploadFileChunk.DESCRIPTOR
    derived = _inline_refs(schema_for(chunk, omit=("header",)))
    prop: Json = dict(derived.get("properties", {}).get("data", {"type": "string"}))
    prop["description"] = "the file's bytes, base64-encoded"
    return prop


# ---------------------------------------------------------------- arguments → request


def build_request(spec: ToolSpec, arguments: Mapping[str, Any]) -> Message:
    """The proto request of one tool call (arguments already checked against the schema)."""
    args = dict(arguments)
    store = args.pop("store", None)
    if spec.name == "engram_upload_file":
        args.pop(_UPLOAD_TEXT, None)
        args.pop(_UPLOAD_BYTES, None)
    if spec.nest is not None:
        inner = parse(spec.argument_message, args)
        request = parse(spec.request, dict(spec.fixed))
        getattr(request, spec.nest).CopyFrom(inner)
    else:
        request = parse(spec.request, {**spec.fixed, **args})
    if spec.store == STORE_CONTEXT:
        request.store.name = str(store)  # type: ignore[attr-defined]
    elif spec.store == STORE_NAME_FIELD:
        request.name = str(store)  # type: ignore[attr-defined]
    return request


def upload_content(arguments: Mapping[str, Any]) -> bytes:
    """The bytes of an engram_upload_file call (text or base64)."""
    if _UPLOAD_TEXT in arguments:
        return str(arguments[_UPLOAD_TEXT]).encode("utf-8")
    try:
        return base64.b64decode(str(arguments.get(_UPLOAD_BYTES, "")), validate=True)
    except (binascii.Error, ValueError):
        raise InvalidInput("data is not valid base64", field=_UPLOAD_BYTES) from None
