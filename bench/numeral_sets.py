"""Read the real numeral photos with kind nets held out of what they read: dice-values by
filming (top, color, angle, wood), numerals-taught as a source of its own.

Each dice-values close-up is set in a tower-sized frame (`kind_crops.framed`: the die about
7 % of the frame, as the enclosure's camera sees a 12 mm die) and read as a tray: the finder
works on the 640 px copy, kinds and faces are read from the frame. The die nearest the frame's
middle is the one scored.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from tidetower.engine.tray import DieRead, Reading, Unreadable
from tidetower.vision.progress import progress
from tidetower.vision.read import read_dice
from tidetower.vision.score import load_labels
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.training.kind_crops import DATA, family, framed

FOLDS = ("top", "color", "angle", "wood", "taught")


@dataclass(frozen=True)
class Photo:
    """One labelled die to read, and the fold (source or filming) it belongs to."""

    image: np.ndarray
    kind: str
    value: int
    group: str
    fold: str


@dataclass(frozen=True)
class Outcome:
    """What the reader made of one labelled die."""

    photo: Photo
    said: str
    """right, wrong, unreadable or missed."""
    kind_right: bool
    lead: float | None = None


def dice_values(step: int = 1) -> Iterator[Photo]:
    """Yield every `step`-th dice-values photo, framed as a tower camera would see it."""
    folder = DATA / "dice-values"
    labels = json.loads((folder / "labels.json").read_text())
    meta = json.loads((folder / "meta.json").read_text())
    for name in sorted(labels)[::step]:
        photo = cv2.imread(str(folder / "images" / name))
        group = meta[name]["group"]
        canvas, _, _ = framed(photo)
        yield Photo(canvas, labels[name]["die"], labels[name]["value"], group, family(group))


def numerals_taught() -> Iterator[Photo]:
    """Yield numerals-taught's photos (one die each, on a real tower's tray)."""
    for item in load_labels(DATA / "numerals-taught"):
        for die in item.dice:
            image = cv2.imread(str(item.path))
            yield Photo(image, die.die, die.value, item.path.stem.rsplit("_", 1)[0], "taught")


def nearest(reading: Reading) -> DieRead | Unreadable | None:
    """Return the die read (or unreadable) nearest the middle of the frame."""
    found: list[DieRead | Unreadable] = [*reading.dice, *reading.unreadable]

    def off(d: DieRead | Unreadable) -> float:
        return float(np.hypot((d.box[0] + d.box[2]) / 2 - 0.5, (d.box[1] + d.box[3]) / 2 - 0.5))

    best = min(found, key=off, default=None)
    return best if best is not None and off(best) < 0.25 else None


def outcome(photo: Photo, reading: Reading) -> Outcome:
    """Score the die nearest the middle against its label."""
    die = nearest(reading)
    if die is None:
        return Outcome(photo, "missed", False)
    kind_right = die.die == photo.kind
    if isinstance(die, Unreadable):
        return Outcome(photo, "unreadable", kind_right)
    right = kind_right and die.value == photo.value
    return Outcome(photo, "right" if right else "wrong", kind_right)


def read_all(
    photos: Iterator[Photo], nets: dict[str, Path], settings: ReaderSettings, what: str
) -> list[Outcome]:
    """Read each photo with the kind net held out of its fold."""
    out = []
    with progress(list(photos), f"reading {what}") as each:
        for photo in each:
            net = nets.get(photo.fold)
            mine = replace(settings, kind_net=str(net)) if net else settings
            out.append(outcome(photo, read_dice(photo.image, settings=mine)))
    return out


def table(outcomes: list[Outcome], by: str) -> list[str]:
    """Return Markdown rows of right, wrong, unreadable, missed and kind right, per `by`."""
    groups: dict[str, list[Outcome]] = {}
    for o in outcomes:
        groups.setdefault(getattr(o.photo, by), []).append(o)
    rows = []
    for key in sorted(groups):
        rows.append(_row(key, groups[key]))
    rows.append(_row("all", outcomes))
    return rows


def _row(name: str, outcomes: list[Outcome]) -> str:
    n = max(len(outcomes), 1)
    said = Counter(o.said for o in outcomes)
    kinds = sum(o.kind_right for o in outcomes)
    cells = [f"{100 * said[s] / n:.1f} %" for s in ("right", "wrong", "unreadable", "missed")]
    return f"| {name} | {len(outcomes)} | " + " | ".join(cells) + f" | {100 * kinds / n:.1f} % |"


TABLE_HEADER = (
    "| set | dice | right | wrong | unreadable | missed | kind right |\n"
    "|---|---|---|---|---|---|---|"
)
