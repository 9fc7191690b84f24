"""Labelled crops for the kind net, cut from real photos of many makers' dice and from renders.

Each source says where its dice are: dice-values' close-ups are shrunk into a tower-sized
frame and the shipped finder finds the die, numerals-taught, d6-tray and d6-rune55 have
boxes, renders know their own. Every crop is cut from the photo at its own resolution, as the
reader cuts it (`kind.cut`). Each crop keeps its source and fold, so a net can be trained
without a fold and scored on it. No torch here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from tidetower.engine.tray import Box
from tidetower.vision.d6.find import Candidate, find_dice
from tidetower.vision.numerals.kind import KIND_CLASSES, cut
from tidetower.vision.read import to_work_size
from tidetower.vision.score import RUNE55_LEARNED, load_labels, rune55_fold, split_of
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.synth import EVERY_KIND, TraySpec, render_tray

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"
FIND = ReaderSettings()
SHAPES = {"d10-tens": "d10"}
"""A kind net's class is a shape: a tens d10 is a d10 until its numerals say otherwise."""
DIE_SHARE = 0.07
"""A close-up is set in a frame this many die sides per frame side: a tower camera's view."""


@dataclass(frozen=True)
class Sample:
    """One die to cut: where it is in which photo, its class, and the fold it belongs to."""

    image: np.ndarray
    x: float
    y: float
    side: float
    label: int
    fold: str


def family(group: str) -> str:
    """Return the dice-values fold of a group: how it was filmed (top, color, angle, wood)."""
    for name in ("wood", "angle", "color"):
        if name in group:
            return name
    return "top"


def framed(photo: np.ndarray, share: float = DIE_SHARE) -> tuple[np.ndarray, int, int]:
    """Return a close-up set in a larger frame (edges carried out) and the frame's scale."""
    h, w = photo.shape[:2]
    side = int(0.4 * max(h, w) / share)
    top, left = (side - h) // 2, (side - w) // 2
    canvas = cv2.copyMakeBorder(
        photo, top, side - h - top, left, side - w - left, cv2.BORDER_REPLICATE
    )
    return np.asarray(canvas), left, top


def close_up_die(photo: np.ndarray) -> Candidate | None:
    """Find the die of a close-up as a tower would: in a frame where it is tower-sized."""
    canvas, left, top = framed(photo)
    work = to_work_size(canvas, FIND.work_size)
    scale = canvas.shape[1] / work.shape[1]
    found = find_dice(work, FIND)
    if not found:
        return None
    cx, cy = work.shape[1] / 2, work.shape[0] / 2
    best = min(found, key=lambda c: np.hypot(c.x - cx, c.y - cy) / max(c.heat, 1e-3))
    return Candidate(best.x * scale - left, best.y * scale - top, best.side * scale, best.heat)


def dice_values(folder: Path = DATA / "dice-values") -> Iterator[Sample]:
    """Yield the dice-values photos' dice, each where the finder finds it (missed ones skipped)."""
    labels = json.loads((folder / "labels.json").read_text())
    meta = json.loads((folder / "meta.json").read_text())
    for name, label in sorted(labels.items()):
        photo = cv2.imread(str(folder / "images" / name))
        die = close_up_die(photo) if photo is not None else None
        if photo is not None and die is not None:
            cls = KIND_CLASSES.index(label["die"])
            yield Sample(photo, die.x, die.y, die.side, cls, family(meta[name]["group"]))


def boxed(image: np.ndarray, box: Box) -> tuple[float, float, float]:
    """Return a labelled box's centre and side in the photo's pixels."""
    h, w = image.shape[:2]
    side = ((box[2] - box[0]) * w + (box[3] - box[1]) * h) / 2
    return (box[0] + box[2]) * w / 2, (box[1] + box[3]) * h / 2, side


def labelled_trays(
    folder: Path, fold: str, pips: bool, keep: Callable[[str], bool] = lambda name: True
) -> Iterator[Sample]:
    """Yield the boxed dice of a labelled set (d6-tray, d6-rune55, numerals-taught), of the
    photos `keep` takes by file name."""
    for item in load_labels(folder):
        image = cv2.imread(str(item.path)) if item.dice and keep(item.path.name) else None
        if image is None:
            continue
        for die in item.dice:
            kind = "pips" if pips else SHAPES.get(die.die, die.die)
            yield Sample(image, *boxed(image, die.box), KIND_CLASSES.index(kind), fold)


def rune55(folds: tuple[str, ...] = RUNE55_LEARNED) -> Iterator[Sample]:
    """Yield the pip d6 of d6-rune55's photos in these folds (never its test split)."""
    images = DATA / "d6-rune55" / "images"
    yield from labelled_trays(
        DATA / "d6-rune55", "rune55", True, lambda name: rune55_fold(images / name) in folds
    )


