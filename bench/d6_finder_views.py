"""Compare die finders on a held-out fold of dev, finer than the whole reader's tally can.

Usage: python bench/d6_finder_views.py FINDER.onnx [FINDER.onnx ...] [--fold a|b|c]
For each finder: the dice it finds, misses and invents after suppression (as the reader runs
it), and from its raw heatmap the hottest cell in the middle of each labelled die: how many
dice sit under the find threshold or under twice it (near misses), and the mean negative log
of that heat. Peaks above the threshold away from every label are stray. Use finders held
out of the fold (`python -m tidetower.vision.training.d6 --holdout F --only finder`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import d6_face_views
import numpy as np
import vision_d6

from tidetower.vision.d6.find import find_dice, heatmap, peaks
from tidetower.vision.progress import progress
from tidetower.vision.read import to_work_size
from tidetower.vision.score import DEV_FOLDS, Label
from tidetower.vision.settings import ReaderSettings

SETTINGS = ReaderSettings()
MIDDLE = 0.3
"""The middle of a label box, half-width as a share of its side: labels are loose (1.2x)."""


def die_heats(
    heat: np.ndarray, cell: float, labels: tuple[Label, ...], w: int, h: int
) -> list[float]:
    """Return the hottest cell in the middle of each labelled die."""
    out = []
    for label in labels:
        x0, y0, x1, y1 = label.box
        cx, cy, half = (x0 + x1) / 2 * w, (y0 + y1) / 2 * h, MIDDLE * (x1 - x0) * w
        r0, r1 = int((cy - half) / cell), int((cy + half) / cell) + 1
        c0, c1 = int((cx - half) / cell), int((cx + half) / cell) + 1
        patch = heat[max(r0, 0) : max(r1, 1), max(c0, 0) : max(c1, 1)]
        out.append(float(patch.max()) if patch.size else 0.0)
    return out


def stray_peaks(heat: np.ndarray, cell: float, labels: tuple[Label, ...], w: int, h: int) -> int:
    """Return how many heatmap peaks above the find threshold lie outside every label box."""
    stray = 0
    for row, col in peaks(heat, SETTINGS.find_threshold):
        x, y = (col + 0.5) * cell / w, (row + 0.5) * cell / h
        stray += not any(b[0] <= x <= b[2] and b[1] <= y <= b[3] for b in (la.box for la in labels))
    return stray


def tally(fold: str) -> str:
    """Return one line of figures for the finder now in use."""
    found = missed = extra = stray = 0
    heats: list[float] = []
    with progress(vision_d6.real("devval", fold), f"finding on fold {fold}") as photos:
        for path, labels in photos:
            work = to_work_size(cv2.imread(str(path)), SETTINGS.work_size)
            h, w = work.shape[:2]
            candidates = find_dice(work, SETTINGS)
            hits = len(d6_face_views.matched(candidates, labels, w, h))
            found, missed, extra = (
                found + hits,
                missed + len(labels) - hits,
                extra + len(candidates) - hits,
            )
            heat, _sides, cell = heatmap(work)
            heats += die_heats(heat, cell, labels, w, h)
            stray += stray_peaks(heat, cell, labels, w, h)
    t, a = SETTINGS.find_threshold, np.array(heats)
    nll = -np.log(np.clip(a, 1e-9, 1.0)).mean()
    return (
        f"found {found}, missed {missed}, extra {extra} | raw: under {t} {(a < t).sum()}, "
        f"under {2 * t} {(a < 2 * t).sum()}, die nll {nll:.4f}, stray peaks {stray}"
    )


def main() -> None:
    """Score each finder on one fold of dev."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("finders", type=Path, nargs="+")
    parser.add_argument("--fold", choices=sorted(DEV_FOLDS), default="a")
    args = parser.parse_args()
    for finder in args.finders:
        vision_d6.use_models(finder.parent)
        print(f"{finder.parent.name}/{finder.stem}: {tally(args.fold)}", flush=True)


if __name__ == "__main__":
    main()
