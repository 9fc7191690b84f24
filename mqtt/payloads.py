"""Wire schemas (version `v`): what the tower publishes and the commands it accepts.

docs/mqtt.md shows an example of each. A change that breaks a reader bumps SCHEMA_VERSION.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from tidetower.engine import tray
from tidetower.engine.describe import TrackerKind
from tidetower.engine.dice import Die
from tidetower.engine.rules import Side
from tidetower.engine.session import ActionKind

SCHEMA_VERSION = 1

Phase = Literal["new", "result", "undone"]
DieName = tray.DieName  # the one list of kinds: the camera's and the rules' (docs/mqtt.md)


class Published(BaseModel):
    """A published message: versioned, strict about unknown fields when read back."""

    model_config = ConfigDict(extra="forbid")
    v: int = SCHEMA_VERSION


class MotionBody(BaseModel):
    """One move of the marker and what caused it."""

    cause: str
    before: int
    after: int


class TrackerBody(BaseModel):
    """What the tracker is, for a reader that draws it: its kind and its words."""

    kind: TrackerKind = Field(description="two-sided, clocks, count or none")
    name: str = Field(description='what the table calls it, e.g. "clocks"')
    ends: list[str] = Field(description="the words at the low end and the high end")
    position: str = Field(description='the word for where the marker stands: "Position"')


class BarPayload(Published):
    """Retained `tide`: the tracker as the LED strip shows it (named for the product's bar,
    whatever the system's tracker)."""

    system: str
    low: int
    high: int
    length: int
    position: int
    label_a: str
    label_b: str
    colour_a: str
    colour_b: str
    routed: Side | None = None
    last_motion: MotionBody | None = None
    segments: list[tuple[str, int, int]] = Field(
        [], description="trackers with several parts: (label, filled, size) each"
    )
    tracker: TrackerBody | None = Field(None, description="what it is: kind and words")


class SideBody(BaseModel):
    """A side's name and colour."""

    label: str
    colour: str


class OddsRow(BaseModel):
    """The chance of one result of the declared roll."""

    value: int
    chance: float
    at_least: float = Field(description="chance of this value or more (this grade or better)")
    label: str | None = Field(None, description="the result's name at the table (a grade)")


class OutcomeChance(BaseModel):
    """The chance of one thing the declared roll can come to (a full success, a hit)."""

    label: str
    chance: float


class OddsBody(BaseModel):
    """Odds of the declared roll: what is counted and the chance of each count."""

    counts: str
    dice: str
    rows: list[OddsRow]
    mean: float = Field(description="the mean of the rows' `value`")
    outcomes: list[OutcomeChance] = Field(
        [], description="what the roll comes to, each with its chance; together they sum to 1"
    )
    explosion: float | None = Field(None, description="d6-pool: chance a pair of 6s explodes")


class HistoryItem(BaseModel):
    """A past roll in the session's history, newest last."""

    id: str
    seq: int
    summary: str
    dice: list[str]
    awaiting_reply: bool = Field(
        False, description="an opening roll of the active system: a reply may name its id"
    )
    roller: str = Field("", description="who threw: the roll's roller, else the declared actor")
    at: float | None = Field(None, description="when it was recorded, seconds since the epoch")
    snapshot: str | None = Field(None, description="its tray photo, served by the display")
    typed: list[int] = Field([], description="indices in `dice` of the dice the GM typed")


class ActionItem(BaseModel):
    """A GM's change to the table beside the rolls: an undo, a redo, a new tracker, a switch."""

    kind: ActionKind
    text: str
    roll_id: str | None = None
    after_seq: int = Field(description="it came after the roll with this seq (0: before any)")
    at: float | None = None


class SessionPayload(Published):
    """Retained `session`: the system, the sides, the declared next roll and its odds."""

    session_id: str
    system: str
    sides: dict[str, SideBody]
    declared: dict[str, Any]
    odds: OddsBody | None = None
    history: list[HistoryItem] = []
    last_roll: RollEvent | None = Field(None, description="the latest result, for late joiners")
    actions: list[ActionItem] = Field([], description="the GM's latest actions, oldest first")
    redo: HistoryItem | None = Field(None, description="the roll `cmd/redo` would put back")
    description: dict[str, Any] = Field(
        {}, description="the system's settings, declaration and tracker (engine/describe.py)"
    )


def wire_named(camera: Mapping[str, Any]) -> dict[str, Any]:
    """A die in the camera's JSON form (`tray.DieRead.to_dict()`, `tray.Unreadable.to_dict()`)
    under the wire's names: the camera's `die` is the wire's `kind`."""
    body = dict(camera)
    body.setdefault("kind", body.pop("die", None))
    return body


class DieBody(BaseModel):
    """The wire's form of one die of a roll: kind, value, and the camera's confidence and box
    (a camera die, `tray.DieRead`, in phase new; a rules die, `dice.Die`, once resolved)."""

    kind: DieName
    value: int
    confidence: float | None = None
    box: list[float] | None = None
    typed: bool = Field(False, description="the GM typed it: not a camera read (no confidence)")

    @classmethod
    def seen(cls, die: tray.DieRead) -> DieBody:
        """The die as the camera read it (or the GM typed it); the reader's `check` stays out."""
        body = die.to_dict()
        body.pop("check", None)
        return cls.model_validate({**wire_named(body), "typed": die.typed})

    @classmethod
    def rolled(cls, die: Die, reading: Sequence[tray.DieRead]) -> DieBody:
        """A rules die with what the camera dice it was read from say: a d100 is as sure as its
        less sure half and lies where both lie; typed if the GM typed any (or all of it)."""
        read = [cls.seen(reading[i]) for i in die.read]
        typed = not read or any(d.typed for d in read)
        sure = [d.confidence for d in read if d.confidence is not None]
        boxes = [d.box for d in read if d.box is not None]
        return cls(
            kind=die.kind.value,
            value=die.face,
            confidence=None if typed or not sure else min(sure),
            box=_around(boxes) if boxes else None,
            typed=typed,
        )


def _around(boxes: Sequence[list[float]]) -> list[float]:
    """The smallest box holding every one of `boxes`."""
    x0, y0, x1, y1 = zip(*boxes, strict=True)
    return [min(x0), min(y0), max(x1), max(y1)]


class OutcomeBody(BaseModel):
    """What the roll means: the table's line and the facts the rule system found."""

    summary: str
    facts: dict[str, Any] = {}


class RollEvent(Published):
    """`roll` (QoS 1, not retained): new when dice are seen, result once resolved, undone."""

    event: str = Field(description="'<id>:<phase>': receivers drop an event seen before")
    id: str
    seq: int
    phase: Phase
    system: str
    roller: str = ""
    context: dict[str, Any] = {}
    dice: list[DieBody] = Field(
        description="the rules' dice (a units d10's 0 is 10, a tens and a units d10 are one"
        " d100), each with the confidence and box of the camera dice it was read from; in"
        " phase new, as the tower will count them ([] when it cannot: a tens d10 alone)"
    )
    reading: list[DieBody] = Field(
        [],
        description="the camera's dice as read (a units d10 shows 0, a d100 is two d10s);"
        " [] for a throw entered by hand",
    )
    outcome: OutcomeBody | None = None
    motions: list[MotionBody] = []
    at: float | None = Field(None, description="when it was recorded, seconds since the epoch")
    snapshot: str | None = Field(None, description="its tray photo, served by the display")


class UnreadableBody(BaseModel):
    """A die the camera saw but could not read: its index for `cmd/die`, box and why."""

    index: int = Field(ge=0, description="the `index` cmd/die takes to enter this die")
    box: list[float] | None = Field(None, description="normalised x0, y0, x1, y1 (0..1)")
    reason: str
    kind: DieName | None = Field(None, description="its kind, when the camera is sure of it")
    faces: list[int] = Field([], description="the faces the camera hesitated between")

    @classmethod
    def seen(cls, index: int, die: tray.Unreadable) -> UnreadableBody:
        """Unreadable die `index` of the camera's reading."""
        return cls.model_validate({"index": index, **wire_named(die.to_dict())})


class AttentionBody(BaseModel):
    """Why the tower waits for the GM, the dice it could not read and those it did."""

    kind: tray.AttentionKind
    reason: str
    unreadable: list[UnreadableBody] = []
    dice: list[DieBody] = []
    snapshot: str | None = Field(None, description="the tray photo the reading came from")


class TowerPayload(Published):
    """Retained `tower`: the read loop's state, why it needs attention, or its error."""

    state: tray.TowerState
    attention: AttentionBody | None = None
    error: str | None = None
    problems: list[str] = Field(
        [], description="what the tower could not do lately and carried on past, oldest first"
    )


TeachStep = Literal["throw", "confirm", "teaching", "done", "refused"]


class TeachPayload(Published):
    """Retained `teach` while `tidetower teach --config` runs: which faces are taught, and
    what the camera reads in the throw awaiting confirmation. Emptied when it ends."""

    die: DieName
    name: str | None = None
    faces: list[int]
    taught: list[int] = []
    step: TeachStep
    guess: int | None = None
    message: str = ""


LearnState = Literal["idle", "learning", "adopted", "kept", "failed"]


class LearnPayload(Published):
    """Retained `learn`: the corrections the tower keeps, and what learning from them did
    (dice right among those set aside, before and after; adopted, or the old profile kept)."""

    corrections: int = Field(ge=0)
    state: LearnState = "idle"
    taught: int | None = None
    checked: int | None = None
    before: float | None = None
    after: float | None = None
    message: str = ""


class CommandError(BaseModel):
    """Why a command was refused: the field at fault (if one is) and a message."""

    field: str | None
    message: str


class CommandResult(Published):
    """`cmd/result`: the reply to a command, carrying the request's id."""

    id: str | None
    command: str
    ok: bool
    error: CommandError | None = None
    detail: dict[str, Any] = {}


SessionPayload.model_rebuild()
