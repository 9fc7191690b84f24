"""A command body from the wire: parsed without trusting its size or depth, its text checked,
then validated against its model; what is wrong is a `Refused` naming the field."""

from __future__ import annotations

import json
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from tidetower.engine.bounds import MAX_DEPTH, text_problem

C = TypeVar("C", bound=BaseModel)


class Refused(Exception):
    """A command that cannot be carried out: the field at fault and why."""

    def __init__(self, field: str | None, message: str, request: str | None = None) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.request = request
        """The request's id, when it is known before the body is (a body too deep to use)."""


def request_id(data: object) -> str | None:
    """The request's id, if it sent a usable one (replies carry it back); else None, and
    the reply still goes out, with no id."""
    if isinstance(data, dict):
        value = data.get("id")
        if isinstance(value, str) and 0 < len(value) <= 64 and text_problem(value) is None:
            return value
    return None


MAX_BODY_DEPTH = MAX_DEPTH + 1
"""How deep a command body may nest: its params or settings (MAX_DEPTH) inside the body."""


def parse_body(raw: bytes, max_bytes: int = 4096) -> object:
    """Return a command body's JSON object, or Refused saying why it is not one."""
    if len(raw) > max_bytes:
        raise Refused(None, f"command is {len(raw)} bytes; the limit is {max_bytes}")
    shape = BodyShape(raw)
    if shape.depth > MAX_BODY_DEPTH:
        request, key = shape.request(), shape.deepest_key
        if key is not None and key.isidentifier():
            raise Refused(
                key, f"{key} nests {shape.depth - 1} deep; the limit is {MAX_DEPTH}", request
            )
        raise Refused(
            None, f"command nests {shape.depth} deep; the limit is {MAX_BODY_DEPTH}", request
        )
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise Refused(None, f"command body is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise Refused(None, "command body must be a JSON object")
    return data


class BodyShape:
    """How the JSON in `raw` nests, read without parsing it (so no depth can exhaust the
    parser): the deepest level, the top-level key whose value nests deepest, and the body
    with its nested values left out, whose fields (the id) then parse at any depth."""

    def __init__(self, raw: bytes) -> None:
        self.depth = 0
        self.deepest_key: str | None = None
        self._raw, self._top, self._kept_from = raw, bytearray(), 0
        self._level, self._start = 0, 0
        self._key: str | None = None
        self._in_string = self._escaped = False
        for at, byte in enumerate(raw):
            if self._in_string:
                self._string_byte(at, byte)
            elif byte == 0x22:  # quote
                self._in_string, self._start = True, at + 1
            elif byte in (0x5B, 0x7B):  # [ {
                self._open(at)
            elif byte in (0x5D, 0x7D):  # ] }
                self._close(at)
        if self._level <= 1:
            self._top += raw[self._kept_from :]

    def _string_byte(self, at: int, byte: int) -> None:
        if self._escaped:
            self._escaped = False
        elif byte == 0x5C:  # backslash
            self._escaped = True
        elif byte == 0x22:
            self._in_string = False
            if self._level == 1:  # a key or a string value of the body: the key comes last
                self._key = self._raw[self._start : at].decode("utf-8", "replace")

    def _open(self, at: int) -> None:
        self._level += 1
        if self._level == 2:  # a nested value starts: the top keeps null in its place
            self._top += self._raw[self._kept_from : at] + b"null"
        if self._level > self.depth:
            self.depth = self._level
            self.deepest_key = self._key if self._level > 1 else None

    def _close(self, at: int) -> None:
        if self._level == 2:
            self._kept_from = at + 1
        self._level -= 1

    def request(self) -> str | None:
        """The body's id, if it has a usable one, read from its top level alone."""
        try:
            return request_id(json.loads(bytes(self._top).decode("utf-8")))
        except ValueError:  # not JSON (UnicodeDecodeError is one)
            return None


def check_text_everywhere(data: object, path: str = "") -> None:
    """Refused naming the first key or string of a parsed body that is not printable text
    (a lone surrogate, a control character): what cannot be stored or sent back."""
    if isinstance(data, str):
        problem = text_problem(data)
        if problem is not None:
            raise Refused(path or None, f"{path or 'command'} {problem}")
    elif isinstance(data, dict):
        for key, value in data.items():
            where = f"{path}.{key}" if path else str(key)
            if text_problem(key) is not None:
                shown = ascii(key)[:60]
                raise Refused(
                    path or None, f"{path or 'command'} has a key {shown} that is not text"
                )
            check_text_everywhere(value, where)
    elif isinstance(data, list):
        for index, item in enumerate(data):
            check_text_everywhere(item, f"{path}.{index}")


def checked(kind: type[C], data: object) -> C:
    """Return `data` checked as the command `kind`, or Refused naming the field."""
    try:
        return kind.model_validate(data)
    except ValidationError as error:
        raise _validation_refusal(error) from None


def _validation_refusal(error: ValidationError) -> Refused:
    """The first schema error as the field it names and pydantic's message."""
    first = error.errors()[0]
    field = ".".join(str(part) for part in first["loc"]) or None
    return Refused(field, f"{field}: {first['msg']}" if field else first["msg"])
