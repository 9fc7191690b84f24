"""Between the camera's dice and the rules': a face the GM types, a rules die's camera dice."""

from __future__ import annotations

from tidetower.engine.dice import Die, DieError, DieKind
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


def camera_kinds(kind: DieKind) -> tuple[str, ...]:
    """Return the dice the camera reads for one die of the rules: a d100 is a tens and a
    units d10 (as tray.roll_of pairs them back); any other die is its own kind."""
    return ("d10-tens", "d10") if kind is DieKind.D100 else (kind.value,)
