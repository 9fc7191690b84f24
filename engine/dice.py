"""Dice as the tray shows them: a kind, a face, and the roll they were thrown in."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class DieError(ValueError):
    """A die or face that cannot exist on a real table."""


class DieKind(StrEnum):
    """The dice the tower knows; d100 is read from a tens d10 and a units d10."""

    D4 = "d4"
    D6 = "d6"
    D8 = "d8"
    D10 = "d10"
    D12 = "d12"
    D20 = "d20"
    D100 = "d100"

    @property
    def sides(self) -> int:
        """Number of faces (100 for the d100 pair)."""
        return int(self.value[1:])

    @classmethod
    def parse(cls, text: str) -> DieKind:
        """The kind named by `text` ("d8", "D8"), or a DieError naming the choices."""
        try:
            return cls(text.strip().lower())
        except ValueError:
            names = ", ".join(k.value for k in cls)
            raise DieError(f"unknown die kind {text!r}: expected one of {names}") from None


@dataclass(frozen=True)
class Die:
    """One die read from the tray: its kind and the face it shows (d10 reads 10 for '0')."""

    kind: DieKind
    face: int
    read: tuple[int, ...] = ()
    """Indices into its roll's reading: the camera dice it was read from (a d100's tens die,
    then its units die); none when the GM typed it in whole."""

    def __post_init__(self) -> None:
        if not isinstance(self.face, int) or isinstance(self.face, bool):
            raise DieError(f"{self.kind.value} face must be a whole number, got {self.face!r}")
        if not 1 <= self.face <= self.kind.sides:
            raise DieError(
                f"{self.kind.value} cannot show {self.face}: faces are 1..{self.kind.sides}"
            )

    def __str__(self) -> str:
        return f"{self.kind.value}={self.face}"


def d100(tens: int, units: int) -> Die:
    """The d100 read from a tens die (00..90) and a units die (0..9); 00 with 0 is 100."""
    if tens not in range(0, 100, 10):
        raise DieError(f"tens die cannot show {tens!r}: faces are 00, 10, .., 90")
    if units not in range(10):
        raise DieError(f"units die cannot show {units!r}: faces are 0..9")
    return Die(DieKind.D100, tens + units or 100)


@dataclass(frozen=True)
class Roll:
    """The dice of one throw and who threw them."""

    dice: tuple[Die, ...]
    roller: str = ""

    def of_kind(self, kind: DieKind) -> tuple[Die, ...]:
        """The dice of one kind, in the order they were read."""
        return tuple(d for d in self.dice if d.kind is kind)

    def faces(self, kind: DieKind) -> tuple[int, ...]:
        """The faces shown by the dice of one kind."""
        return tuple(d.face for d in self.of_kind(kind))
