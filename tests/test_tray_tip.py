"""Issue 37 (10): a tower with the tray servo (docs/firmware.md, pin 18) tips its tray once a
roll is stored and the GM has nothing left to settle, and sets it level once the tray is
empty; a throw waiting for the GM stays level. Seen as a person sees it: the servo's angle."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gpiozero.pins.mock import MockFactory
from loop_parts import Frames, pwm_pins

from tidetower.engine.table import Table
from tidetower.engine.tray import DieRead, Reading, TowerState, Unreadable
from tidetower.firmware.devices import TowerDevices
from tidetower.firmware.readloop import ReadLoop
from tidetower.firmware.sim import SIM_PINS
from tidetower.vision.settle import SettleWatch

EMPTY = np.zeros((120, 160, 3), np.uint8)
TRAY = EMPTY.copy()
TRAY[40:80, 50:110] = 255
SIX = DieRead("d6", 6, (0.3, 0.3, 0.4, 0.4), 0.95)
BLURRED = Unreadable((0.5, 0.3, 0.6, 0.4), "blurred", "d6")
LEVEL, TIPPED = -90, 90


pins = pytest.fixture(pwm_pins, name="pins")


def _thrown(tmp_path: Path, pins: MockFactory, reading: Reading) -> ReadLoop:
    """A tower with the tray servo on 18, dice dropped that the camera reads as `reading`."""
    devices = TowerDevices(SIM_PINS.model_copy(update={"servo": 18}), pin_factory=pins)
    loop = ReadLoop(
        Frames(*[EMPTY] * 3, *[TRAY] * 10),
        Table(tmp_path / "s.db"),
        lambda frame: reading if frame is TRAY else Reading(),
        devices,
        SettleWatch(),
    )
    assert devices.servo is not None and devices.servo.angle == LEVEL  # level from boot on
    for _ in range(3):
        loop.step()
    pins.pin(SIM_PINS.drop_sensor).drive_low()
    loop.step()
    pins.pin(SIM_PINS.drop_sensor).drive_high()
    for _ in range(10):
        loop.step()
    return loop


def _angle(loop: ReadLoop) -> float | None:
    servo = loop.devices.servo
    assert servo is not None
    return servo.angle


def _poured_out(loop: ReadLoop) -> None:
    """The dice slide out of the tipped tray: the camera sees it empty from now on."""
    assert isinstance(loop.source, Frames)
    loop.source.frames = [EMPTY]
    for _ in range(loop.timing.clear_frames + 3):
        loop.step()


def test_the_tray_tips_once_the_roll_is_stored_and_levels_once_empty(
    tmp_path: Path, pins: MockFactory
) -> None:
    loop = _thrown(tmp_path, pins, Reading((SIX,)))
    assert len(loop.table.state.history) == 1
    assert _angle(loop) == TIPPED
    _poured_out(loop)
    assert loop.state is TowerState.IDLE and _angle(loop) == LEVEL


def test_a_throw_the_gm_must_settle_stays_until_the_gm_has(
    tmp_path: Path, pins: MockFactory
) -> None:
    loop = _thrown(tmp_path, pins, Reading((SIX,), (BLURRED,)))
    assert loop.state is TowerState.NEEDS_ATTENTION and _angle(loop) == LEVEL
    loop.enter_die(0, "d6", 3)  # nothing left to settle: the roll is stored
    assert len(loop.table.state.history) == 1 and _angle(loop) == TIPPED
    _poured_out(loop)
    assert loop.state is TowerState.IDLE and _angle(loop) == LEVEL
