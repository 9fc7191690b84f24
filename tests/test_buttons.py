"""The tower's buttons, pressed like a person presses them (mock pins), are GM commands: side
A and B, linked or personal, undo and re-read change what the desk changes for MQTT, and a
press the table refuses changes nothing and stops nothing."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from tidetower.engine.rules import RollContext
from tidetower.engine.tray import TowerState
from tidetower.firmware.session_cli import parse_dice
from tidetower.firmware.sim import SIM_PINS, sim_config
from tidetower.firmware.tower import Tower, TowerParts
from tidetower.mqtt.command_bodies import RollCommand
from tidetower.vision.settings import Calibration
from tidetower.vision.sources.simulated import SimulatedSource


@pytest.fixture
def tower(tmp_path: Path) -> Iterator[tuple[Tower, MockFactory]]:
    """A Tide tower on mock pins and the simulated camera, nobody at the table."""
    pins = MockFactory(pin_class=MockPWMPin)
    camera = SimulatedSource(seed=3)
    parts = TowerParts(camera, Calibration(background=camera.empty), pins)
    with Tower(sim_config(tmp_path / "s.db"), parts) as built:
        yield built, pins


def press(pins: MockFactory, pin: int | None) -> None:
    """Push the button on `pin` down and let it go (buttons pull up: pressed is low)."""
    assert pin is not None
    pins.pin(pin).drive_low()
    pins.pin(pin).drive_high()


def test_side_and_link_buttons_amend_the_declared_roll(tower: tuple[Tower, MockFactory]) -> None:
    built, pins = tower
    built.table.declare(RollContext(actor="Ser Brand"))
    press(pins, SIM_PINS.button_side_b)
    press(pins, SIM_PINS.button_link)
    declared = built.table.state.declared
    assert (declared.actor, declared.side) == ("Ser Brand", "b")
    assert declared.params == {"tide_linked": True}  # the Tide's toggle
    press(pins, SIM_PINS.button_side_a)
    press(pins, SIM_PINS.button_link)
    declared = built.table.state.declared
    assert (declared.side, declared.params) == ("a", {"tide_linked": False})


def test_undo_button_takes_back_the_last_roll(tower: tuple[Tower, MockFactory]) -> None:
    built, pins = tower
    built.table.declare(RollContext(actor="A", side="a", mode="tide", params={"tide_linked": True}))
    start = built.table.bar().position
    dice = parse_dice(("d8=8,8,7", "d20=13"))
    built.buttons.desk.apply(RollCommand(id="gm", dice=dice))
    assert len(built.table.state.history) == 1
    press(pins, SIM_PINS.button_undo)
    assert built.table.state.history == ()
    assert built.table.bar().position == start


def test_a_refused_press_changes_nothing_and_stops_nothing(
    tower: tuple[Tower, MockFactory], caplog: pytest.LogCaptureFixture
) -> None:
    built, pins = tower
    caplog.set_level(logging.INFO)
    press(pins, SIM_PINS.button_undo)  # no roll to take back
    press(pins, SIM_PINS.button_reread)  # nothing in the tray to read again
    assert built.table.state.history == ()
    assert "undo refused" in caplog.text and "reread refused: nothing to re-read" in caplog.text
    built.step()
    assert built.loop.state is TowerState.IDLE
