"""Find die centres and sizes with the shipped finder net: robust to touching and pale dice."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from tidetower.engine.tray import Box
from tidetower.vision.d6.nets import FIND_STRIDE, find_size, letterbox, run_finder
from tidetower.vision.settings import ReaderSettings

DICE_FINDER = Path(__file__).resolve().parents[1] / "numerals" / "dice_finder.onnx"
"""A second finder, trained on every kind: numeral dice the d6 finder misses."""
MIN_DIE_PX = 16
"""The smallest die, in pixels across, that the reader reads more often right than not: on
synthetic trays (seeds 9,300,000 on, 25 trays a size) it read 26 % of dice 12 px across,
47 % at 14, 69 % at 16, 87 % at 20 and 98 % at 24 (docs/firmware.md: 25 to 55 read best).
Its finder learned no die below 13 px (3.5 % of the work image's side, less 20 % for the
smaller dice and 25 % for zoom)."""
OTHERS_APART = 0.7
"""How far, in die sides, a dice finder peak must lie from every d6 finder peak to be a die
of its own: half a side (same_die) let a die cut by the frame edge count twice; 0.7 is the
least that did not, and cost 1.1 points of numeral recall on 60 synthetic trays (seeds
8,000,000+: 99.3 % at 0.5, 98.2 % at 0.7, 97.2 % at 0.8)."""


@dataclass(frozen=True)
class Candidate:
    """A place in the work image that the finder believes holds one die."""

    x: float
    y: float
    side: float
    """Die side in work-image pixels."""
    heat: float
    """Finder confidence that a die is centred here, 0..1."""

    def box(self, width: int, height: int) -> Box:
        """Return the die's normalised box, clipped to the photo."""
        half = self.side / 2
        return (
            max(0.0, (self.x - half) / width),
            max(0.0, (self.y - half) / height),
            min(1.0, (self.x + half) / width),
            min(1.0, (self.y + half) / height),
        )


def peaks(heat: np.ndarray, threshold: float) -> list[tuple[int, int]]:
    """Return (row, col) of local maxima of the heatmap above threshold."""
    local = cv2.dilate(heat, np.ones((3, 3), np.uint8))
    rows, cols = np.nonzero((heat >= local) & (heat > threshold))
    return list(zip(rows.tolist(), cols.tolist(), strict=True))


def refine(heat: np.ndarray, row: int, col: int) -> tuple[float, float]:
    """Return a sub-cell centre: the heat-weighted mean of the 3x3 around a peak."""
    r0, c0 = max(row - 1, 0), max(col - 1, 0)
    patch = heat[r0 : row + 2, c0 : col + 2]
    yy, xx = np.mgrid[r0 : r0 + patch.shape[0], c0 : c0 + patch.shape[1]]
    total = float(patch.sum())
    return float((xx * patch).sum()) / total, float((yy * patch).sum()) / total


def heatmap(
    work: np.ndarray, mirrored: bool = False, model: Path | None = None
) -> tuple[np.ndarray, np.ndarray, float]:
    """Return a finder's centre heat and die sides for a work image, and the work-image
    pixels per heatmap cell; `mirrored` averages in the finder's reading of its mirror image.
    The d6 finder's, unless another model is given."""
    square, fit = letterbox(work, find_size(model))
    heat, sides = run_finder(square, model)
    if mirrored:
        mirror_heat, mirror_sides = run_finder(mirrored_input(square), model)
        heat, sides = (heat + mirror_heat[:, ::-1]) / 2, (sides + mirror_sides[:, ::-1]) / 2
    return heat, sides, FIND_STRIDE / fit.scale


def mirrored_input(square: np.ndarray) -> np.ndarray:
    """Mirror the finder's input left to right, shifted so its cells mirror onto whole cells
    (cell j covers pixels from FIND_STRIDE * j, so plain mirroring lands between cells;
    the finder's input side is a multiple of FIND_STRIDE)."""
    shift = FIND_STRIDE - 1
    out = np.full_like(square, 128)
    out[:, : square.shape[1] - shift] = square[:, ::-1][:, shift:]
    return out


