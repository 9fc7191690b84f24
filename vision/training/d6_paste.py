"""Copy-paste augmentation for d6 training: real dice cut from dev photos, laid against others.

Real photos are few and heaps of touching dice fewer still, yet those are where the finder
loses dice. Pasting real die crops beside the dice of another real photo makes new heaps
with real plastic, pips and glare (training-time only).
"""

from __future__ import annotations

import cv2
import numpy as np

Photo = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
"""An image, die centres (N, 2) and sides (N,) in pixels, and face values (N,)."""
Cut = tuple[np.ndarray, int]
"""A square crop around one real die (side about 1.1 label boxes) and its face value."""
REACH = 0.55
"""A cut spans this many label sides either side of the die centre."""


def cut_dice(photos: list[Photo]) -> list[Cut]:
    """Return a crop of every labelled die that lies wholly inside its photo."""
    cuts = []
    for image, centres, sides, values in photos:
        h, w = image.shape[:2]
        for (x, y), side, value in zip(centres, sides, values, strict=True):
            half = round(float(side) * REACH)
            x0, y0, x1, y1 = int(x) - half, int(y) - half, int(x) + half, int(y) + half
            if x0 >= 0 and y0 >= 0 and x1 <= w and y1 <= h:
                cuts.append((image[y0:y1, x0:x1].copy(), int(value)))
    return cuts


def _feather(size: int) -> np.ndarray:
    """Return a (size, size, 1) mask: 1 over the die, fading out over the cut's rim."""
    mask = np.zeros((size, size), np.float32)
    inner = round(size * 0.12)
    mask[inner : size - inner, inner : size - inner] = 1.0
    return cv2.GaussianBlur(mask, (0, 0), max(size * 0.05, 0.5))[..., None]


def _spot(rng: np.random.Generator, photo: Photo, side: float) -> np.ndarray | None:
    """Return a centre touching a die of the photo and overlapping none, or None."""
    image, centres, sides, _ = photo
    h, w = image.shape[:2]
    for _ in range(20):
        i = int(rng.integers(len(sides)))
        angle = rng.uniform(0, 2 * np.pi)
        gap = (sides[i] + side) / 2 / 1.2 * rng.uniform(1.0, 1.2)
        at = centres[i] + gap * np.array([np.cos(angle), np.sin(angle)])
        clear = np.hypot(*(centres - at).T) >= (sides + side) / 2 / 1.2
        if side <= at[0] <= w - side and side <= at[1] <= h - side and clear.all():
            return np.asarray(at)
    return None


def paste(rng: np.random.Generator, photo: Photo, cuts: list[Cut], count: int) -> Photo:
    """Return a copy of a real photo with up to `count` real dice pasted against its dice."""
    image, centres, sides, values = photo
    if len(values) == 0 or not cuts:
        return photo
    image = image.copy()
    at_, sides_, values_ = list(centres), list(sides), list(values)
    for _ in range(count):
        crop, value = cuts[int(rng.integers(len(cuts)))]
        crop = np.rot90(crop, int(rng.integers(4)))
        crop = crop[:, ::-1] if rng.random() < 0.5 else crop
        side = crop.shape[0] / (2 * REACH)
        at = _spot(rng, (image, np.array(at_), np.array(sides_), np.array(values_)), side)
        if at is None:
            continue
        size = crop.shape[0]
        x0, y0 = int(at[0]) - size // 2, int(at[1]) - size // 2
        region = image[y0 : y0 + size, x0 : x0 + size].astype(np.float32)
        mask = _feather(size)
        blend = region * (1 - mask) + crop.astype(np.float32) * mask
        image[y0 : y0 + size, x0 : x0 + size] = blend.astype(np.uint8)
        at_.append(np.array([x0 + size / 2, y0 + size / 2]))
        sides_.append(side)
        values_.append(value)
    return image, np.array(at_), np.array(sides_), np.array(values_)
