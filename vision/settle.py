"""Is the tray still changing, is anything lying in it, has the camera frozen? Cheap checks
run on every frame."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import cv2
import numpy as np

PREVIEW_WIDTH = 160


@dataclass(frozen=True)
class SettleSettings:
    """Thresholds of the per-frame checks, on a small blurred grey preview of each frame."""

    pixel_change: int = 14
    """Grey levels a preview pixel must change by to count as changed (above sensor noise)."""
    moving_fraction: float = 0.002
    """Fraction of changed pixels between two frames that means something moved."""
    present_fraction: float = 0.0015
    """Fraction of pixels unlike the empty tray that means something lies in it."""


def preview(frame: np.ndarray) -> np.ndarray:
    """A small blurred grey copy: sensor noise averages out and the checks cost little."""
    h, w = frame.shape[:2]
    size = (PREVIEW_WIDTH, max(1, round(h * PREVIEW_WIDTH / w)))
    grey = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    small = cv2.resize(grey, size, interpolation=cv2.INTER_AREA)
    return np.asarray(cv2.GaussianBlur(small, (3, 3), 0))


def changed_fraction(a: np.ndarray, b: np.ndarray, pixel_change: int) -> float:
    """Fraction of preview pixels that differ by more than `pixel_change`."""
    if a.shape != b.shape:
        return 1.0
    return float(np.count_nonzero(cv2.absdiff(a, b) > pixel_change)) / a.size


class SettleWatch:
    """Follows the frames of one camera and says whether the tray moved and for how long not."""

    def __init__(
        self, settings: SettleSettings | None = None, empty_tray: np.ndarray | None = None
    ) -> None:
        self.settings = settings or SettleSettings()
        self.empty = preview(empty_tray) if empty_tray is not None else None
        self.still_frames = 0
        self._last: np.ndarray | None = None

    def update(self, frame: np.ndarray) -> bool:
        """Take the next frame; True if the tray moved since the previous one."""
        current = preview(frame)
        moved = (
            self._last is None
            or changed_fraction(self._last, current, self.settings.pixel_change)
            > self.settings.moving_fraction
        )
        self.still_frames = 0 if moved else self.still_frames + 1
        self._last = current
        return moved

    def anything_present(self, frame: np.ndarray) -> bool | None:
        """Whether the tray holds anything, against the empty tray; None without calibration."""
        if self.empty is None:
            return None
        fraction = changed_fraction(self.empty, preview(frame), self.settings.pixel_change)
        return fraction > self.settings.present_fraction


class FrozenWatch:
    """Counts byte-identical frames in a row: a still tray still flickers with sensor noise,
    so a long run of them means the camera froze."""

    def __init__(self) -> None:
        self._last, self._same = 0, 0

    def update(self, frame: np.ndarray) -> int:
        """Take the next frame; return how many identical ones came in a row, it included."""
        checksum = zlib.crc32(np.ascontiguousarray(frame[::8, ::8]).tobytes())
        self._same = self._same + 1 if checksum == self._last else 1
        self._last = checksum
        return self._same
