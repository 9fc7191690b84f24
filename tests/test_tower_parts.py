"""A tower is built from the parts it is given (camera, calibration, pins, extras) and closes
them; the simulation is one way to give them, a Pi's camera another, these frames a third."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin

from tidetower.engine.store import StoreError
from tidetower.engine.tray import TowerState
from tidetower.firmware.devices import TowerDevices
from tidetower.firmware.readloop import ReadLoop
from tidetower.firmware.sim import SIM_PINS, sim_config
from tidetower.firmware.tower import Tower, TowerParts
from tidetower.vision.read import read_dice
from tidetower.vision.settings import Calibration
from tidetower.vision.sources import FrameSource
from tidetower.vision.synth import TraySpec, render_tray

SPEC = TraySpec(size=(640, 480), count=(3, 3), side=(0.05, 0.065), blur=0, noise=0)
EMPTY = render_tray(0, TraySpec(size=(640, 480), count=(0, 0), blur=0, noise=0), floor_seed=1)


class Frames(FrameSource):
    """Frames from a list, the last one repeating: a camera over a tray nobody touches."""

    def __init__(self, *frames: np.ndarray) -> None:
        self.frames = list(frames)

    def read(self, timeout: float | None = None) -> np.ndarray:
        return self.frames.pop(0) if len(self.frames) > 1 else self.frames[0]


class Turns:
    """Extras that only count the turns the tower gives them."""

    def __init__(self, loop: ReadLoop) -> None:
        self.loop = loop
        self.taken = 0

    def before_step(self) -> None:
        self.taken += 1


@pytest.fixture
def pins() -> Iterator[MockFactory]:
    """Mock pins of the tower's own, none left behind."""
    factory = MockFactory(pin_class=MockPWMPin)
    yield factory
    factory.reset()


def _three_d6() -> tuple[np.ndarray, list[int]]:
    """A tray of three pip d6 that the default reader reads right, and their faces."""
    calibration = Calibration(background=EMPTY.image)
    for seed in range(50):
        tray = render_tray(seed, SPEC, floor_seed=1)
        faces = sorted(d.value for d in tray.dice)
        if list(read_dice(tray.image, calibration).values) == faces:
            return tray.image, faces
    raise AssertionError("no synthetic tray read right")


def test_a_tower_reads_from_the_camera_and_pins_it_is_given(
    tmp_path: Path, pins: MockFactory
) -> None:
    tray, faces = _three_d6()
    camera = Frames(*[EMPTY.image] * 3, *[tray] * 12)
    parts = TowerParts(camera, Calibration(background=EMPTY.image), pins, Turns)
    with Tower(sim_config(tmp_path / "s.db"), parts) as tower:  # the config says "simulated"
        for _ in range(3):
            tower.step()
        pins.pin(SIM_PINS.drop_sensor).drive_low()  # dice fall through the beam
        tower.step()
        pins.pin(SIM_PINS.drop_sensor).drive_high()
        for _ in range(12):
            tower.step()
        assert tower.loop.state is TowerState.RESULT
        (record,) = tower.table.state.history
        assert sorted(d.face for d in record.roll.dice) == faces
        assert isinstance(tower.extras, Turns) and tower.extras.taken == 16
    assert camera.closed


def test_a_tower_that_cannot_start_closes_the_parts_it_was_given(
    tmp_path: Path, pins: MockFactory
) -> None:
    config = sim_config(tmp_path / "s.db")
    config.table.store.mkdir()  # a folder where the session should be: it cannot open
    camera = Frames(EMPTY.image)
    with pytest.raises(StoreError):
        Tower(config, TowerParts(camera, None, pins))
    assert camera.closed
    TowerDevices(config.pins, pin_factory=pins).close()  # every pin is free again
