"""Wire schemas (version `v`): what the tower publishes and the commands it accepts.

docs/mqtt.md shows an example of each. A change that breaks a reader bumps SCHEMA_VERSION.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationInfo, field_validator

from tidetower.engine import tray
from tidetower.engine.describe import TrackerKind
from tidetower.engine.dice import Die, DieKind
from tidetower.engine.rules import Side
from tidetower.engine.session import ActionKind

SCHEMA_VERSION = 1

Phase = Literal["new", "result", "undone"]
DieName = tray.DieName  # the one list of kinds: the camera's and the rules' (docs/mqtt.md)


class _Wire(BaseModel):
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


class BarPayload(_Wire):
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


class SessionPayload(_Wire):
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


class FaceCount(BaseModel):
    """How often a die showed one face."""

    face: int
    count: int


class DieStats(BaseModel):
    """One die's throws this session and what they say about its fairness (the figures of
    `tidetower stats dice --json`, engine/stats.py)."""

    die: DieName = Field(description="as the camera counts: a d100 is its tens and units d10s")
    throws: int
    typed: int = Field(description="how many of its throws the GM typed or corrected")
    faces: dict[str, int] = Field(description="each face and how often it came up")
    expected: float = Field(description="how often a fair die would show each face")
    chi2: float
    df: int
    p: float = Field(description="how often a fair die would look at least this uneven")
    most: FaceCount
    least: FaceCount
    throws_needed: int = Field(description="throws that would tell a 10 % bias on one face")
    more_needed: int
    verdict: str = Field(description='in words; a small sample is "too few throws to tell"')


class TrackPoint(BaseModel):
    """One roll that moved the bar: who threw it, where the marker went and why."""

    seq: int
    id: str
    who: str = Field(description="the roll's roller, else the declared actor")
    before: int
    after: int
    cause: str = Field(description="what moved it (the causes, joined, if it moved twice)")
    routed: Side | None = Field(None, description="the side routed by this move, if any")
    low: int = Field(description="the bar's low end after the move (set-ups may change it)")
    high: int = Field(description="the bar's high end after the move")


class TrackBody(BaseModel):
    """The bar's position over the session: its range, sides and each move."""

    low: int
    high: int
    label_a: str
    label_b: str
    colour_a: str
    colour_b: str
    tracker: TrackerBody | None = Field(None, description="what it is: kind and end words")
    moves: int = Field(0, description="the moves under the active system this session")
    points: list[TrackPoint] = Field(
        [], description="the moves, oldest first: the latest 1,000 (views.TRACK_LENGTH)"
    )


class LuckTally(BaseModel):
    """One actor's or side's throws of one count: the sum the odds expected against the sum
    rolled (engine/luck.py `Tally`)."""

    by: Literal["actor", "side"]
    name: str = Field(description='the actor, or "side a", "side b", "no side"')
    counts: str = Field(description="what the odds count, in the system's own word")
    throws: int
    expected: float = Field(description="the sum the odds expected")
    rolled: int = Field(description="the sum rolled")
    z: float = Field(description="standard deviations of the sum from the sum expected")
    p: float = Field(description="two-sided chance of a sum this far out (normal approx.)")
    verdict: str = Field(description='in words; a few throws are "too few throws to tell"')


class LuckThrow(BaseModel):
    """One throw set against its odds: the luckiest or unluckiest of the session."""

    id: str
    seq: int
    who: str = Field(description="the declared actor, else the side")
    side: Side | None = None
    counts: str
    dice: str = Field(description="the throw the odds were of, as the system writes it")
    rolled: int
    label: str = Field(description="the table's name for the value rolled, else the value")
    expected: float = Field(description="what the odds expected of this throw")
    chance: float = Field(description="the chance of rolling at least as much")
    chance_at_most: float = Field(description="the chance of rolling at most as much")


class LuckReason(BaseModel):
    """Why some throws have no odds to set them against, and how many."""

    reason: str
    count: int


class LuckBody(BaseModel):
    """The session's luck against the odds, for the page's Luck panel (engine/luck.py)."""

    throws: int = Field(0, description="the throws counted against their odds")
    tallies: list[LuckTally] = Field([], description="per actor, then per side, each count")
    best: list[LuckThrow] = Field([], description="the 3 least likely to score as much")
    worst: list[LuckThrow] = Field([], description="the 3 least likely to score as little")
    uncounted: int = Field(0, description="the throws with no odds to set them against")
    reasons: list[LuckReason] = []
    moves: int = Field(0, description="the moves of the bar in these throws, any system")


class StatsPayload(_Wire):
    """Retained `stats`: every die's fairness figures over the session's rolls, the bar's
    moves over the session and the table's luck against the odds, for the page's Dice, "Bar
    over the session" and Luck panels."""

    session_id: str
    rolls: int = Field(description="the rolls counted: the session's whole history")
    dice: list[DieStats] = []
    track: TrackBody
    luck: LuckBody = Field(default_factory=LuckBody, description="the luck against the odds")


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


class RollEvent(_Wire):
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


class TowerPayload(_Wire):
    """Retained `tower`: the read loop's state, why it needs attention, or its error."""

    state: tray.TowerState
    attention: AttentionBody | None = None
    error: str | None = None
    problems: list[str] = Field(
        [], description="what the tower could not do lately and carried on past, oldest first"
    )


TeachStep = Literal["throw", "confirm", "teaching", "done", "refused"]


class TeachPayload(_Wire):
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


class LearnPayload(_Wire):
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


class CommandResult(_Wire):
    """`cmd/result`: the reply to a command, carrying the request's id."""

    id: str | None
    command: str
    ok: bool
    error: CommandError | None = None
    detail: dict[str, Any] = {}


# --- commands (`cmd/<name>`, JSON body) -------------------------------------------------


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
    pool: int | None = Field(None, ge=0, le=50)
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
        max_length=40, description="[] records a GM action that throws no dice (a new clock)"
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

    index: int = Field(ge=0, le=39)
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


class TeachCommand(Command):
    """Say which face the die being taught shows in the throw awaiting confirmation;
    `null`: keep no photo of this throw (a face taught already), throw again."""

    value: StrictInt | None = Field(ge=0, le=100)


class LearnCommand(Command):
    """Learn from the corrections the GM has made: taught, checked, adopted only if no worse."""


SessionPayload.model_rebuild()
