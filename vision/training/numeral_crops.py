"""Labelled crops for the numeral net: found by the shipped finder, as the reader will see them.

Synthetic trays of every kind are read by the finder; each candidate is cut as the reader
cuts it and labelled by the die it lands on (or "none"), and each die is cut once more from
its true box, jittered. Real pip d6 from the d6-tray photos the nets may learn from (never
the test split) are added as "pips", and the real numeral dice of numerals-taught, each face
cut at many turns and sizes and recoloured to stand in for other makers' plastics. No torch
here: the crops can be made on any machine.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from tidetower.engine.tray import Box
from tidetower.vision.d6.find import Candidate, find_dice
from tidetower.vision.d6.nets import face_crop
from tidetower.vision.numerals.nets import CLASSES, MARGIN, NUMERAL_KINDS
from tidetower.vision.score import fold_of, load_labels
from tidetower.vision.settings import ReaderSettings
from tidetower.vision.synth import EVERY_KIND, SynthDie, render_tray

TRAIN_SPEC = replace(EVERY_KIND, count=(2, 12), side=(0.03, 0.09), heaped=0.5)
"""Synthetic trays the numeral net learns from: every kind, on every floor."""
FIND = ReaderSettings(find_threshold=0.15)
"""A lower finder threshold than the reader's, so training sees the faint candidates too."""
SIZE = 64
"""Side of the crop the net reads, in pixels."""
CLASS_KINDS = frozenset(NUMERAL_KINDS)
"""Kinds the net has classes for."""


@dataclass(frozen=True)
class Crops:
    """Crops (N, SIZE, SIZE, 3) uint8 BGR and their class indices into CLASSES."""

    images: np.ndarray
    labels: np.ndarray

    @staticmethod
    def join(parts: Iterable[Crops]) -> Crops:
        """Return all parts as one set."""
        parts = list(parts)
        return Crops(
            np.concatenate([p.images for p in parts]), np.concatenate([p.labels for p in parts])
        )


def class_of(die: str, value: int, numerals: bool) -> int:
    """Return the class index of a die: pips for a pip d6, else its kind and face."""
    if die == "d6" and not numerals:
        return CLASSES.index("pips")
    return CLASSES.index(f"{die}:{value}")


def _inside(c: Candidate, box: Box, w: int, h: int) -> bool:
    return box[0] * w <= c.x <= box[2] * w and box[1] * h <= c.y <= box[3] * h


def label_candidates(
    candidates: list[Candidate], truth: list[tuple[Box, int]], size: tuple[int, int]
) -> list[int]:
    """Label each candidate with the class of the die whose box holds its centre, else none."""
    w, h = size
    out = []
    for c in candidates:
        hits = [
            (abs((b[0] + b[2]) * w / 2 - c.x) + abs((b[1] + b[3]) * h / 2 - c.y), label)
            for b, label in truth
            if _inside(c, b, w, h)
        ]
        out.append(min(hits)[1] if hits else 0)
    return out


def cut(image: np.ndarray, x: float, y: float, side: float, rng: np.random.Generator) -> np.ndarray:
    """Cut one crop as the reader does, at a random turn."""
    return face_crop(image, x, y, side * MARGIN, float(rng.uniform(0, 360)), SIZE)


def photo_crops(
    image: np.ndarray, truth: list[tuple[Box, int]], rng: np.random.Generator, jittered: int = 1
) -> Crops:
    """Return the finder's candidates in a photo, cut and labelled, and jittered true boxes."""
    h, w = image.shape[:2]
    candidates = find_dice(image, FIND)
    labels = label_candidates(candidates, truth, (w, h))
    images = [cut(image, c.x, c.y, c.side, rng) for c in candidates]
    for box, label in truth:
        bw, bh = (box[2] - box[0]) * w, (box[3] - box[1]) * h
        side = (bw + bh) / 2
        for _ in range(jittered):
            dx, dy = rng.normal(0, 0.06 * side, 2)
            x, y = (box[0] + box[2]) * w / 2 + dx, (box[1] + box[3]) * h / 2 + dy
            images.append(cut(image, x, y, side * rng.uniform(0.85, 1.15), rng))
            labels.append(label)
    if not images:
        return Crops(np.zeros((0, SIZE, SIZE, 3), np.uint8), np.zeros(0, np.int64))
    return Crops(np.stack(images), np.array(labels, np.int64))


def synth_crops(seeds: range) -> Crops:
    """Return the labelled crops of synthetic trays with these seeds."""
    parts = []
    for seed in seeds:
        tray = render_tray(seed, TRAIN_SPEC)
        truth = [(d.box, class_of(d.die, d.value, d.numerals)) for d in tray.dice]
        parts.append(photo_crops(tray.image, truth, np.random.default_rng(seed)))
    return Crops.join(parts)


def truth_of(dice: Iterable[SynthDie]) -> list[tuple[Box, int]]:
    """Return (box, class) for rendered dice."""
    return [(d.box, class_of(d.die, d.value, d.numerals)) for d in dice]


def real_pip_crops(folder: Path, turns: int = 3) -> Crops:
    """Return crops of the labelled d6-tray photos outside the test split, as pip dice."""
    parts = []
    rng = np.random.default_rng(7)
    for item in load_labels(folder):
        if fold_of(item.path.name) == "test":
            continue
        image = cv2.imread(str(item.path))
        if image is None:
            continue
        scale = 640 / max(image.shape[:2])
        small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        truth = [(d.box, CLASSES.index("pips")) for d in item.dice]
        for _ in range(turns):
            parts.append(photo_crops(small, truth, rng))
    return Crops.join(parts)


def recolour(crop: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Turn a crop's hues and vary its saturation: the same die in another maker's plastic."""
    hsv = cv2.cvtColor(crop, cv2.COLOR_BGR2HSV).astype(np.int32)
    hsv[..., 0] = (hsv[..., 0] + int(rng.integers(0, 180))) % 180
    hsv[..., 1] = np.clip(hsv[..., 1] * rng.uniform(0.4, 1.1), 0, 255)
    return np.asarray(cv2.cvtColor(hsv.astype(np.uint8), cv2.COLOR_HSV2BGR))


def real_numeral_crops(
    folder: Path, leave_out: frozenset[str] = frozenset(), turns: int = 150, seed: int = 11
) -> Crops:
    """Return crops of the real numeral dice photos, but those of the kinds left out.

    d4 are skipped (the net has no d4 class: a taught profile reads them). Two in three crops
    are recoloured.
    """
    parts = []
    rng = np.random.default_rng(seed)
    for item in load_labels(folder):
        dice = [d for d in item.dice if d.die in CLASS_KINDS and d.die not in leave_out]
        image = cv2.imread(str(item.path)) if dice else None
        if image is None:
            continue
        scale = 640 / max(image.shape[:2])
        small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        truth = [(d.box, class_of(d.die, d.value, True)) for d in dice]
        parts.append(photo_crops(small, truth, rng, jittered=turns))
    crops = Crops.join(parts)
    for i in np.nonzero(rng.random(len(crops.labels)) < 2 / 3)[0]:
        crops.images[i] = recolour(crops.images[i], rng)
    return crops
