"""A second, independent opinion on a pip d6: count its pips with plain OpenCV.

The face nets learned what faces look like; this counts. It finds the die's top face (the
body colour around the centre, pips filled in, a near-square box), then the marks inside it
that stand out from the body, and gives a count only when the marks are alike in size and sit
where a d6's pips sit (one of the six layouts, either way round). Often it says nothing;
when it speaks it is seldom wrong, so a disagreement with the nets is worth a human's look.
Its constants were set on rendered trays (seeds 9,000,000 on), never on the real photos.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from tidetower.vision.d6.find import Candidate
from tidetower.vision.d6.nets import face_crop

CROP = 96
"""The die is cut to this many pixels square, whatever its size in the photo."""
REACH = 1.3
"""The cut reaches this many die sides across: the whole top face and a margin."""
PIP_CONTRAST = 28.0
"""Lab distance from the body beyond which a pixel belongs to a mark."""
PIP_COLOUR_SPREAD = 30.0
"""Lab distance within which every pip's colour lies from the pips' median colour."""
SPACING = (0.12, 0.36)
"""Pip spacing from the face's centre, in die sides as found: every maker's d6 lies within."""
OFF_CENTRE = 0.15
"""The pips' centre lies within this many die sides of the die's centre as found."""
LONE_SPACING = 0.2
"""For a 1, whose pip gives no spacing: where the other faces' pips would be, in die sides."""
PLACE_TOLERANCE = 0.33
"""How far (in pip spacings) a pip may sit from its place in the layout."""
REACH_PIPS = 0.5
"""Dark spots count as pips within this many die sides of the centre: the top face, roughly."""
EMPTY_RADIUS = 0.22
"""A place is looked at over a square reaching this many pip spacings from its centre."""
EMPTY_BELOW = 16.0
"""A place whose mean Lab distance from the body is below this holds no pip."""
FACE_REACH = 1.6
"""The top face reaches this many pip spacings from its centre, each way."""
STRAY_SHARE = 0.5
"""Ink on the face beyond the pips, as a share of one pip, that makes a count unsure."""
LAYOUTS: dict[int, np.ndarray] = {
    1: np.array([[0, 0]]),
    2: np.array([[-1, -1], [1, 1]]),
    3: np.array([[-1, -1], [0, 0], [1, 1]]),
    4: np.array([[-1, -1], [1, -1], [-1, 1], [1, 1]]),
    5: np.array([[-1, -1], [1, -1], [-1, 1], [1, 1], [0, 0]]),
    6: np.array([[-1, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [1, 1]]),
}
"""Where each face's pips sit, in steps of the spacing from the face's centre."""


@dataclass(frozen=True)
class PipCount:
    """What the pip counter saw: a face value it is sure of, or None and why not."""

    value: int | None
    reason: str


Frame = tuple[np.ndarray, np.ndarray, float]
"""Where a face's layout sits in the cut: its centre, its turn (2x2) and its pip spacing (px)."""


def count_pips(work: np.ndarray, c: Candidate) -> PipCount:
    """Count the pips on a candidate's top face, or say why it cannot be sure."""
    crop = face_crop(work, c.x, c.y, c.side * REACH, 0.0, CROP)
    lab = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB).astype(np.float32)
    distance = np.linalg.norm(lab - _body_colour(lab), axis=2)
    die_px = CROP / REACH
    ink = distance >= PIP_CONTRAST
    marks, pipped = pip_marks(ink, die_px, lab)
    n = len(marks)
    if not 1 <= n <= 6:
        return PipCount(None, f"{n} pip-like marks")
    for frame in frames(marks, die_px):
        for layout in (LAYOUTS[n], LAYOUTS[n][:, ::-1] * np.array([1, -1])):
            if _fits(marks, _placed(layout, frame), frame[2]):
                empty = all(
                    _is_empty(distance, at, frame[2]) for at in _placed(_empty(layout), frame)
                )
                if empty and not _stray_ink(ink, pipped, frame, n):
                    return PipCount(n, f"{n} pips counted")
                return PipCount(None, f"{n} pips in a {n}'s layout, and marks elsewhere")
    return PipCount(None, f"{n} marks, not in a {n}'s layout")


_YY, _XX = np.mgrid[:CROP, :CROP]
_PIXELS = np.stack([_XX.ravel(), _YY.ravel()], axis=1).astype(np.float64)
"""Every pixel of the cut as (x, y)."""
_FROM_CENTRE = np.hypot(*(_PIXELS - CROP / 2).T).reshape(CROP, CROP)
_RING = (_FROM_CENTRE > 0.12 * CROP) & (_FROM_CENTRE < 0.25 * CROP)
"""Between the pips of most faces: where the body colour is taken."""
_ON_DIE = _FROM_CENTRE < REACH_PIPS * CROP / REACH


def _body_colour(lab: np.ndarray) -> np.ndarray:
    """Return the median colour of a ring around the centre: the body, between the pips."""
    return np.asarray(np.median(lab[_RING], axis=0))


