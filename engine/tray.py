"""What lies in the tray and where the tower stands: the nouns every package shares.

The camera makes a `Reading` (dice read, dice it could not read, dice set aside), the read
loop is in a `TowerState` and, when it waits for the GM, holds an `Attention`; the camera,
the read loop and the wire all take these same frozen types, so none is declared twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, WithJsonSchema

from tidetower.engine.dice import Die, DieError, DieKind, Roll

TENS_D10 = "d10-tens"
"""The camera's tens d10 (00..90), which it pairs with a units d10 to make a d100."""


def _die_names() -> tuple[str, ...]:
    """The rules' kinds with the camera's tens d10 after the d10: the order menus list."""
    names = [kind.value for kind in DieKind]
    at = names.index(DieKind.D10.value) + 1
    return (*names[:at], TENS_D10, *names[at:])


DIE_NAMES: tuple[str, ...] = _die_names()
"""Every die the tower names: engine.dice.DieKind, the one list of kinds, and the tens d10."""


def _known_die(name: str) -> str:
    """`name` if it is a die the tower knows, else a ValueError listing them."""
    if name not in DIE_NAMES:
        raise ValueError(f"unknown die {name!r}: expected one of {', '.join(DIE_NAMES)}")
    return name


DieName = Annotated[
    str, AfterValidator(_known_die), WithJsonSchema({"type": "string", "enum": list(DIE_NAMES)})
]
"""A die's name as the camera, the rules and the wire write it, checked wherever it is read."""


def camera_faces(die: DieName) -> tuple[int, ...]:
    """The faces a die shows as the camera reads it: a units d10 0..9, a tens d10 00..90 by
    tens, a d100 (a tens and a units d10 read together) 1..100, any other 1..n."""
    if die == "d10":
        return tuple(range(10))
    if die == TENS_D10:
        return tuple(range(0, 100, 10))
    return tuple(range(1, int(die[1:]) + 1))


Box = tuple[float, float, float, float]
"""Normalised (x0, y0, x1, y1), x to the right and y down, each 0..1."""


def _rounded(box: Box) -> list[float]:
    """Round a box for JSON so output stays short and stable."""
    return [round(float(v), 5) for v in box]


@dataclass(frozen=True)
class DieRead:
    """One die read with confidence: its kind, the face value up, where it lies."""

    die: str
    value: int
    box: Box
    confidence: float
    check: str = ""
    """What an independent check agreed, e.g. "5 pips counted"; empty when none spoke."""
    typed: bool = False
    """Entered by the GM, not read: its JSON form has no confidence (null)."""
    named: str = ""
    """Which physical die it is, where the reader can tell: a taught die's name ("white
    omen"), else its colour and kind ("red d20"); empty: only its kind is known."""

    def to_dict(self) -> dict[str, Any]:
        """Return the CLI-contract form of this die (a typed one's confidence is None; its
        name only when the reader could tell one)."""
        out: dict[str, Any] = {
            "die": self.die,
            "value": self.value,
            "box": _rounded(self.box),
            "confidence": None if self.typed else round(float(self.confidence), 4),
        }
        if self.check:
            out["check"] = self.check
        if self.named:
            out["named"] = self.named
        return out


@dataclass(frozen=True)
class Unreadable:
    """A die seen but not read, with where it is and why, so nobody guesses it."""

    box: Box
    reason: str
    die: str | None = None
    """Its kind, when the reader is sure of that much."""
    faces: tuple[int, ...] = ()
    """The faces the reader hesitated between, likeliest first."""
    named: str = ""
    """Which of the table's dice it is, where its own reader could tell that much: a die the
    GM types in keeps that name (not on the wire: the typed die carries it)."""

    def to_dict(self) -> dict[str, Any]:
        """Return the CLI-contract form of this unreadable die."""
        out: dict[str, Any] = {"box": _rounded(self.box), "reason": self.reason}
        if self.die is not None:
            out["die"] = self.die
        if self.faces:
            out["faces"] = list(self.faces)
        return out


@dataclass(frozen=True)
class SetAside:
    """A die read but left out of the roll: a pinned kind in another colour than the pin's."""

    die: DieRead
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """Return the CLI-contract form: the die, and why it does not count."""
        return {**self.die.to_dict(), "reason": self.reason}


@dataclass(frozen=True)
class Combined:
    """Two dice read as one: a tens d10 and a units d10 make a d100 (00 and 0 is 100)."""

    die: str
    value: int
    dice: tuple[int, int]
    """Indices into the reading's dice: the tens die, then the units die."""

    def to_dict(self) -> dict[str, Any]:
        """Return the CLI-contract form of the combined die."""
        return {"die": self.die, "value": self.value, "dice": list(self.dice)}


