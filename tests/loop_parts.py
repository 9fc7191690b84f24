"""Parts the read-loop tests hand a `ReadLoop`: frames from a list and mock PWM pins."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from tidetower.vision.sources import FrameSource


class Frames(FrameSource):
    """Frames from a list, the last one repeating; more may be put in as the tray changes."""

    def __init__(self, *frames: np.ndarray) -> None:
        self.frames = list(frames)

    def read(self, timeout: float | None = None) -> np.ndarray:
        return self.frames.pop(0) if len(self.frames) > 1 else self.frames[0]


def pwm_pins() -> Iterator[MockFactory]:
    """Mock pins that take a servo's PWM, reset before and after, left unset on the Device."""
    pins = MockFactory(pin_class=MockPWMPin)
    pins.reset()
    yield pins
    pins.reset()
    Device.pin_factory = None