def pip_marks(marked: np.ndarray, die_px: float, lab: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the centres (N, 2) of the round, pip-sized marks on the die's top face, and a
    mask of their pixels."""
    count, parts, stats, centres = cv2.connectedComponentsWithStats(
        (marked & _ON_DIE).astype(np.uint8), connectivity=8
    )
    small, big = 0.005 * die_px**2, 0.07 * die_px**2
    keep = []
    for i in range(1, count):
        w, h, area = stats[i][2:5]
        round_enough = 0.5 <= w / max(h, 1) <= 2.0 and 0.5 <= area / max(w * h, 1) <= 0.95
        if small <= area <= big and round_enough:
            keep.append(i)
    if not keep or not _alike(stats[keep, 4], [lab[parts == i].mean(axis=0) for i in keep]):
        return np.zeros((0, 2)), np.zeros_like(marked)  # a logo, a scratch or a shine
    return np.asarray(centres[keep], np.float64), np.isin(parts, keep)


def _alike(areas: np.ndarray, colours: list[np.ndarray]) -> bool:
    """Return whether marks are of one size and one colour, as a die's pips are."""
    spread = np.linalg.norm(np.array(colours) - np.median(colours, axis=0), axis=1)
    return bool(areas.max() <= 2.6 * areas.min() and spread.max() <= PIP_COLOUR_SPREAD)


def frames(marks: np.ndarray, die_px: float) -> list[Frame]:
    """Return where the layout could sit: centred on the marks, turned so the farthest mark is
    a corner pip (every layout but the 1 has one), at a d6's spacing."""
    centre = marks.mean(axis=0)
    if np.hypot(*(centre - CROP / 2)) > OFF_CENTRE * die_px:
        return []  # the finder's centre is the top face's: these marks are elsewhere
    if len(marks) == 1:
        return [(centre, np.eye(2), LONE_SPACING * die_px)]
    far = marks[np.argmax(np.hypot(*(marks - centre).T))] - centre
    angle = np.arctan2(far[1], far[0]) - np.pi / 4
    c, s = np.cos(angle), np.sin(angle)
    spacing = float(np.hypot(*far)) / np.sqrt(2)
    if not SPACING[0] <= spacing / die_px <= SPACING[1]:
        return []
    return [(centre, np.array([[c, -s], [s, c]]), spacing)]


def _placed(places: np.ndarray, frame: Frame) -> np.ndarray:
    """Return layout places (steps of the spacing) as points in the cut."""
    centre, turn, spacing = frame
    return np.asarray(places * spacing @ turn.T + centre, np.float64)


def _fits(marks: np.ndarray, places: np.ndarray, spacing: float) -> bool:
    """Return whether the marks and the layout's places pair off one to one."""
    gaps = np.hypot(*(places[:, None, :] - marks[None, :, :]).transpose(2, 0, 1))
    worst = max(gaps.min(axis=0).max(), gaps.min(axis=1).max())
    return bool(worst <= PLACE_TOLERANCE * spacing)


GRID = np.array([(x, y) for y in (-1, 0, 1) for x in (-1, 0, 1)], np.float64)
"""Every place a pip can sit on any face, in steps of the spacing."""
RING = np.array([(np.cos(a), np.sin(a)) for a in np.linspace(0, 2 * np.pi, 16, endpoint=False)])
"""Around a lone pip, places in every direction out to a 2's other pip: a 1 has no others."""


def _empty(layout: np.ndarray) -> np.ndarray:
    """Return the places the layout leaves empty (for a 1, rings round it: its turn is
    unknown)."""
    if len(layout) == 1:
        return np.concatenate([RING * r for r in (1, np.sqrt(2), 2, 2 * np.sqrt(2))])
    taken = {tuple(p) for p in layout.tolist()}
    return np.array([p for p in GRID if tuple(p.tolist()) not in taken], np.float64)


def _stray_ink(ink: np.ndarray, pipped: np.ndarray, frame: Frame, n: int) -> bool:
    """Return whether the face holds marks the pips do not explain: pips the count missed,
    seen only in part, or run together."""
    centre, turn, spacing = frame
    on_face = (_PIXELS - centre) @ turn / spacing
    face = (np.abs(on_face).max(axis=1) <= FACE_REACH).reshape(CROP, CROP)
    explained = cv2.dilate(pipped.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    stray = int(np.count_nonzero(ink & face & ~explained))
    return bool(stray > STRAY_SHARE * np.count_nonzero(pipped) / n)


def _is_empty(distance: np.ndarray, at: np.ndarray, spacing: float) -> bool:
    """Return whether the square at a place looks like the body: no pip the marks missed."""
    radius = max(1, round(EMPTY_RADIUS * spacing))
    x, y = round(float(at[0])), round(float(at[1]))
    patch = distance[max(0, y - radius) : y + radius + 1, max(0, x - radius) : x + radius + 1]
    return patch.size > 0 and float(np.mean(patch)) < EMPTY_BELOW