def d6_tray_dev() -> Iterator[Sample]:
    """Yield d6-tray's dice outside its test split, as pip d6."""
    yield from labelled_trays(DATA / "d6-tray", "d6-tray", True, lambda n: split_of(n) != "test")


def numerals_taught() -> Iterator[Sample]:
    """Yield numerals-taught's dice (one set, every kind)."""
    yield from labelled_trays(DATA / "numerals-taught", "taught", False)


def not_dice(folder: Path, fold: str, keep: Callable[[str], bool]) -> Iterator[Sample]:
    """Yield the finder's candidates on no labelled die in a fully labelled set, as none: the
    tray's rim, screws and marks, at the camera's resolution."""
    for item in load_labels(folder):
        image = cv2.imread(str(item.path)) if keep(item.path.name) else None
        if image is None:
            continue
        work = to_work_size(image, FIND.work_size)
        scale = image.shape[1] / work.shape[1]
        h, w = work.shape[:2]
        for c in find_dice(work, FIND):
            if not any(_holds(d.box, c, w, h) for d in item.dice):
                none = KIND_CLASSES.index("none")
                yield Sample(image, c.x * scale, c.y * scale, c.side * scale, none, fold)


def renders(seeds: range, spec: TraySpec = EVERY_KIND) -> Iterator[Sample]:
    """Yield rendered dice (every kind, unless the spec says) from their true boxes, and
    every candidate the finder finds, as the die it lands on or none: the reader judges the
    finder's candidates, off-centre ones too."""
    for seed in seeds:
        tray = render_tray(seed, spec)
        h, w = tray.image.shape[:2]
        kinds = [
            SHAPES.get(d.die, d.die) if d.numerals or d.die != "d6" else "pips" for d in tray.dice
        ]
        for d, kind in zip(tray.dice, kinds, strict=True):
            yield Sample(tray.image, *boxed(tray.image, d.box), KIND_CLASSES.index(kind), "synth")
        for c in find_dice(tray.image, FIND):
            hit = next(
                (k for d, k in zip(tray.dice, kinds, strict=True) if _holds(d.box, c, w, h)), "none"
            )
            yield Sample(tray.image, c.x, c.y, c.side, KIND_CLASSES.index(hit), "synth")


def _holds(box: Box, c: Candidate, w: int, h: int) -> bool:
    return box[0] * w <= c.x <= box[2] * w and box[1] * h <= c.y <= box[3] * h


def crops_of(samples: Iterator[Sample], copies: int, seed: int) -> dict[str, np.ndarray]:
    """Cut every sample `copies` times at random turns, shifts and sizes."""
    rng = np.random.default_rng(seed)
    images, labels, folds = [], [], []
    for s in samples:
        for _ in range(copies):
            dx, dy = rng.normal(0, 0.05 * s.side, 2)
            turn = float(rng.uniform(0, 360))
            size = s.side * float(rng.uniform(0.88, 1.12))
            images.append(cut(s.image, s.x + dx, s.y + dy, size, turn))
            labels.append(s.label)
            folds.append(s.fold)
    return {"images": np.stack(images), "labels": np.array(labels), "folds": np.array(folds)}


SYNTH_SEEDS = range(400_000, 401_000)
"""Rendered trays of every kind the kind net learns from, apart from every other training seed."""
PIP_SEEDS = range(401_000, 401_400)
"""Rendered trays of pip d6 (the d6 reader's renders: up to 25 dice, heaps, perspective)."""


def every_crop() -> dict[str, np.ndarray]:
    """Return the kind net's crops from every source, each with its fold."""
    parts = [
        crops_of(dice_values(), 4, 1),
        crops_of(numerals_taught(), 40, 2),
        crops_of(d6_tray_dev(), 2, 3),
        crops_of(rune55(), 1, 4),
        crops_of(renders(SYNTH_SEEDS), 2, 5),
        crops_of(renders(PIP_SEEDS, TraySpec()), 1, 8),
        crops_of(not_dice(DATA / "numerals-taught", "taught", lambda name: True), 2, 6),
        crops_of(not_dice(DATA / "d6-tray", "d6-tray", lambda n: split_of(n) != "test"), 3, 7),
    ]
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


if __name__ == "__main__":
    import sys

    crops = every_crop()
    np.savez_compressed(
        sys.argv[1], images=crops["images"], labels=crops["labels"], folds=crops["folds"]
    )
    names, counts = np.unique(crops["folds"], return_counts=True)
    print(dict(zip(names.tolist(), counts.tolist(), strict=True)))
