"""The table's dice folder as the retained `dice` (mqtt/dice.py): what the page lists.

Its state is each file's name, time and size, asked at every publisher step; only when that
changes are the files read, and then without unpacking their photos (`read_card`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from pathlib import Path

from tidetower.firmware.dice_cli import ENOUGH, short_faces
from tidetower.mqtt.dice import MAX_DICE, DicePayload, TableDieBody
from tidetower.vision.dice.table import DiceFileError, DieCard, die_files, folder_state, read_card


class DiceFolder:
    """The table's dice in a folder (asked afresh each time: the tower's reader may move it)."""

    def __init__(self, folder: Callable[[], Path]) -> None:
        self._folder = folder

    def state(self) -> Hashable:
        """Each die file's name, mtime and size, or why the folder cannot be listed."""
        folder = self._folder()
        try:
            return (str(folder), folder_state(folder))
        except (OSError, DiceFileError) as error:  # refused as a whole: the payload says why
            return (str(folder), str(error))

    def payload(self) -> DicePayload:
        """The dice the folder holds now; a file that is not a die's is one line of problems."""
        dice: list[TableDieBody] = []
        problems: list[str] = []
        try:
            files = die_files(self._folder())
        except (OSError, DiceFileError) as error:
            return DicePayload(enough=ENOUGH, problems=[str(error)[:300]])
        for path in files[:MAX_DICE]:
            try:
                dice.append(die_body(read_card(path)))
            except DiceFileError as error:
                problems.append(str(error)[:300])
        return DicePayload(dice=dice, enough=ENOUGH, problems=problems)


def die_body(card: DieCard) -> TableDieBody:
    """One die as the page lists it: its colour as CSS, its photos and the faces short."""
    return TableDieBody(
        name=card.meta.name,
        kind=card.meta.kind,
        printed=card.meta.marks,
        colour=css_colour(card.meta.colour),
        photos=len(card.faces),
        short=short_faces(card.meta.kind, card.taught()),
    )


def css_colour(bgr: tuple[float, float, float]) -> str:
    """A die's BGR colour (0..255) as CSS hex: (40, 150, 60) -> "#3c9628"."""
    blue, green, red = (min(255, max(0, round(c))) for c in bgr)
    return f"#{red:02x}{green:02x}{blue:02x}"
