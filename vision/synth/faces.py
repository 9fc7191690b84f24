"""Painters for what a die shows on top; d6 pips now, numeral dice register here later."""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np

SHIFT = 4
"""Fixed-point bits for sub-pixel drawing with cv2."""
ONE = 1 << SHIFT

PIPS: dict[int, tuple[tuple[int, int], ...]] = {
    1: ((0, 0),),
    2: ((-1, -1), (1, 1)),
    3: ((-1, -1), (0, 0), (1, 1)),
    4: ((-1, -1), (1, -1), (-1, 1), (1, 1)),
    5: ((-1, -1), (1, -1), (0, 0), (-1, 1), (1, 1)),
    6: ((-1, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (1, 1)),
}
"""Pip places on a d6 face in units of a third of the face, before rotation."""

FacePainter = Callable[[np.ndarray, "FaceStyle", int], None]


class FaceStyle:
    """Where a face lies and how its marks look: centre, side, angle, mark colour, logo."""

    def __init__(
        self,
        centre: tuple[float, float],
        side: float,
        angle: float,
        ink: tuple[int, int, int],
        logo: bool,
    ) -> None:
        self.centre, self.side, self.angle, self.ink, self.logo = centre, side, angle, ink, logo

    def to_image(self, u: float, v: float) -> tuple[float, float]:
        """Map face coordinates (units of the face side, centre 0) to image pixels."""
        c, s = np.cos(self.angle), np.sin(self.angle)
        x, y = u * self.side, v * self.side
        return self.centre[0] + c * x - s * y, self.centre[1] + s * x + c * y


def _dot(
    image: np.ndarray, at: tuple[float, float], radius: float, ink: tuple[int, int, int]
) -> None:
    """Draw an anti-aliased filled disc at sub-pixel precision."""
    centre = (round(at[0] * ONE), round(at[1] * ONE))
    cv2.circle(image, centre, max(round(radius * ONE), ONE // 2), ink, -1, cv2.LINE_AA, SHIFT)


def paint_d6(image: np.ndarray, style: FaceStyle, value: int) -> None:
    """Paint the pips of a d6 face, or a large logo ring for the 1 when the die has one."""
    if value == 1 and style.logo:
        ring = style.side * 0.22
        centre = (round(style.centre[0] * ONE), round(style.centre[1] * ONE))
        cv2.circle(
            image,
            centre,
            round(ring * ONE),
            style.ink,
            max(2, round(ring * 0.35)),
            cv2.LINE_AA,
            SHIFT,
        )
        _dot(image, style.centre, ring * 0.3, style.ink)
        return
    radius = style.side * (0.13 if value == 1 else 0.085)
    for pu, pv in PIPS[value]:
        _dot(image, style.to_image(pu * 0.27, pv * 0.27), radius, style.ink)


def paint_side(
    image: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    lean: np.ndarray,
    ink: tuple[int, int, int],
    value: int,
) -> None:
    """Paint the pips of a side face seen edge-on: the strip from edge a-b along `lean`."""
    along = b - a
    side = float(np.hypot(*along))
    depth = float(np.hypot(*lean))
    if depth < 1.5:
        return
    angle = float(np.degrees(np.arctan2(along[1], along[0])))
    axes = (side * 0.085, side * 0.085 * min(1.0, depth / side))
    for pu, pv in PIPS[value]:
        at = (a + b) / 2 + along * (pu * 0.27) + lean * (0.5 + pv * 0.27)
        centre = (round(float(at[0]) * ONE), round(float(at[1]) * ONE))
        size = (max(round(axes[0] * ONE), 1), max(round(axes[1] * ONE), 1))
        cv2.ellipse(image, centre, size, angle, 0, 360, ink, -1, cv2.LINE_AA, SHIFT)


FACE_PAINTERS: dict[str, FacePainter] = {"d6": paint_d6}
"""Die kind -> painter of its top face; numeral dice (d8, d10, d12, d20) add theirs here."""
