"""Draw a reading over its photo: the first picture a user checks when something reads wrong."""

from __future__ import annotations

import cv2
import numpy as np

from tidetower.engine.tray import Box, DieRead, Reading, Unreadable
from tidetower.vision.kinds import face_text

READ_COLOUR = (40, 200, 40)
"""BGR green for dice read."""
UNREADABLE_COLOUR = (0, 0, 255)
"""BGR red for dice seen but not read, labelled with the reason."""


def _pixels(box: Box, w: int, h: int) -> tuple[int, int, int, int]:
    """Return a normalised box in pixel corners."""
    return round(box[0] * w), round(box[1] * h), round(box[2] * w), round(box[3] * h)


def _label(image: np.ndarray, text: str, x: int, y: int, colour: tuple[int, int, int]) -> None:
    """Write a label on a filled tag above (or inside, at the top edge) a box."""
    scale = max(0.4, image.shape[1] / 1600)
    thick = max(1, round(scale * 2))
    (tw, th), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
    x = max(0, min(x, image.shape[1] - tw - 2))  # a long reason stays in the picture
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


def label_of(item: DieRead | Unreadable) -> str:
    """What a box is labelled with: a die's kind, face and confidence; else why it is unread."""
    if isinstance(item, Unreadable):
        return item.reason
    return f"{item.die} {face_text(item.die, item.value)} {item.confidence:.2f}"


def annotate(image: np.ndarray, reading: Reading) -> np.ndarray:
    """Return a copy of the photo with every die boxed and labelled (`label_of`): read dice
    in green, unreadable ones in red."""
    out = image.copy()
    h, w = out.shape[:2]
    thick = max(1, round(max(w, h) / 400))
    boxes: list[tuple[DieRead | Unreadable, tuple[int, int, int]]]
    boxes = [(die, READ_COLOUR) for die in reading.dice]
    boxes += [(item, UNREADABLE_COLOUR) for item in reading.unreadable]
    for item, colour in boxes:
        x0, y0, x1, y1 = _pixels(item.box, w, h)
        cv2.rectangle(out, (x0, y0), (x1, y1), colour, thick)
        _label(out, label_of(item), x0, y0, colour)
    return out
