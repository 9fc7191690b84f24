"""Issue 37 (10): a tower with the tray servo (docs/firmware.md, pin 18) tips its tray once a
roll is stored and the GM has nothing left to settle, and sets it level once the tray is
empty; a throw waiting for the GM stays level. The GM tips it too, with the tip button or
`cmd/tip`: a throw to be thrown again is poured out. Seen as a person sees it: the servo's
angle."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import numpy as np
import pytest
from gpiozero.pins.mock import MockFactory
from loop_parts import Frames, pwm_pins
from mqtt_fixtures import WAIT, Listener, Mosquitto

from tidetower.engine.table import Table
from tidetower.engine.tray import DieRead, Reading, TowerState, Unreadable
from tidetower.firmware.buttons import Buttons
from tidetower.firmware.devices import TowerDevices
from tidetower.firmware.readloop import ReadLoop
from tidetower.firmware.sim import SIM_PINS
from tidetower.mqtt.bodies import Refused
from tidetower.mqtt.command_bodies import RethrowCommand, TipCommand
from tidetower.mqtt.commands import CommandDesk
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.topics import Topics
from tidetower.vision.settle import SettleWatch

EMPTY = np.zeros((120, 160, 3), np.uint8)
TRAY = EMPTY.copy()
TRAY[40:80, 50:110] = 255
SIX = DieRead("d6", 6, (0.3, 0.3, 0.4, 0.4), 0.95)
BLURRED = Unreadable((0.5, 0.3, 0.6, 0.4), "blurred", "d6")
LEVEL, TIPPED = -90, 90
TIP_BUTTON = 12


pins = pytest.fixture(pwm_pins, name="pins")


def _thrown(
    tmp_path: Path, pins: MockFactory, reading: Reading, servo: int | None = 18
) -> ReadLoop:
    """A tower with the tray servo on `servo` and the tip button, dice dropped that the
    camera reads as `reading`."""
    fitted = SIM_PINS.model_copy(update={"servo": servo, "button_tip": TIP_BUTTON})
    devices = TowerDevices(fitted, pin_factory=pins)
    loop = ReadLoop(
        Frames(*[EMPTY] * 3, *[TRAY] * 10),
        Table(tmp_path / "s.db"),
        lambda frame: reading if frame is TRAY else Reading(),
        devices,
        SettleWatch(),
    )
    assert servo is None or (devices.servo is not None and devices.servo.angle == LEVEL)
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


def _buttons(loop: ReadLoop) -> CommandDesk:
    """The tower's buttons wired to the desk, as `tidetower run` wires them."""
    desk = CommandDesk(loop.table, controls=loop)
    Buttons(loop.devices, desk, loop.table)
    return desk


def _press_tip(pins: MockFactory) -> None:
    """Push the tip button down and let it go (buttons pull up: pressed is low)."""
    pins.pin(TIP_BUTTON).drive_low()
    pins.pin(TIP_BUTTON).drive_high()


def test_the_tip_button_pours_out_a_throw_to_be_thrown_again(
    tmp_path: Path, pins: MockFactory
) -> None:
    loop = _thrown(tmp_path, pins, Reading((SIX,), (BLURRED,)))
    desk = _buttons(loop)
    desk.apply(RethrowCommand(id="gm"))  # the GM has the dice thrown again
    assert loop.state is TowerState.WAITING_FOR_CLEAR and _angle(loop) == LEVEL
    _press_tip(pins)
    assert _angle(loop) == TIPPED
    _poured_out(loop)
    assert loop.state is TowerState.IDLE and _angle(loop) == LEVEL
    assert loop.table.state.history == ()


def test_a_tip_press_while_the_gm_must_settle_the_throw_changes_nothing(
    tmp_path: Path, pins: MockFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    loop = _thrown(tmp_path, pins, Reading((SIX,), (BLURRED,)))
    _buttons(loop)
    _press_tip(pins)
    assert loop.state is TowerState.NEEDS_ATTENTION and _angle(loop) == LEVEL
    assert "tip refused: nothing to tip out: the tower is needs-attention" in caplog.text


def test_a_tower_without_the_servo_refuses_to_tip(tmp_path: Path, pins: MockFactory) -> None:
    loop = _thrown(tmp_path, pins, Reading((SIX,)), servo=None)
    assert loop.state is TowerState.RESULT
    with pytest.raises(Refused, match=r"^this tower has no tray servo to tip \(pins\.servo\)$"):
        CommandDesk(loop.table, controls=loop).apply(TipCommand(id="gm"))
    assert loop.state is TowerState.RESULT


def test_the_gm_tips_the_tray_over_mqtt_and_is_answered(
    tmp_path: Path, pins: MockFactory, mosquitto: Mosquitto
) -> None:
    loop = _thrown(tmp_path, pins, Reading((SIX,), (BLURRED,)))
    settings = mosquitto.settings()
    topics = Topics.of(settings)
    with (
        TablePublisher(loop.table, settings, controls=loop) as tower,
        Listener(settings, topics.command_result) as gm,
    ):
        assert tower.client.wait_subscribed(WAIT)

        def send(name: str, request: str) -> dict[str, object]:
            gm.client.publish(topics.command(name), json.dumps({"id": request}), qos=1)
            return gm.json_on(topics.command_result, lambda body: body["id"] == request)

        refused = send("tip", "early")
        assert not refused["ok"] and _angle(loop) == LEVEL
        assert "the tower is needs-attention (settle it, or rethrow)" in str(refused["error"])
        assert send("rethrow", "again")["ok"] and _angle(loop) == LEVEL
        answered = send("tip", "tip")
        assert answered["ok"] and answered["command"] == "tip" and _angle(loop) == TIPPED
