"""Drawers as JSONL for export and import: backups, migrations, evaluation sets.

Pure: bytes and protos in, bytes and protos out. The proto `engram.v1.Drawer` is the single
source of truth for the shape; lines are `google.protobuf.json_format` with proto field names,
every field written (defaults included), enums by name, timestamps as RFC 3339.

Decisions:

- Export drops the read-only computed field `effective_salience`: it is derived at read time
  and would go stale in a backup. Import accepts it (a dump of search results is a fair
  evaluation set) and discards it for the same reason. `sessions` (the session descriptors the
  authoring tier writes) is stored data and travels with the drawer.
- Lines are ASCII: non-ASCII text is \\u-escaped, so no reader that splits on Unicode line
  separators (U+2028, U+0085) can break a drawer in two.
- Import validates every line and reports every bad one (up to `max_errors` in detail, the
  rest counted); the caller writes nothing when any line is bad.
- Where proto3 cannot tell "unset" from "zero", unset wins over rejection. Salience 0 means
  the line left it out: it stays 0 here and the writer fills in the tier's configured
  `initial_salience`, exactly as for an IndexDrawers call, so the default lives in one place
  (anything else outside [0.1, 1.0] is an error). pin_status UNSPECIFIED becomes ACTIVE; an
  unset last_activity_at becomes created_at, the anchor decay needs; a present but blank
  signature is cleared.
- Unknown fields and duplicate keys in a line are errors: an import that silently drops a
  misspelt field loses data the operator believes was loaded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from engram.v1 import common_pb2
from google.protobuf import json_format

from services.retrieval.core.constants import SALIENCE_CAP, SALIENCE_FLOOR
from services.retrieval.core.excerpts import excerpt_problem

Drawer = common_pb2.Drawer

MAX_LINE_BYTES = 1024 * 1024
MAX_ID_LENGTH = 128
DEFAULT_MAX_ERRORS = 1000
# Export chunks: whole lines, each chunk about this size (a single longer line goes alone).
DEFAULT_CHUNK_BYTES = 64 * 1024

_READ_ONLY_FIELDS = ("effective_salience",)
_ID_PATTERN = re.compile(r"^[A-Za-z0-9._:-]+$")
_KNOWN_PIN_STATUSES = frozenset(common_pb2.PinStatus.values())


@dataclass(frozen=True)
class LineError:
    """A bad input line: its 1-based number and what is wrong with it."""

    line: int
    message: str


@dataclass(frozen=True)
class ParseResult:
    """Drawers of the good lines, and the bad lines; write nothing unless `ok`.

    `line_numbers[i]` is the 1-based input line that `drawers[i]` came from.
    """

    drawers: list[Drawer] = field(default_factory=list)
    line_numbers: list[int] = field(default_factory=list)
    errors: list[LineError] = field(default_factory=list)
    errors_not_listed: int = 0

    @property
    def ok(self) -> bool:
        """True when no line was bad."""
        return not self.errors and not self.errors_not_listed

    @property
    def error_count(self) -> int:
        """Every bad line, listed or not."""
        return len(self.errors) + self.errors_not_listed


def _clear_read_only(drawer: Drawer) -> None:
    drawer.ClearField("effective_salience")


def drawer_to_line(drawer: Drawer) -> str:
    """`drawer` as one JSON line (no newline) with every stored field, read-only ones dropped."""
    stored = Drawer()
    stored.CopyFrom(drawer)
    _clear_read_only(stored)
    payload = json_format.MessageToDict(
        stored,
        preserving_proto_field_name=True,
        always_print_fields_with_no_presence=True,
    )
    for name in _READ_ONLY_FIELDS:
        payload.pop(name, None)
    return json.dumps(payload, ensure_ascii=True, separators=(",", ":"))


def drawers_to_chunks(
    drawers: Iterable[Drawer], *, chunk_bytes: int = DEFAULT_CHUNK_BYTES
) -> Iterator[bytes]:
    """JSONL bytes of `drawers` in chunks of whole lines, each about `chunk_bytes` long."""
    buffer = bytearray()
    for drawer in drawers:
        buffer += drawer_to_line(drawer).encode("ascii") + b"\n"
        if len(buffer) >= chunk_bytes:
            yield bytes(buffer)
            buffer.clear()
    if buffer:
        yield bytes(buffer)


def split_lines(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Lines of a JSONL byte stream that arrives in arbitrary chunks (newlines not kept).

    A final line without a trailing newline is still a line.
    """
    pending = b""
    for chunk in chunks:
        pending += chunk
        *lines, pending = pending.split(b"\n")
        yield from lines
    if pending:
        yield pending


def _reject_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f'duplicate key "{key}"')
        result[key] = value
    return result


def _first_line(message: str) -> str:
    # json_format appends a list of every available field on a second line; the first line
    # already names the culprit.
    return message.splitlines()[0] if message else message


