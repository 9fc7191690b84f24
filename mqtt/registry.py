"""The command registry: one entry per GM command (its model, its handler, whether the read
loop runs it, where its refusals sit, its done-sentence), read by the wire, the buttons,
`tidetower gm`, `tidetower session`, the Mosquitto ACL and the fuzz suite alike."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from tidetower.engine.codec import dump, load
from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.systems import get_system
from tidetower.engine.table import Table
from tidetower.mqtt.bodies import Refused
from tidetower.mqtt.command_bodies import (
    Command,
    DeclareCommand,
    DieCommand,
    LearnCommand,
    RedoCommand,
    RereadCommand,
    RethrowCommand,
    RollCommand,
    SetupCommand,
    SystemCommand,
    TeachCommand,
    TipCommand,
    UndoCommand,
)
from tidetower.mqtt.wording import declared_line

Detail = dict[str, Any]
Body = Mapping[str, Any]
Done = Callable[[Body, Body], str]
"""What a command did, in words, from its request body and the reply's detail."""
C = TypeVar("C", bound=Command)


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

    def tip(self) -> None:
        """Tip the tray clear with its servo; raise ValueError if the tower has none, or
        while the dice in the tray are still to be read or settled."""


class LearnControl(Protocol):
    """Learning from the GM's corrections (firmware's `Learner`)."""

    def learn(self) -> int:
        """Start learning in the background and return how many corrections it learns from;
        raise ValueError if it cannot start (too few, or learning already)."""


class Desk(Protocol):
    """What a handler works with (`commands.CommandDesk`): the table, the read loop and the
    learner (Refused when the tower has none), and how a roll is recorded."""

    table: Table

    def read_loop(self, name: str) -> TowerControls:
        """The read loop, for command `name`."""

    def learning(self) -> LearnControl:
        """The learner."""

    def record(self, roll: Roll) -> Detail:
        """Record `roll` and return the reply's detail."""


@dataclass(frozen=True)
class CommandSpec(Generic[C]):
    """One command: its topic name, model, handler and done-sentence; `loop`: the read loop
    carries it out, outside the table's lock (the loop takes its own, then the table's, so
    holding the table's first could deadlock); `main_field`: the field a refusal naming none
    is about; `nested`: where the engine's settings or params keys sit in the body."""

    name: str
    model: type[C]
    handler: Callable[[Desk, C], Detail]
    done: Done
    loop: bool = False
    main_field: str | None = None
    nested: str | None = None


def _position(desk: Desk) -> Detail:
    """The reply's detail of a command that moves nothing but may: where the marker stands."""
    return {"position": desk.table.bar().position}


def _declare(desk: Desk, command: DeclareCommand) -> Detail:
    shared = command.model_dump(include=set(DeclareCommand.model_fields) - {"v", "id"})
    context: RollContext = load(RollContext, {**shared, "params": command.declared_params()})
    desk.table.declare(context)
    table = get_system(desk.table.state.system).describe()
    return {**_position(desk), "declared": declared_line(dump(context), table)}


def _setup(desk: Desk, command: SetupCommand) -> Detail:
    desk.table.reset_tracker(command.settings())
    tracker = get_system(desk.table.state.system).describe().tracker
    return {**_position(desk), "tracker": tracker.name}


def _system(desk: Desk, command: SystemCommand) -> Detail:
    desk.table.switch_system(command.name, command.settings)
    return _position(desk)


def _roll(desk: Desk, command: RollCommand) -> Detail:
    dice = tuple(Die(DieKind(d.kind), d.value) for d in command.dice)
    return desk.record(Roll(dice, command.roller))


def _die(desk: Desk, command: DieCommand) -> Detail:
    controls = desk.read_loop("die")
    if command.kind is None or command.value is None:  # its schema allows this for not_a_die
        controls.drop_die(command.index)
    else:
        controls.enter_die(command.index, command.kind, command.value)
    return _position(desk)


def _undo(desk: Desk, command: UndoCommand) -> Detail:
    last = desk.table.state.last
    if command.roll_id is not None and (last is None or last.id != command.roll_id):
        now = f"the last roll is now {last.id}" if last else "no roll is left"
        raise Refused("roll_id", f"{now}, not {command.roll_id}: nothing was taken back")
    return {"roll_id": desk.table.undo().id}


def _redo(desk: Desk, _command: RedoCommand) -> Detail:
    record = desk.table.redo()
    return {"roll_id": record.id, "summary": record.outcome.summary}


