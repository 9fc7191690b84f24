"""The Raspberry Pi camera through picamera2: the one module that imports picamera2."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import numpy as np

from tidetower.vision.calibrate import exposure_of
from tidetower.vision.sources.base import (
    FrameSource,
    FrameSourceError,
    SourceConfig,
    ThreadedSource,
)

EXPOSURE = ("ExposureTime", "AnalogueGain", "ColourGains")
"""The picamera2 controls a calibration stores and the next start locks."""


class PiCameraSource(ThreadedSource):
    """Frames from the Pi camera, with exposure and white balance locked after calibration."""

    def __init__(
        self,
        size: tuple[int, int] = (1296, 972),
        exposure_us: int | None = None,
        analogue_gain: float | None = None,
        colour_gains: tuple[float, float] | None = None,
    ) -> None:
        try:
            from picamera2 import Picamera2  # only on a Pi: apt's python3-picamera2
        except ImportError as error:
            raise FrameSourceError(
                "picamera2 is not installed: on Raspberry Pi OS run `sudo apt install "
                "python3-picamera2` and make the venv with --system-site-packages"
            ) from error
        self._camera: Any = Picamera2()
        # A video configuration streams continuously; a still one would give few frames.
        config = self._camera.create_video_configuration(main={"size": size, "format": "RGB888"})
        self._camera.configure(config)
        self._camera.start()
        self.lock(exposure_us, analogue_gain, colour_gains)
        super().__init__()

    def lock(
        self,
        exposure_us: int | None,
        analogue_gain: float | None,
        colour_gains: tuple[float, float] | None,
    ) -> None:
        """Fix exposure and white balance so every roll is lit the same (from calibration)."""
        controls: dict[str, Any] = {}
        if exposure_us is not None:
            controls |= {"AeEnable": False, "ExposureTime": exposure_us}
        if analogue_gain is not None:
            controls["AnalogueGain"] = analogue_gain
        if colour_gains is not None:
            controls |= {"AwbEnable": False, "ColourGains": colour_gains}
        if controls:
            self._camera.set_controls(controls)

    def exposure(self) -> dict[str, Any]:
        """The camera's current exposure settings, to store with the calibration."""
        metadata = self._camera.capture_metadata()
        return {name: value for name, value in metadata.items() if name in EXPOSURE}

    def grab(self) -> np.ndarray:
        # picamera2 names formats by libcamera: "RGB888" is B, G, R in memory, OpenCV order.
        return np.asarray(self._camera.capture_array("main"))

    def release(self) -> None:
        self._camera.stop()
        self._camera.close()


def locked_exposure(stored: Mapping[str, Any]) -> dict[str, Any]:
    """`PiCameraSource`'s exposure arguments from the settings a calibration stored."""
    gains = stored.get("ColourGains")
    return {
        "exposure_us": stored.get("ExposureTime"),
        "analogue_gain": stored.get("AnalogueGain"),
        "colour_gains": tuple(gains) if gains else None,
    }


class PiCameraConfig(SourceConfig):
    """`source = "picamera2"`: the Pi camera, locked to the exposure its calibration
    measured (when `calibration` holds one)."""

    source: Literal["picamera2"]

    def open(self, seed: int = 0) -> FrameSource:
        stored = self._stored_exposure(self.calibration)
        return PiCameraSource(size=self.size or (1296, 972), **locked_exposure(stored))

    @staticmethod
    def _stored_exposure(calibration: Path | None) -> dict[str, Any]:
        if calibration is None or not (calibration / "calibration.json").exists():
            return {}
        return exposure_of(calibration)
