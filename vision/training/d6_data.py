"""The d6 nets' training data: the labelled photos of each `--photos` set (d6-tray's folds not
held out, d6-rune55's train and valid splits) and synthetic trays of each `--kinds` recipe, in
one form (`Photo`); and the nets' sizes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np

from tidetower.vision.progress import progress
from tidetower.vision.score import (
    FOLDS,
    RUNE55_LEARNED,
    LabelledImage,
    fold_of,
    load_labels,
    rune55_fold,
)
from tidetower.vision.synth import SynthTray, TraySpec, render_tray
from tidetower.vision.training.d6_paste import Photo

ROOT = Path(__file__).resolve().parents[2]
"""The source checkout (training runs from one: the photos are in ../shared beside it)."""
DATA = ROOT / ".." / "shared" / "data" / "d6-tray"
RUNE55 = DATA.parent / "d6-rune55"
MODELS = ROOT / "vision" / "d6"
SYNTH_SEED = 10_000
"""Seed of the first synthetic training tray; the trays are consecutive seeds."""


def labelled_photos(held_out: list[str]) -> list[Photo]:
    """Load d6-tray's labelled photos with die centres, sides and values in pixels, but for
    the folds held out."""
    return [
        _labelled(item) for item in load_labels(DATA) if fold_of(item.path.name) not in held_out
    ]


def rune55_photos() -> list[Photo]:
    """Load d6-rune55's labelled photos of the splits nets may learn from (never its test)."""
    items = load_labels(RUNE55)
    return [
        _labelled(item) for item in items if item.dice and rune55_fold(item.path) in RUNE55_LEARNED
    ]


def photo_sets(names: list[str], held_out: list[str]) -> list[list[Photo]]:
    """Load each `--photos` set named: d6-tray ("tray") and d6-rune55 ("rune55")."""
    loaders = {"tray": lambda: labelled_photos(held_out), "rune55": rune55_photos}
    return [loaders[name]() for name in names]


def learned_folds(names: list[str], held_out: list[str]) -> list[str]:
    """Return the folds of real photos the named sets teach, for the nets' `trained_on`."""
    tray = [fold for fold in FOLDS if fold not in held_out] if "tray" in names else []
    return tray + (list(RUNE55_LEARNED) if "rune55" in names else [])


def _labelled(item: LabelledImage) -> Photo:
    """Read a labelled photo as the nets learn it: image, die centres, sides and values."""
    image = cv2.imread(str(item.path))
    if image is None:
        raise OSError(f"{item.path}: not an image OpenCV can read")
    h, w = image.shape[:2]
    boxes = np.array([d.box for d in item.dice]).reshape(-1, 4) * [w, h, w, h]
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    sides = (boxes[:, 2] - boxes[:, 0] + boxes[:, 3] - boxes[:, 1]) / 2
    return image, centres, sides, np.array([d.value for d in item.dice])


ALL_KINDS = TraySpec(
    count=(1, 20),
    kinds=("d6", "d6", "d8", "d10", "d10-tens", "d12", "d20"),
    numeral_d6=0.3,
    floors=("grey", "grey", "dark", "felt", "wood"),
)
"""`--kinds all`: synthetic trays of every kind on every floor, for a finder of every die."""
VARIED = TraySpec(floors=("grey", "grey", "dark", "felt", "wood", "cloth"), neutral_bodies=0.5)
"""`--kinds varied`: pip d6 on every floor but printed mats, half with near-neutral bodies."""
VARIED_MIX = (*(VARIED,) * 5, replace(VARIED, side=(0.12, 0.32), count=(1, 5), heaped=0.0))
"""The specs `--kinds varied` cycles through by seed: one tray in six has big dice."""
KINDS = {"d6": (TraySpec(),), "all": (ALL_KINDS,), "varied": VARIED_MIX}
"""The synthetic tray specs of each `--kinds` choice, cycled through by seed."""


def synth_photos(count: int, seed: int, specs: tuple[TraySpec, ...] = (TraySpec(),)) -> list[Photo]:
    """Render synthetic trays in the same form as dev photos, tray k from specs[k % len]."""
    with progress(range(seed, seed + count), f"rendering {count} synthetic trays") as seeds:
        out = [_photo(render_tray(s, specs[(s - seed) % len(specs)])) for s in seeds]
    return out


def _photo(tray: SynthTray) -> Photo:
    """A rendered tray in the form of a dev photo: image, die centres, sides and values."""
    h, w = tray.image.shape[:2]
    boxes = np.array([d.box for d in tray.dice]) * [w, h, w, h]
    centres = (boxes[:, :2] + boxes[:, 2:]) / 2
    sides = (boxes[:, 2] - boxes[:, 0] + boxes[:, 3] - boxes[:, 1]) / 2
    return tray.image, centres, sides, np.array([d.value for d in tray.dice])


FIND_SIZE = 320
"""Side of the finder's square input (--find-size); the runtime reads it from the model."""
FACE_SIZE = 40
"""Side of the face reader's crop (--face-size); the runtime reads it from the model."""
ZOOMED = 0.0
"""--zoomed SHARE: share of face crops that look closely at the corner of a die (0.35-0.6
of its box, centred 0.25-0.45 of it off the die's centre), taught as "no die". Tried in
run #10 at 0.1, not adopted: it cut pip false positives but lost a die cut by the frame."""