def _reread(desk: Desk, _command: RereadCommand) -> Detail:
    desk.read_loop("reread").reread()
    return _position(desk)


def _rethrow(desk: Desk, _command: RethrowCommand) -> Detail:
    desk.read_loop("rethrow").rethrow()
    return _position(desk)


def _tip(desk: Desk, _command: TipCommand) -> Detail:
    desk.read_loop("tip").tip()
    return _position(desk)


def _learn(desk: Desk, _command: LearnCommand) -> Detail:
    return {"corrections": desk.learning().learn()}


def _teach(_desk: Desk, _command: TeachCommand) -> Detail:
    """Only `tidetower teach` answers a teach command (mqtt/teaching.py), never the tower."""
    raise Refused(
        "command",
        "no die is being taught: `tidetower teach --config FILE "
        "--die KIND` teaches one, with the tower stopped",
    )


def _die_done(body: Body, _detail: Body) -> str:
    if body.get("not_a_die"):
        return f"left die {body.get('index')} out as no die"
    return f"entered die {body.get('index')} as {body.get('kind')} showing {body.get('value')}"


def _taught(_body: Body, detail: Body) -> str:
    face = detail.get("face")
    return "kept no photo of this throw: throw again" if face is None else f"taught face {face}"


def _registry(*specs: CommandSpec[Any]) -> dict[str, CommandSpec[Any]]:
    return {spec.name: spec for spec in specs}


COMMANDS = _registry(
    CommandSpec(
        "declare",
        DeclareCommand,
        _declare,
        lambda _, detail: f"declared the next roll: {detail.get('declared')}",
        nested="params",
    ),
    CommandSpec(
        "setup", SetupCommand, _setup, lambda _, detail: f"set up {detail.get('tracker')} afresh"
    ),
    CommandSpec(
        "system",
        SystemCommand,
        _system,
        lambda body, _: f"now playing {body.get('name')}",
        main_field="name",
        nested="settings",
    ),
    CommandSpec(
        "roll",
        RollCommand,
        _roll,
        lambda _, detail: f"recorded roll {detail.get('roll_id')}: {detail.get('summary')}",
        main_field="dice",
    ),
    CommandSpec("die", DieCommand, _die, _die_done, loop=True, main_field="index"),
    CommandSpec(
        "undo", UndoCommand, _undo, lambda _, detail: f"took back roll {detail.get('roll_id')}"
    ),
    CommandSpec(
        "redo",
        RedoCommand,
        _redo,
        lambda _, detail: f"put back the roll taken back, as roll {detail.get('roll_id')}",
    ),
    CommandSpec(
        "reread",
        RereadCommand,
        _reread,
        lambda _body, _: "the camera read the tray again",
        loop=True,
    ),
    CommandSpec(
        "rethrow",
        RethrowCommand,
        _rethrow,
        lambda _body, _: "dropped the reading: throw the dice again",
        loop=True,
    ),
    CommandSpec(
        "tip",
        TipCommand,
        _tip,
        lambda _body, _: "tipped the tray: the dice pour out, and it levels once empty",
        loop=True,
    ),
    CommandSpec(
        "learn",
        LearnCommand,
        _learn,
        lambda _, detail: f"learning from {detail.get('corrections')} corrections",
        loop=True,  # learning does not touch the table at all
    ),
    CommandSpec("teach", TeachCommand, _teach, _taught),
)
"""Every command the tower knows, by its topic name (`cmd/<name>`)."""

_BY_MODEL = {spec.model: spec for spec in COMMANDS.values()}


def spec_of(command: Command) -> CommandSpec[Any]:
    """The registry entry of a checked command."""
    return _BY_MODEL[type(command)]


def reply_line(reply: Body, body: Body) -> str:
    """The tower's reply to a command (`cmd/result`) as one sentence, with where the bar
    stands when the reply says."""
    command = str(reply.get("command"))
    if not reply.get("ok"):
        error = reply.get("error") or {}
        return f"The tower refused {command}: {error.get('message', 'it gave no reason')}."
    detail = reply.get("detail") or {}
    spec = COMMANDS.get(command)
    said = spec.done(body, detail) if spec is not None else f"{command}: done"
    if "position" in detail:
        said += f"; the marker stands at {detail['position']}"
    return said[0].upper() + said[1:] + "."