def find_dice(
    work: np.ndarray,
    settings: ReaderSettings,
    tray: Box | None = None,
    floor: np.ndarray | None = None,
) -> list[Candidate]:
    """Return die candidates in a work image, inside the tray and unlike the empty floor."""
    found = finder_peaks(work, settings.find_threshold, settings.find_mirrored)
    if settings.numerals and DICE_FINDER.exists():
        found = with_others(
            found, finder_peaks(work, settings.find_threshold, False, DICE_FINDER), settings
        )
    h, w = work.shape[:2]
    found = [c for c in found if 0 <= c.x < w and 0 <= c.y < h]
    if tray is not None:
        found = [c for c in found if _inside(c, tray, w, h)]
    if floor is not None:
        found = [c for c in found if _unlike_floor(c, work, floor, settings.background_contrast)]
    return suppress(found, settings)


def finder_peaks(
    work: np.ndarray, threshold: float, mirrored: bool, model: Path | None = None
) -> list[Candidate]:
    """Return a finder's peaks over a threshold as candidates in work-image pixels."""
    heat, sides, to_work = heatmap(work, mirrored, model)
    found = []
    for row, col in peaks(heat, threshold):
        x, y = refine(heat, row, col)
        side = max(float(sides[row, col]), 1.0) * to_work
        found.append(Candidate(x * to_work, y * to_work, side, float(heat[row, col])))
    return found


def with_others(
    found: list[Candidate], others: list[Candidate], settings: ReaderSettings
) -> list[Candidate]:
    """Add the dice finder's candidates where the d6 finder found nothing of the same die:
    the d6 finder keeps its pip d6, the dice finder adds the numeral dice it missed. Its
    peaks within OTHERS_APART sides of a d6 find are the same die (or a part of it)."""
    added = [
        o
        for o in others
        if not any(
            np.hypot(o.x - c.x, o.y - c.y) < OTHERS_APART * max(o.side, c.side) for c in found
        )
    ]
    return found + added


def suppress(found: list[Candidate], settings: ReaderSettings | None = None) -> list[Candidate]:
    """Keep one candidate per die: a weaker peak centred on a stronger one's die goes.

    A big die can raise a faint second peak off its centre, well inside its own half side,
    and a die's side face seen in perspective a smaller one; yet a die leaning on its
    neighbour sits closer than half a side too, and raises a strong peak of its own size.
    """
    settings = settings or ReaderSettings()
    kept: list[Candidate] = []
    for c in sorted(found, key=lambda c: -c.heat):
        if not any(_same_die(c, k, settings) for k in kept):
            kept.append(c)
    return kept


def _same_die(weaker: Candidate, stronger: Candidate, settings: ReaderSettings) -> bool:
    """Return whether a weaker peak belongs to the die of a stronger one (see suppress)."""
    gap = np.hypot(weaker.x - stronger.x, weaker.y - stronger.y) / max(weaker.side, stronger.side)
    if gap >= settings.same_die:
        return False
    if gap < settings.leaning_die:
        return True
    alike = min(weaker.side, stronger.side) >= settings.leaning_side * max(
        weaker.side, stronger.side
    )
    return not (alike and weaker.heat >= settings.leaning_heat)


def _inside(c: Candidate, tray: Box, w: int, h: int) -> bool:
    """Return whether a candidate's centre lies in the calibrated tray region."""
    return tray[0] * w <= c.x <= tray[2] * w and tray[1] * h <= c.y <= tray[3] * h


def _unlike_floor(c: Candidate, work: np.ndarray, floor: np.ndarray, contrast: float) -> bool:
    """Return whether the middle of a candidate differs from the empty tray there."""
    half = max(int(c.side * 0.35), 1)
    x, y = int(c.x), int(c.y)
    a = work[max(y - half, 0) : y + half, max(x - half, 0) : x + half].astype(np.float32)
    b = floor[max(y - half, 0) : y + half, max(x - half, 0) : x + half].astype(np.float32)
    return a.size > 0 and float(np.abs(a - b).mean()) > contrast
