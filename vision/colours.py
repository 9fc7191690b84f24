"""Name a die's plastic colour, so a table can pin a kind to one die ("the white d20")."""

from __future__ import annotations

import cv2
import numpy as np

from tidetower.engine.tray import Box

COLOURS = (
    "white",
    "grey",
    "black",
    "red",
    "orange",
    "yellow",
    "green",
    "cyan",
    "blue",
    "purple",
    "pink",
)
"""The names a pin may use."""
HUES = (
    (10, "red"),
    (22, "orange"),
    (35, "yellow"),
    (85, "green"),
    (100, "cyan"),
    (130, "blue"),
    (150, "purple"),
    (170, "pink"),
    (180, "red"),
)
"""Upper OpenCV hue (0..180) of each named hue band."""


def colour_name(bgr: tuple[float, float, float]) -> str:
    """Return the name of a BGR colour: white, grey or black when unsaturated, else its hue."""
    pixel = np.array([[bgr]], np.uint8)
    hue, sat, val = (int(v) for v in cv2.cvtColor(pixel, cv2.COLOR_BGR2HSV)[0, 0])
    if val < 60:
        return "black"
    if sat < 45:
        return "white" if val > 170 else "grey"
    return next(name for top, name in HUES if hue < top)


def body_colour(image: np.ndarray, box: Box) -> tuple[float, float, float]:
    """Return the median colour of the middle of a die's box: its plastic, not the thin ink
    of its numerals nor the floor around it."""
    h, w = image.shape[:2]
    x0, y0, x1, y1 = box
    cx, cy, rx, ry = (x0 + x1) / 2 * w, (y0 + y1) / 2 * h, (x1 - x0) * w / 4, (y1 - y0) * h / 4
    patch = image[max(0, int(cy - ry)) : int(cy + ry) + 1, max(0, int(cx - rx)) : int(cx + rx) + 1]
    if patch.size == 0:
        return (0.0, 0.0, 0.0)
    b, g, r = np.median(patch.reshape(-1, 3), axis=0)
    return float(b), float(g), float(r)


def lab_of(bgr: tuple[float, float, float]) -> np.ndarray:
    """Return a BGR colour in CIE Lab (OpenCV's 8-bit scale), where distance is likeness."""
    pixel = np.array([[bgr]], np.uint8)
    return np.asarray(cv2.cvtColor(pixel, cv2.COLOR_BGR2LAB)[0, 0], np.float64)
