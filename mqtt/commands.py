"""GM commands from `cmd/<name>`: checked against their schema, then applied to the table
by the handler the registry (mqtt/registry.py) gives each.

A malformed, oversized, unknown or refused command changes nothing; the reply says why.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

from tidetower.engine.codec import dump
from tidetower.engine.dice import DieError, Roll
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.table import Table
from tidetower.mqtt.bodies import Refused, check_text_everywhere, checked, parse_body, request_id
from tidetower.mqtt.command_bodies import Command, DeclareCommand
from tidetower.mqtt.payloads import CommandError, CommandResult
from tidetower.mqtt.registry import (
    COMMANDS,
    Detail,
    LearnControl,
    TowerControls,
    spec_of,
)

log = logging.getLogger(__name__)

RETAINED = (
    "retained commands are not run (it would run again at every restart); "
    "it was cleared: send it again without the retain flag"
)


def validate(name: str, data: object) -> Command:
    """Return the command `name` checked against its schema, or Refused naming the field."""
    spec = COMMANDS.get(name)
    if spec is None:
        known = ", ".join(sorted(COMMANDS))
        raise Refused("command", f"unknown command {name!r}: known are {known}")
    model: type[Command] = spec.model
    return checked(model, data)


def wire_field(command: Command, field: str | None) -> str | None:
    """The command field an engine refusal's `field` is: itself where the command has it,
    else under the command's params or settings, else the command's main field."""
    spec = spec_of(command)
    if field is None:
        return spec.main_field
    if field in spec.model.model_fields and field not in ("v", "id"):
        return field
    if field in (command.model_extra or {}):  # sent beside the shared fields: named so
        return field
    if field == spec.nested:
        return field
    return f"{spec.nested}.{field}" if spec.nested else spec.main_field


def refusal(command: Command, error: Exception) -> Refused:
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
        """Carry out one checked command, from MQTT, a button or the CLI alike, with its
        registry entry's handler; a refusal raises Refused naming the field and changes
        nothing."""
        spec = spec_of(command)
        with contextlib.nullcontext() if spec.loop else self.lock:
            try:
                return spec.handler(self, command)
            except (RuleError, DieError, ValueError) as error:
                raise refusal(command, error) from None

    def read_loop(self, name: str) -> TowerControls:
        """The read loop, or Refused naming command `name` when this tower runs without one."""
        if self.controls is None:
            raise Refused(
                "command", f"{name!r} needs the camera's read loop, and this tower runs without one"
            )
        return self.controls

    def learning(self) -> LearnControl:
        """The learner, or Refused when this tower keeps no corrections."""
        if self.learner is None:
            raise Refused("command", "this tower keeps no corrections to learn from")
        return self.learner

    def record(self, roll: Roll) -> Detail:
        """Record a roll entered by hand; the reply's detail."""
        return self._record(roll)

    def _record_roll(self, roll: Roll) -> Detail:
        record = self.table.record(roll)
        return {"roll_id": record.id, "summary": record.outcome.summary}


def declare_command(context: RollContext, request: str) -> DeclareCommand:
    """The declare command that sets `context` (a button amends the declared roll this way);
    the command's fields are the RollContext's, so the codec maps them both ways."""
    return DeclareCommand.model_validate({"id": request, **dump(context)})
