"""Teach the table's dice from photos whose faces are known: each die's crops, kept as a die.

The same crops come from labelled photos (`tidetower teach PROFILE --labels`) and from
throws the GM confirmed at the tower (`tidetower teach --die`, and every throw of a taught
die the GM confirms or corrects in play): a die's photos are its reader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from tidetower.engine.tray import Box, Reading
from tidetower.vision.colours import body_colour, colour_name
from tidetower.vision.dice.matcher import die_crop
from tidetower.vision.dice.table import (
    SUFFIX,
    DiceFileError,
    FaceMarks,
    TableDie,
    find_die,
    load_die,
    new_die,
    save_die,
    slug,
)

LEARNT_PER_FACE = 8
"""Photos a face keeps as the GM's corrections join them, the newest: more than teaching
asks (3), few enough that a die's reader stays quick (docs/BENCHMARKS.md)."""


@dataclass(frozen=True)
class Seen:
    """One photo of a die whose face is known: its crop, its plastic, what it shows."""

    kind: str
    value: int
    crop: np.ndarray
    colour: tuple[float, float, float]
    pips: bool = False
    """The pip counter counted the face it shows: a pip die."""


def seen_in(frame: np.ndarray, box: Box, kind: str, value: int, pips: bool = False) -> Seen:
    """Return a die of known face in a BGR frame, cut as its reader cuts it."""
    return Seen(kind, value, die_crop(frame, box), body_colour(frame, box), pips)


def taught_dice(seen: Sequence[Seen], names: Mapping[str, str]) -> list[TableDie]:
    """Return one die per kind seen, named as the table named it, else by colour and kind."""
    by_kind: dict[str, list[Seen]] = {}
    for one in seen:
        by_kind.setdefault(one.kind, []).append(one)
    return [_die_of(kind, photos, names.get(kind, "")) for kind, photos in by_kind.items()]


def _die_of(kind: str, photos: list[Seen], name: str) -> TableDie:
    """One die from its photos: its colour the median of theirs, pips if most were counted."""
    colour = tuple(float(c) for c in np.median([p.colour for p in photos], axis=0))
    marks: FaceMarks = "pips" if sum(p.pips for p in photos) * 2 > len(photos) else "numerals"
    bgr = (colour[0], colour[1], colour[2])
    die = new_die(name or f"{colour_name(bgr)} {kind}", kind, marks, bgr)
    crops = np.stack([p.crop for p in photos])
    return die.with_photos(crops, tuple(p.value for p in photos))


def keep_taught(folder: Path, dice: Sequence[TableDie]) -> list[TableDie]:
    """Write each die into the folder, adding its photos to a die of that name already there
    (a damaged file of that name is refused in one line, never written over)."""
    kept = []
    for die in dice:
        path = folder / f"{slug(die.name)}{SUFFIX}"
        there = load_die(path) if path.exists() else None  # a bad file is refused, not lost
        if there is not None and there.kind == die.kind:
            die = there.with_photos(die.crops, die.faces)
        save_die(folder, die)
        kept.append(die)
    return kept


def learn_typed(folder: Path, frame: np.ndarray, reading: Reading) -> tuple[str, ...]:
    """Join each die the GM typed that the reader knew as one of the table's to that die's
    photos, so a taught die keeps learning from the throws the GM settles; returns the dice
    that learned (a die since forgotten, or of another kind now, learns nothing)."""
    learnt = []
    for read in reading.dice:
        if not (read.typed and read.named):
            continue
        try:
            die = load_die(find_die(folder, read.named))
        except DiceFileError:
            continue
        if die.kind != read.die or die.meta.marks == "pips":
            continue
        crop = seen_in(frame, read.box, read.die, read.value).crop
        save_die(folder, newest(die.with_photos(crop[None], (read.value,)), LEARNT_PER_FACE))
        learnt.append(die.name)
    return tuple(learnt)


def newest(die: TableDie, per_face: int) -> TableDie:
    """The die with only the newest `per_face` photos of each face."""
    keep: list[int] = []
    counts: dict[int, int] = {}
    for i in reversed(range(len(die.faces))):
        counts[die.faces[i]] = counts.get(die.faces[i], 0) + 1
        if counts[die.faces[i]] <= per_face:
            keep.append(i)
    keep.reverse()
    return replace(die, crops=die.crops[keep], faces=tuple(die.faces[i] for i in keep))
