"""Draw a reading over its photo: the first picture a user checks when something reads wrong."""

from __future__ import annotations

import cv2
import numpy as np

from tidetower.engine.tray import Box, Reading
from tidetower.vision.kinds import face_text

READ_COLOUR = (40, 200, 40)
"""BGR green for dice read."""
UNREADABLE_COLOUR = (0, 0, 255)
"""BGR red for dice seen but not read; the reason is in the JSON, too long to draw."""


def _pixels(box: Box, w: int, h: int) -> tuple[int, int, int, int]:
    """Return a normalised box in pixel corners."""
    return round(box[0] * w), round(box[1] * h), round(box[2] * w), round(box[3] * h)


def _label(image: np.ndarray, text: str, x: int, y: int, colour: tuple[int, int, int]) -> None:
    """Write a label on a filled tag above (or inside, at the top edge) a box."""
    scale = max(0.4, image.shape[1] / 1600)
    thick = max(1, round(scale * 2))
    (tw, th), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
    top = y - th - base - 2 if y - th - base - 2 >= 0 else y
    cv2.rectangle(image, (x, top), (x + tw + 2, top + th + base + 2), colour, -1)
    cv2.putText(
        image,
        text,
        (x + 1, top + th + 1),
        cv2.FONT_HERSHEY_SIMPLEX,
        scale,
        (255, 255, 255),
        thick,
        cv2.LINE_AA,
    )


def annotate(image: np.ndarray, reading: Reading) -> np.ndarray:
    """Return a copy of the photo with every die boxed and labelled by value and confidence."""
    out = image.copy()
    h, w = out.shape[:2]
    thick = max(1, round(max(w, h) / 400))
    for die in reading.dice:
        x0, y0, x1, y1 = _pixels(die.box, w, h)
        cv2.rectangle(out, (x0, y0), (x1, y1), READ_COLOUR, thick)
        name = "" if die.die == "d6" else f"{die.die} "
        _label(
            out, f"{name}{face_text(die.die, die.value)} {die.confidence:.2f}", x0, y0, READ_COLOUR
        )
    for item in reading.unreadable:
        x0, y0, x1, y1 = _pixels(item.box, w, h)
        cv2.rectangle(out, (x0, y0), (x1, y1), UNREADABLE_COLOUR, thick)
        _label(out, "?", x0, y0, UNREADABLE_COLOUR)
    return out
