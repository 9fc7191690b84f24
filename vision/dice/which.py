"""Which of the table's dice a found die is, and its face read by that die's own reader.

A found die is one of the table's dice when its plastic is near that die's colour and that
die's reader matches it; of several such, the one whose reader matches best. A numeral die
of the table is then read by its own reader only (never the pip reader), a pip die keeps
the pip reader's face under its name, and a die none of the table's dice claims is read as
before, as a die the tower has not met.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from tidetower.engine.tray import DieRead, Unreadable
from tidetower.vision.colours import body_colour, lab_of
from tidetower.vision.dice.matcher import LEAST, FaceMatch, FaceMatcher, die_crop, keys_of
from tidetower.vision.dice.matcher import taught_matcher as _taught_matcher
from tidetower.vision.dice.table import TableDie, die_files, load_dice
from tidetower.vision.kinds import face_text, face_values

COLOUR_NEAR = 30.0
"""How far (OpenCV's 8-bit Lab) a found die's plastic may be from a table die's and still be
it: light and shade move a die's colour by 10-20 between throws."""

Verdict = DieRead | Unreadable | None


@dataclass(frozen=True)
class Known:
    """One of the table's dice as the reader uses it: its colour in Lab and its reader."""

    die: TableDie
    lab: np.ndarray
    matcher: FaceMatcher | None
    """None for a pip die (the pip reader reads its face) or one with no photos yet."""


def known(die: TableDie) -> Known:
    """Return a die ready to read: its reader built from its photos."""
    lab = lab_of(die.meta.colour)
    if die.meta.marks == "pips" or not die.faces:
        return Known(die, lab, None)
    crops = list(die.crops)
    return Known(die, lab, _taught_matcher(crops, list(die.faces), face_values(die.kind)))


def table_at(folder: Path) -> tuple[Known, ...]:
    """Return the table's dice in a folder, built once until a file in it changes."""
    files = die_files(folder)
    state = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    return _built(str(folder), state)


@lru_cache(maxsize=8)
def _built(folder: str, state: tuple[tuple[str, int, int], ...]) -> tuple[Known, ...]:
    """The dice of a folder in a given state (the cache key), each with its reader."""
    return tuple(known(die) for die in load_dice(Path(folder)))


def by_table(frame: np.ndarray, verdicts: list[Verdict], table: tuple[Known, ...]) -> list[Verdict]:
    """Read each found die by the table die it is, where one claims it."""
    if not table:
        return verdicts
    return [told(frame, v, table) if v is not None else v for v in verdicts]


def told(frame: np.ndarray, verdict: DieRead | Unreadable, table: tuple[Known, ...]) -> Verdict:
    """One found die, read by the table die it is (or as it was, when none claims it)."""
    lab = lab_of(body_colour(frame, verdict.box))
    near = [k for k in table if float(np.linalg.norm(k.lab - lab)) <= COLOUR_NEAR]
    readers = [k for k in near if k.matcher is not None]
    if readers:
        keys = keys_of(die_crop(frame, verdict.box))
        reads = [(k, k.matcher.judge(k.matcher.scores(keys))) for k in readers if k.matcher]
        best, match = max(reads, key=lambda r: r[1].score)
        if match.score >= LEAST:
            return own_read(verdict, best, match)
    pips = [k for k in near if k.die.meta.marks == "pips"]
    if pips and isinstance(verdict, DieRead) and verdict.die == "d6":
        return DieRead(
            "d6",
            verdict.value,
            verdict.box,
            verdict.confidence,
            verdict.check,
            False,
            pips[0].die.name,
        )
    return verdict


def own_read(verdict: DieRead | Unreadable, die: Known, match: FaceMatch) -> DieRead | Unreadable:
    """The face a table die's own reader answers, or unreadable with its two likeliest."""
    name, kind = die.die.name, die.die.kind
    if match.face is None:
        said = " or ".join(face_text(kind, f) for f in match.likeliest)
        reason = f"{name}: its own reader is not sure ({said})"
        return Unreadable(verdict.box, reason, kind, match.likeliest)
    runner = match.ranked[1][1] if len(match.ranked) > 1 else 0
    confidence = match.score / (match.score + runner)
    check = f"{match.score} matches with its taught photos"
    return DieRead(kind, match.face, verdict.box, confidence, check, False, name)
