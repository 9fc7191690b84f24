"""Parts the read-loop tests hand a `ReadLoop`: frames from a list, mock PWM pins, and a
loop that dice were just dropped into."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from tidetower.engine.table import Table
from tidetower.engine.tray import Reading
from tidetower.firmware.devices import TowerDevices
from tidetower.firmware.readloop import ReadLoop
from tidetower.firmware.sim import SIM_PINS
from tidetower.vision.settle import SettleWatch
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


EMPTY = np.zeros((120, 160, 3), np.uint8)
"""The empty tray the dropped-dice loops start from."""
TRAY = np.full((120, 160, 3), 90, np.uint8)
"""The settled tray their reader reads as the reading it was given."""


def dropped(table: Table, reading: Reading, pins: MockFactory) -> ReadLoop:
    """A loop over an empty tray, then dice dropped through the beam that settle and read
    as `reading` (an empty tray reads as nothing)."""
    loop = ReadLoop(
        Frames(*[EMPTY] * 3, *[TRAY] * 10),
        table,
        lambda frame: reading if frame is TRAY else Reading(),
        TowerDevices(SIM_PINS, pin_factory=pins),
        SettleWatch(),
    )
    for _ in range(3):
        loop.step()
    pins.pin(SIM_PINS.drop_sensor).drive_low()
    loop.step()
    pins.pin(SIM_PINS.drop_sensor).drive_high()
    for _ in range(10):
        loop.step()
    return loop