def pair_d100(dice: tuple[DieRead, ...]) -> tuple[Combined, ...]:
    """Pair each tens d10 with the nearest units d10 not yet taken: one d100 per pair."""
    tens = [i for i, d in enumerate(dice) if d.die == TENS_D10]
    units = [i for i, d in enumerate(dice) if d.die == "d10"]
    out = []
    for t in tens:
        if not units:
            break
        u = min(units, key=lambda i: _gap(dice[t].box, dice[i].box))
        units.remove(u)
        value = dice[t].value + dice[u].value
        out.append(Combined("d100", value or 100, (t, u)))
    return tuple(out)


def _gap(a: Box, b: Box) -> float:
    """Return the squared distance between two boxes' centres."""
    return ((a[0] + a[2]) - (b[0] + b[2])) ** 2 + ((a[1] + a[3]) - (b[1] + b[3])) ** 2


@dataclass(frozen=True)
class Reading:
    """Everything read from one photo, and how long reading took."""

    dice: tuple[DieRead, ...] = ()
    unreadable: tuple[Unreadable, ...] = ()
    ms: float = 0.0
    set_aside: tuple[SetAside, ...] = ()
    """Dice read but not counted (colour pins), listed so nobody wonders where they went."""

    @property
    def combined(self) -> tuple[Combined, ...]:
        """Return the dice read together: each tens d10 paired with a units d10 as a d100."""
        return pair_d100(self.dice)

    def to_dict(self) -> dict[str, Any]:
        """Return the CLI-contract form (without the image path)."""
        out: dict[str, Any] = {
            "dice": [d.to_dict() for d in self.dice],
            "unreadable": [u.to_dict() for u in self.unreadable],
        }
        combined = self.combined
        if combined:
            out["combined"] = [c.to_dict() for c in combined]
        if self.set_aside:
            out["set_aside"] = [a.to_dict() for a in self.set_aside]
        out["ms"] = round(self.ms, 2)
        return out

    def to_json(self, image: str | None = None) -> dict[str, Any]:
        """Return the CLI-contract object, with the image path first when given."""
        body = self.to_dict()
        return {"image": image, **body} if image is not None else body

    @property
    def values(self) -> tuple[int, ...]:
        """Return the read face values, sorted, for the rules engine."""
        return tuple(sorted(d.value for d in self.dice))


def roll_of(reading: Reading) -> Roll:
    """The throw as the rules see it, each die pointing at the camera dice it was read from:
    a tens d10 read with a units d10 is one d100 (00 and 0 is 100), a units d10 alone shows 0
    as 10, and a tens d10 alone is refused."""
    combined = reading.combined
    paired = {i for c in combined for i in c.dice}
    dice = [Die(DieKind.D100, c.value, c.dice) for c in combined]
    for i, read in enumerate(reading.dice):
        if i in paired:
            continue
        if read.die == TENS_D10:
            raise DieError("a tens d10 (00..90) was read without a units d10 to make a d100")
        face = (read.value or 10) if read.die == "d10" else read.value
        dice.append(Die(DieKind.parse(read.die), face, (i,)))
    return Roll(tuple(dice))


class TowerState(StrEnum):
    """Where the read loop is; the status LED shows each one differently."""

    IDLE = "idle"
    ROLLING = "rolling"
    SETTLING = "settling"
    READING = "reading"
    RESULT = "result"
    WAITING_FOR_CLEAR = "waiting-for-clear"
    NEEDS_ATTENTION = "needs-attention"
    ERROR = "error"


AttentionKind = Literal["unreadable", "blocked", "unsettled", "refused", "unsaved"]
"""Why the tower waits: dice it cannot read, a blocked beam, a tray never still, rules refusing,
a roll the store could not keep (a full disk)."""


@dataclass(frozen=True)
class Attention:
    """Why the tower waits for the GM, and the reading it could not finish."""

    kind: AttentionKind
    reason: str
    reading: Reading | None = None
    camera: Reading | None = None
    """The reading as the camera made it, before the GM entered any die (None: `reading`)."""
    snapshot: str | None = None
    """The file name of the tray photo the reading was made from, if one was kept."""
    numbers: tuple[int, ...] | None = None
    """The number each die of `reading.unreadable` has had since the camera read the throw
    (None: its place there); a die keeps it while the GM enters the others."""

    def die_numbers(self) -> tuple[int, ...]:
        """The number of each die still unread, in the order `reading.unreadable` holds them."""
        left = len(self.reading.unreadable) if self.reading is not None else 0
        return self.numbers if self.numbers is not None else tuple(range(left))


def unreadable_reason(
    unreadable: Sequence[Unreadable], numbers: Sequence[int] | None = None
) -> str:
    """Why a reading waits for the GM: how many dice are still unread, each by its number
    (its place, if none is given) and why."""
    count = "1 die" if len(unreadable) == 1 else f"{len(unreadable)} dice"
    numbered = zip(
        numbers if numbers is not None else range(len(unreadable)), unreadable, strict=True
    )
    return f"{count} could not be read: " + "; ".join(f"#{n} {u.reason}" for n, u in numbered)
