"""The Raspberry Pi camera through picamera2: the one module that imports picamera2."""

from __future__ import annotations

from typing import Any

import numpy as np

from tidetower.vision.sources.base import FrameSourceError, ThreadedSource


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

    def metadata(self) -> dict[str, Any]:
        """The camera's current exposure settings, to store with the calibration."""
        return dict(self._camera.capture_metadata())

    def grab(self) -> np.ndarray:
        # picamera2 names formats by libcamera: "RGB888" is B, G, R in memory, OpenCV order.
        return np.asarray(self._camera.capture_array("main"))

    def release(self) -> None:
        self._camera.stop()
        self._camera.close()
