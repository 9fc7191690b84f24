"""GM commands from `cmd/<name>`: checked against their schema, then applied to the table.

A malformed, oversized, unknown or refused command changes nothing; the reply says why.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from tidetower.engine.bounds import MAX_DEPTH, text_problem
from tidetower.engine.codec import dump, load
from tidetower.engine.dice import Die, DieError, DieKind, Roll
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.table import Table
from tidetower.mqtt.payloads import (
    COMMAND_TYPES,
    Command,
    CommandError,
    CommandResult,
    DeclareCommand,
    DieCommand,
    LearnCommand,
    RedoCommand,
    RereadCommand,
    RethrowCommand,
    RollCommand,
    SystemCommand,
    TeachCommand,
    TideCommand,
    UndoCommand,
)

Detail = dict[str, Any]
C = TypeVar("C", bound=Command)


log = logging.getLogger(__name__)

RETAINED = (
    "retained commands are not run (it would run again at every restart); "
    "it was cleared: send it again without the retain flag"
)


class TowerControls(Protocol):
    """What the read loop does for commands the Table cannot do alone."""

    def reread(self) -> None:
        """Read the tray again; raise ValueError if there is nothing to read."""

    def enter_die(self, index: int, die: str, value: int) -> None:
        """Set die `index` of the pending reading by hand; raise ValueError if impossible."""

    def drop_die(self, index: int) -> None:
        """Leave die `index` of the pending reading out: it is no die; raise ValueError if
        impossible."""

    def rethrow(self) -> None:
        """Discard the pending reading to throw again; raise ValueError if none is pending."""


class LearnControl(Protocol):
    """Learning from the GM's corrections (firmware's `Learner`)."""

    def learn(self) -> int:
        """Start learning in the background and return how many corrections it learns from;
        raise ValueError if it cannot start (too few, or learning already)."""


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


def validate(name: str, data: object) -> Command:
    """Return the command `name` checked against its schema, or Refused naming the field."""
    kind = COMMAND_TYPES.get(name)
    if kind is None:
        known = ", ".join(sorted(COMMAND_TYPES))
        raise Refused("command", f"unknown command {name!r}: known are {known}")
    return checked(kind, data)


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


# Commands the read loop carries out. They run outside the table's lock: the loop takes its
# own lock, then the table's (recording a roll), so holding the table's first could deadlock.
# Learning does not touch the table at all.
LOOP_COMMANDS = (DieCommand, RereadCommand, RethrowCommand, LearnCommand)

# The field of a refusal that names none (a bare DieError, a read loop's refusal).
_MAIN_FIELD: dict[type[BaseModel], str] = {
    SystemCommand: "name",
    RollCommand: "dice",
    DieCommand: "index",
}
# Where the engine's settings and params keys sit in each command's body.
_NESTED: dict[type[BaseModel], str] = {DeclareCommand: "params", SystemCommand: "settings"}


def wire_field(command: BaseModel, field: str | None) -> str | None:
    """The command field an engine refusal's `field` is: itself where the command has it,
    else under the command's params or settings, else the command's main field."""
    fields = type(command).model_fields
    nested = _NESTED.get(type(command))
    if field is None:
        return _MAIN_FIELD.get(type(command))
    if field in fields and field not in ("v", "id"):
        return field
    if field == nested:
        return field
    return f"{nested}.{field}" if nested else _MAIN_FIELD.get(type(command))


def refusal(command: BaseModel, error: Exception) -> Refused:
    """An engine or read-loop refusal of `command`, naming the field it is about."""
    field = error.field if isinstance(error, RuleError) else None
    return Refused(wire_field(command, field), str(error))


class CommandDesk:
    """The one command layer: MQTT, the buttons and the CLI all apply their commands here;
    table ones under the table's lock, loop ones through `controls`."""

    def __init__(
        self,
        table: Table,
        controls: TowerControls | None = None,
        learner: LearnControl | None = None,
        max_bytes: int = 4096,
        record: Callable[[Roll], Detail] | None = None,
    ) -> None:
        self.table = table
        self.controls = controls
        self.learner = learner
        self.lock = table.lock  # one table change at a time: read loop, button or command
        self.max_bytes = max_bytes
        self._record = record or self._record_roll

    def handle(self, name: str, raw: bytes) -> CommandResult:
        """The reply to one command; never raises for bad input."""
        data: object = None
        try:
            data = parse_body(raw, self.max_bytes)
            check_text_everywhere(data)
            model = validate(name, data)
            detail = self.apply(model)
        except Refused as refused:
            error = CommandError(field=refused.field, message=refused.message)
            request = refused.request or request_id(data)
            return CommandResult(id=request, command=name, ok=False, error=error)
        return CommandResult(id=model.id, command=name, ok=True, detail=detail)

    def answer(self, name: str, raw: bytes, retained: bool = False) -> CommandResult:
        """The reply to one message on `cmd/<name>`; never raises. A retained command is not
        run (it would run again at every restart); a bug is said in the reply, and logged."""
        if retained:
            return self._refused(name, raw, RETAINED)
        try:
            return self.handle(name, raw)
        except Exception as error:  # a bug, not bad input: the tower keeps running
            log.exception("command %s failed", name)
            return self._refused(name, raw, f"the tower failed on this command: {error}")

    def _refused(self, name: str, raw: bytes, message: str) -> CommandResult:
        error = CommandError(field=None, message=message)
        return CommandResult(id=self.request_of(raw), command=name, ok=False, error=error)

    def request_of(self, raw: bytes) -> str | None:
        """The request id of a raw body, or None if it has no usable one."""
        try:
            return request_id(parse_body(raw, self.max_bytes))
        except Refused as refused:
            return refused.request

    def apply(self, command: Command) -> Detail:
        """Carry out one checked command, from MQTT, a button or the CLI alike; a refusal
        raises Refused naming the field and changes nothing."""
        loop = isinstance(command, LOOP_COMMANDS)
        with contextlib.nullcontext() if loop else self.lock:
            try:
                return self._dispatch(command)
            except (RuleError, DieError, ValueError) as error:
                raise refusal(command, error) from None

    def _dispatch(self, command: Any) -> Detail:
        if isinstance(command, DeclareCommand):
            self.table.declare(_context(command))
        elif isinstance(command, TideCommand):
            self.table.reset_tracker(command.model_dump(exclude={"v", "id"}, exclude_none=True))
        elif isinstance(command, SystemCommand):
            self.table.switch_system(command.name, command.settings)
        elif isinstance(command, RollCommand):
            dice = tuple(Die(DieKind(d.kind), d.value) for d in command.dice)
            return self._record(Roll(dice, command.roller))
        elif isinstance(command, DieCommand):
            self._enter_die(command)
        elif isinstance(command, RereadCommand):
            self._controls("reread").reread()
        elif isinstance(command, RethrowCommand):
            self._controls("rethrow").rethrow()
        elif isinstance(command, LearnCommand):
            return {"corrections": self._learner().learn()}
        elif isinstance(command, TeachCommand):
            raise Refused(
                "command",
                "no die is being taught: `tidetower teach --config FILE "
                "--die KIND` teaches one, with the tower stopped",
            )
        elif isinstance(command, RedoCommand):
            record = self.table.redo()
            return {"roll_id": record.id, "summary": record.outcome.summary}
        else:
            return self._undo(command)
        return {"position": self.table.bar().position}

    def _undo(self, command: UndoCommand) -> Detail:
        last = self.table.state.last
        if command.roll_id is not None and (last is None or last.id != command.roll_id):
            now = f"the last roll is now {last.id}" if last else "no roll is left"
            raise Refused("roll_id", f"{now}, not {command.roll_id}: nothing was taken back")
        return {"roll_id": self.table.undo().id}

    def _enter_die(self, command: DieCommand) -> None:
        controls = self._controls("die")
        if command.kind is None or command.value is None:  # its schema allows this for not_a_die
            controls.drop_die(command.index)
        else:
            controls.enter_die(command.index, command.kind, command.value)

    def _controls(self, name: str) -> TowerControls:
        if self.controls is None:
            raise Refused(
                "command", f"{name!r} needs the camera's read loop, and this tower runs without one"
            )
        return self.controls

    def _learner(self) -> LearnControl:
        if self.learner is None:
            raise Refused("command", "this tower keeps no corrections to learn from")
        return self.learner

    def _record_roll(self, roll: Roll) -> Detail:
        record = self.table.record(roll)
        return {"roll_id": record.id, "summary": record.outcome.summary}


def declare_command(context: RollContext, request: str) -> DeclareCommand:
    """The declare command that sets `context` (a button amends the declared roll this way);
    the command's fields are the RollContext's, so the codec maps them both ways."""
    return DeclareCommand.model_validate({"id": request, **dump(context)})


def _context(command: DeclareCommand) -> RollContext:
    """The engine's RollContext from a declare command."""
    context: RollContext = load(RollContext, command.model_dump(exclude={"v", "id"}))
    return context
