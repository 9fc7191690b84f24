"""Command bodies (`cmd/<name>`, JSON): what the tower accepts, each checked by its model.

docs/mqtt.md lists them; mqtt/registry.py gives each its handler. A body the model refuses
changes nothing, and the reply names the field.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationInfo, field_validator

from tidetower.engine import tray
from tidetower.engine.bounds import MAX_DICE, MAX_POOL
from tidetower.engine.dice import DieKind
from tidetower.engine.rules import Side
from tidetower.engine.tray import DieName


class Command(BaseModel):
    """A command body: an id for the reply, no unknown fields."""

    model_config = ConfigDict(extra="forbid")
    v: Literal[1] = 1
    """The schema version the command is written in: this tower speaks 1 and refuses others."""
    id: str = Field(min_length=1, max_length=64)


def _rules_kind(kind: DieName | None) -> DieName | None:
    """A die the rules count: a tens d10 is the camera's alone (with a units d10 it makes a
    d100), so a roll cannot name it."""
    if kind is not None and kind not in set(DieKind):
        raise ValueError(f"a {kind} is no die of the rules: with a units d10 it makes a d100")
    return kind


class DeclareCommand(Command):
    """Declare the next roll (who, which side, which mode, the pool); the fields the active
    system's declaration adds (its `table.fields`) go in `params` or beside these, and the
    system checks them."""

    model_config = ConfigDict(extra="allow")
    actor: str = Field("", max_length=80)
    side: Side | None = None
    reply_to: str | None = Field(None, max_length=64)
    mode: str = Field("", max_length=20)
    pool: int | None = Field(None, ge=0, le=MAX_POOL)
    params: dict[str, Any] = {}

    def declared_params(self) -> dict[str, Any]:
        """The system's own fields, from `params` and beside the shared ones."""
        return {**self.params, **(self.model_extra or {})}


class SetupCommand(Command):
    """Set the active system's tracker up afresh with its settings (its `table.settings`,
    `session.description.settings`); the system checks them."""

    model_config = ConfigDict(extra="allow")

    def settings(self) -> dict[str, Any]:
        """The settings sent."""
        return dict(self.model_extra or {})


class SystemCommand(Command):
    """Switch the table's rule system."""

    name: str = Field(min_length=1, max_length=40)
    settings: dict[str, Any] = {}


def _rules_face(value: int, info: ValidationInfo) -> int:
    """A face the rules' die cannot show is refused here, so the error names the field."""
    kind = info.data.get("kind")
    if kind is None:  # the kind itself was refused
        return value
    sides = DieKind(kind).sides
    if not 1 <= value <= sides:
        raise ValueError(f"a {kind} cannot show {value}: faces are 1..{sides}")
    return value


def _camera_face(value: int | None, info: ValidationInfo) -> int | None:
    """A face the camera's die cannot show is refused here, so the error names the field;
    a units d10's 0 may be typed as 10, as it is on the die."""
    kind = info.data.get("kind")
    if kind is None or value is None or (kind == "d10" and value == 10):
        return value
    faces = tray.camera_faces(kind)
    if value not in faces:
        shown = f"{faces[0]}..{faces[-1]}"
        shown += {"d10": " (or 10 for its 0)", "d10-tens": " by tens"}.get(kind, "")
        raise ValueError(f"a {kind} cannot show {value}: faces are {shown}")
    return value


class DieEntry(BaseModel):
    """A die entered by hand."""

    model_config = ConfigDict(extra="forbid")
    kind: DieName
    value: int

    _kind = field_validator("kind")(_rules_kind)
    _face = field_validator("value")(_rules_face)


class RollCommand(Command):
    """Enter a whole throw by hand (no camera, or the GM overrides it)."""

    dice: list[DieEntry] = Field(
        max_length=MAX_DICE, description="[] records a GM action that throws no dice (a new clock)"
    )
    roller: str = Field("", max_length=80)


def _entered(given: object, info: ValidationInfo) -> object:
    """A die's kind and face are given unless it is `not_a_die`, and then neither is."""
    dropped = info.data.get("not_a_die") is True
    if dropped and given is not None:
        raise ValueError(f"not_a_die takes no {info.field_name}: leave it out")
    if not dropped and given is None:
        raise ValueError(f"give the die's {info.field_name}, or not_a_die: true")
    return given


class DieCommand(Command):
    """Enter or correct one die of the pending reading (an unreadable die), or drop it:
    `not_a_die` (the camera took a tray corner or a shadow for a die)."""

    index: int = Field(
        ge=0,
        le=39,
        description="the die's number (`attention.unreadable[].index`), kept for the whole "
        "throw while the others are entered",
    )
    not_a_die: bool = Field(False, description="no die: left out of the reading")
    kind: DieName | None = Field(None, validate_default=True)
    value: int | None = Field(
        None,
        validate_default=True,
        description="as the camera reads it: a units d10 0..9, a tens d10 0..90",
    )

    _given = field_validator("kind", "value")(_entered)
    _face = field_validator("value")(_camera_face)


class UndoCommand(Command):
    """Take back the last roll (only if it is `roll_id`, when one is named)."""

    roll_id: str | None = Field(
        None, max_length=64, description="refuse unless this is still the last roll"
    )


class RedoCommand(Command):
    """Put back the roll undone last, as it was, while nothing else has changed since."""


class RereadCommand(Command):
    """Have the camera read the tray again."""


class RethrowCommand(Command):
    """Discard the pending reading: the dice are to be thrown again."""


class TipCommand(Command):
    """Tip the tray clear with its servo: the dice of a stored roll, or of a throw to be
    thrown again, pour out; it levels once the tray is empty."""


class TeachCommand(Command):
    """Say which face the die being taught shows in the throw awaiting confirmation;
    `null`: keep no photo of this throw (a face taught already), throw again."""

    value: StrictInt | None = Field(ge=0, le=100)


class LearnCommand(Command):
    """Learn from the corrections the GM has made: taught, checked, adopted only if no worse."""
