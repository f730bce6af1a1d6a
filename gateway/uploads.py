"""A multipart/form-data body read as it arrives, so a 50 MB upload is passed on piece by piece
and never held whole (FastAPI's `UploadFile` spools the entire file before the route runs).

Small fields (`folder`, `name`) must come before the `file` part: the tier's upload header
carries them and is sent first. curl sends parts in the order of its `-F` options.
"""

from __future__ import annotations

from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import Request

from gateway.errors import MalformedRequest

FILE_FIELD = "file"
TEXT_FIELDS = ("folder", "name")
_MAX_FIELD_BYTES = 4096

Event = tuple[str, Any]


class MultipartUpload:
    """The parts of one multipart body: the small fields, then the file's bytes."""

    def __init__(self, request: Request) -> None:
        kind, options = parse_options_header(request.headers.get("content-type", ""))
        boundary = options.get(b"boundary")
        if kind != b"multipart/form-data" or not boundary:
            raise MalformedRequest(
                "an upload is multipart/form-data with a `file` part "
                "(curl -F folder=notes -F file=@notes.md ...)",
                field="file",
            )
        self._chunks = request.stream().__aiter__()
        self._events: deque[Event] = deque()
        self._finished = False
        self._field = b""
        self._value = b""
        self._parser = MultipartParser(
            boundary,
            callbacks={
                "on_part_begin": lambda: self._events.append(("begin", None)),
                "on_header_field": self._on_header_field,
                "on_header_value": self._on_header_value,
                "on_header_end": self._on_header_end,
                "on_headers_finished": lambda: self._events.append(("headers_done", None)),
                "on_part_data": lambda data, start, end: self._events.append(
                    ("data", bytes(data[start:end]))
                ),
                "on_part_end": lambda: self._events.append(("end", None)),
            },
        )
        self.fields: dict[str, str] = {}
        self.filename = ""

    def _on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._field += data[start:end]

    def _on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def _on_header_end(self) -> None:
        # The value stays bytes: parameters such as a UTF-8 filename are decoded one by one.
        header = (self._field.decode("latin-1").lower(), self._value)
        self._events.append(("header", header))
        self._field, self._value = b"", b""

    async def _next(self) -> Event | None:
        while not self._events:
            if self._finished:
                return None
            try:
                chunk = await anext(self._chunks)
            except StopAsyncIteration:
                self._finished = True
                self._parser.finalize()
                continue
            try:
                self._parser.write(chunk)
            except MultipartParseError as error:
                raise MalformedRequest(f"the multipart body is malformed: {error}") from None
        return self._events.popleft()

    async def _part_name(self) -> str | None:
        """Advance past the next part's headers; its form name (None at the end of the body)."""
        headers: dict[str, bytes] = {}
        while (event := await self._next()) is not None:
            kind, value = event
            if kind == "begin":
                headers = {}
            elif kind == "header":
                headers[value[0]] = value[1]
            elif kind == "headers_done":
                break
        else:
            return None
        _, options = parse_options_header(headers.get("content-disposition", b""))
        name = _text(options.get(b"name", b""), "a form field name")
        if name == FILE_FIELD:
            self.filename = _text(options.get(b"filename", b""), "the file name")
        return name

    async def _value_of(self, name: str) -> str:
        value = bytearray()
        while (event := await self._next()) is not None and event[0] != "end":
            if event[0] == "data":
                value += event[1]
                if len(value) > _MAX_FIELD_BYTES:
                    raise MalformedRequest(f"form field {name!r} is too long", field=name)
        return _text(bytes(value), f"form field {name!r}")

    async def open_file(self) -> None:
        """Read the fields before the file part; stop where the file's bytes begin."""
        while True:
            name = await self._part_name()
            if name is None:
                raise MalformedRequest("the form has no `file` part", field=FILE_FIELD)
            if name == FILE_FIELD:
                return
            if name not in TEXT_FIELDS:
                raise MalformedRequest(
                    f"unknown form field {name!r} (an upload takes: {', '.join(TEXT_FIELDS)}, "
                    f"{FILE_FIELD})",
                    field=name,
                )
            self.fields[name] = await self._value_of(name)

    async def file_data(self) -> AsyncIterator[bytes]:
        """The file's bytes as they arrive; then checks that nothing but the end follows."""
        while (event := await self._next()) is not None and event[0] != "end":
            if event[0] == "data" and event[1]:
                yield event[1]
        following = await self._part_name()
        if following is not None:
            raise MalformedRequest(
                f"form field {following!r} comes after the file; put every field before "
                "`file` (one file per upload)",
                field=following,
            )


def _text(raw: bytes, what: str) -> str:
    """`raw` as UTF-8; a form part that is not is refused, not guessed at."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedRequest(f"{what} is not valid UTF-8") from None
