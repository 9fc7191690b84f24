"""Replayed frames: a folder of images or a video file, for tests and for checking a session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

import cv2
import numpy as np

from tidetower.vision.pictures import ImageError, load_image
from tidetower.vision.sources.base import (
    FrameSource,
    FrameSourceError,
    SourceConfig,
    SourceExhausted,
)

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".tif", ".tiff", ".webp"}


class ReplaySource(FrameSource):
    """Frames from a folder (sorted by name) or a video file; `loop` starts again at the end."""

    def __init__(self, path: str | Path, loop: bool = False) -> None:
        self.path = Path(path)
        self.loop = loop
        if not self.path.exists():
            raise FrameSourceError(f"replay source {self.path} does not exist")
        self._frames = self._open()

    def _open(self) -> Iterator[np.ndarray]:
        if self.path.is_dir():
            return self._images()
        return self._video()

    def _images(self) -> Iterator[np.ndarray]:
        files = sorted(p for p in self.path.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES)
        if not files:
            raise FrameSourceError(f"no images in {self.path}")
        for file in files:
            try:
                yield load_image(file)
            except ImageError as error:
                raise FrameSourceError(f"cannot read image {error}") from None

    def _video(self) -> Iterator[np.ndarray]:
        capture = cv2.VideoCapture(str(self.path))
        if not capture.isOpened():
            raise FrameSourceError(f"cannot open video {self.path}")
        try:
            ok, frame = capture.read()
            while ok:
                yield frame
                ok, frame = capture.read()
        finally:
            capture.release()

    def read(self, timeout: float | None = None) -> np.ndarray:
        if self.closed:
            raise FrameSourceError("replay source is closed")
        try:
            return next(self._frames)
        except StopIteration:
            if not self.loop:
                raise SourceExhausted(f"replay of {self.path} has ended") from None
            self._frames = self._open()
            return next(self._frames)


class ReplayConfig(SourceConfig):
    """`source = "replay"`: the folder of images or the video file to replay (`path`)."""

    source: Literal["replay"]
    path: Path

    def open(self, seed: int = 0) -> FrameSource:
        return ReplaySource(self.path)
