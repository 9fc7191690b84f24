"""From what the camera read to the dice the rules take: kinds, d10 faces and d100 pairs."""

from __future__ import annotations

from tidetower.engine.dice import Die, DieError, DieKind, Roll
from tidetower.engine.tray import Reading
from tidetower.vision.kinds import check_face


def entered_face(die: str, value: int) -> int:
    """Return the face the GM typed as the camera would read it (a units d10's 10 is its 0);
    refuse, as a DieError, a face that no real die could show."""
    if die == "d10" and value == 10:
        value = 0
    try:
        if die == "d100":
            Die(DieKind.D100, value)
        else:
            check_face(die, value)
    except ValueError as error:
        raise DieError(str(error)) from None
    return value


def roll_of(reading: Reading) -> Roll:
    """The throw as the rules see it: each tens d10 read with a units d10 is one d100
    (00 and 0 is 100), a units d10 alone shows 0 as 10, and a tens d10 alone is refused."""
    combined = reading.combined
    paired = {i for c in combined for i in c.dice}
    dice = [Die(DieKind.D100, c.value) for c in combined]
    for i, read in enumerate(reading.dice):
        if i in paired:
            continue
        if read.die == "d10-tens":
            raise DieError("a tens d10 (00..90) was read without a units d10 to make a d100")
        if read.die == "d10":
            dice.append(Die(DieKind.D10, read.value or 10))
        else:
            dice.append(Die(DieKind.parse(read.die), read.value))
    return Roll(tuple(dice))


def camera_kinds(kind: DieKind) -> tuple[str, ...]:
    """Return the dice the camera reads for one die of the rules: a d100 is a tens and a
    units d10 (as roll_of pairs them back); any other die is its own kind."""
    return ("d10-tens", "d10") if kind is DieKind.D100 else (kind.value,)
