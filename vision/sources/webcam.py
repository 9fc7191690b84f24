"""A USB webcam through OpenCV's VideoCapture."""

from __future__ import annotations

from typing import Any, Literal, Protocol

import cv2
import numpy as np

from tidetower.vision.sources.base import (
    FrameSource,
    FrameSourceError,
    SourceConfig,
    ThreadedSource,
)


class Capture(Protocol):
    """What the webcam source uses of OpenCV's VideoCapture."""

    def isOpened(self) -> bool: ...

    def set(self, prop: int, value: float) -> bool: ...

    def read(self) -> tuple[bool, Any]: ...

    def release(self) -> None: ...


class WebcamSource(ThreadedSource):
    """Frames from a V4L2/UVC camera; exposure is locked when the driver allows it."""

    def __init__(
        self,
        device: int | str = 0,
        size: tuple[int, int] | None = None,
        exposure: float | None = None,
        capture: Capture | None = None,
    ) -> None:
        """Open `device` (or use `capture`, an opened VideoCapture or a stand-in for one)."""
        self._capture: Capture = capture if capture is not None else cv2.VideoCapture(device)
        if not self._capture.isOpened():
            raise FrameSourceError(f"cannot open webcam {device!r}")
        if size is not None:
            self._capture.set(cv2.CAP_PROP_FRAME_WIDTH, size[0])
            self._capture.set(cv2.CAP_PROP_FRAME_HEIGHT, size[1])
        if exposure is not None:
            self._capture.set(cv2.CAP_PROP_AUTO_EXPOSURE, 1)  # V4L2: 1 = manual
            self._capture.set(cv2.CAP_PROP_EXPOSURE, exposure)
        super().__init__()

    def grab(self) -> np.ndarray:
        ok, frame = self._capture.read()
        if not ok or frame is None:
            raise FrameSourceError("webcam returned no frame")
        return np.asarray(frame)

    def release(self) -> None:
        self._capture.release()


class WebcamConfig(SourceConfig):
    """`source = "webcam"`: which V4L2/UVC camera (`device`: its index or path)."""

    source: Literal["webcam"]
    device: int | str = 0

    def open(self, seed: int = 0) -> FrameSource:
        return WebcamSource(self.device, self.size)