def _decode(raw: bytes | str) -> str:
    """The text of one line; ValueError for an oversized or non-UTF-8 line."""
    data = raw.encode("utf-8", errors="surrogatepass") if isinstance(raw, str) else raw
    if len(data) > MAX_LINE_BYTES:
        raise ValueError(
            f"line is {len(data):,} bytes; the limit is {MAX_LINE_BYTES:,}: "
            "shorten the drawer's content or attributes"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"line is not valid UTF-8 (byte {error.start})") from error


def _to_drawer(text: str) -> Drawer:
    """Parse one line's JSON into a Drawer; ValueError with a message for people."""
    try:
        payload = json.loads(text, object_pairs_hook=_reject_duplicate_keys)
    except RecursionError as error:
        raise ValueError("line is nested too deeply to be a drawer") from error
    except ValueError as error:
        raise ValueError(f"not valid JSON: {error}") from error
    if not isinstance(payload, dict):
        raise ValueError(f"a line must be one JSON object; got {type(payload).__name__}")
    drawer = Drawer()
    try:
        json_format.ParseDict(payload, drawer, ignore_unknown_fields=False)
    except json_format.ParseError as error:
        raise ValueError(_first_line(str(error))) from error
    return drawer


def _problems(drawer: Drawer, max_content_chars: int | None) -> list[str]:
    """Every rule `drawer` breaks, as messages; empty when it is valid."""
    problems: list[str] = []
    if not drawer.id:
        problems.append("id is empty")
    elif len(drawer.id) > MAX_ID_LENGTH or not _ID_PATTERN.match(drawer.id):
        problems.append(
            f"id {drawer.id[:40]!r} must be 1-{MAX_ID_LENGTH} characters of A-Z a-z 0-9 . _ : -"
        )
    if not drawer.content.strip():
        problems.append("content is empty")
    elif max_content_chars is not None and len(drawer.content) > max_content_chars:
        problems.append(
            f"content is {len(drawer.content):,} characters; a drawer holds at most "
            f"{max_content_chars:,}"
        )
    if not drawer.memory_type.strip():
        problems.append("memory_type is empty")
    salience = drawer.salience
    if salience != 0 and not (SALIENCE_FLOOR <= salience <= SALIENCE_CAP):
        problems.append(
            f"salience {salience} is outside [{SALIENCE_FLOOR}, {SALIENCE_CAP}] "
            "(leave it out for the store's initial salience)"
        )
    if drawer.HasField("confidence") and not (0.0 <= drawer.confidence <= 1.0):
        problems.append(f"confidence {drawer.confidence} is outside [0, 1]")
    if drawer.pin_status not in _KNOWN_PIN_STATUSES:
        problems.append(f"pin_status {drawer.pin_status} is not a known PinStatus")
    if not drawer.HasField("created_at"):
        problems.append("created_at is missing")
    for index, arc in enumerate(drawer.derived_from):
        if not arc.raw_chunk_id or not arc.session_id:
            problems.append(f"derived_from[{index}] needs both raw_chunk_id and session_id")
    excerpts = excerpt_problem(drawer.derived_from)
    if excerpts is not None:
        problems.append(excerpts)
    return problems


def _normalise(drawer: Drawer) -> None:
    """Fill the fields proto3 reads as zero when a line leaves them out; see the module doc."""
    _clear_read_only(drawer)
    if drawer.pin_status == common_pb2.PIN_STATUS_UNSPECIFIED:
        drawer.pin_status = common_pb2.PIN_STATUS_ACTIVE
    if not drawer.HasField("last_activity_at"):
        drawer.last_activity_at.CopyFrom(drawer.created_at)
    if drawer.HasField("signature") and not drawer.signature.strip():
        drawer.ClearField("signature")


def parse_lines(
    lines: Iterable[bytes | str],
    *,
    max_errors: int = DEFAULT_MAX_ERRORS,
    max_content_chars: int | None = None,
) -> ParseResult:
    """Parse and validate JSONL drawer lines; every line is checked, blank lines skipped.

    Line numbers are 1-based positions in `lines`, blank ones included. Errors past
    `max_errors` are counted in `errors_not_listed` rather than listed. `max_content_chars`
    is the writer's content limit, checked here so an import fails before it writes.
    """
    drawers: list[Drawer] = []
    line_numbers: list[int] = []
    errors: list[LineError] = []
    not_listed = 0
    first_line_of: dict[str, int] = {}
    for number, raw in enumerate(lines, start=1):
        try:
            text = _decode(raw)
            if not text.strip():
                continue
            drawer = _to_drawer(text)
            problems = _problems(drawer, max_content_chars)
            if drawer.id in first_line_of:
                first = first_line_of[drawer.id]
                problems.append(f"duplicate id {drawer.id!r} (first on line {first})")
            elif drawer.id:
                # Recorded even for a line that is bad otherwise: its id is still taken.
                first_line_of[drawer.id] = number
            if problems:
                raise ValueError("; ".join(problems))
        except ValueError as error:
            if len(errors) < max_errors:
                errors.append(LineError(line=number, message=str(error)))
            else:
                not_listed += 1
            continue
        _normalise(drawer)
        drawers.append(drawer)
        line_numbers.append(number)
    return ParseResult(
        drawers=drawers, line_numbers=line_numbers, errors=errors, errors_not_listed=not_listed
    )
