"""Teach the table's dice from photos whose faces are known: each die's crops, kept as a die.

The same crops come from labelled photos (`tidetower teach PROFILE --labels`) and from
throws the GM confirmed at the tower (`tidetower teach --die`, and every throw of a taught
die the GM confirms or corrects in play): a die's photos are its reader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tidetower.engine.tray import Box
from tidetower.vision.colours import body_colour, colour_name
from tidetower.vision.dice.matcher import die_crop
from tidetower.vision.dice.table import (
    SUFFIX,
    FaceMarks,
    TableDie,
    load_die,
    new_die,
    save_die,
    slug,
)


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
