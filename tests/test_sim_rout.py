"""The simulated players watch a rout on the LED bar before they set up a new Tide."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.store import OutboxEvent
from tidetower.firmware.sim import SimulatedTable, sim_config, simulated_parts
from tidetower.firmware.tower import Tower
from tidetower.mqtt.ledbar.strip import ROUT_SECONDS


@pytest.fixture
def pins() -> Iterator[None]:
    """No mock pin left behind for the next test (they live on the class)."""
    MockFactory(pin_class=MockPWMPin).reset()
    yield
    MockFactory(pin_class=MockPWMPin).reset()
    Device.pin_factory = None


def test_the_new_tide_waits_for_the_rout_animation(tmp_path: Path, pins: None) -> None:
    config = sim_config(tmp_path / "s.db")
    with Tower(config, simulated_parts(config, seed=3)) as tower:
        players = tower.extras
        assert isinstance(players, SimulatedTable)
        players.hand_chance = 0
        table = tower.table
        table.reset_tracker({"weight_a": 1, "weight_b": 2, "size": "small-skirmish"})
        table.declare(
            RollContext(actor="A", side="a", mode="unopposed", params={"tide_linked": True})
        )
        table.record(Roll((Die(DieKind.D6, 1), Die(DieKind.D20, 1))))  # omen 1: A routs
        assert table.bar().routed == "a"
        routed_at = players.source.clock()
        reset: list[tuple[float, int]] = []

        def changed(_event: OutboxEvent) -> None:
            if table.bar().routed is None and not reset:
                reset.append((players.source.clock(), len(players.thrown)))

        table.listeners.append(changed)
        for _ in range(1000):
            tower.step()
            if reset:
                break
    # Simulated seconds (frames at the camera's rate) between the rout and the new Tide,
    # and nobody threw while the bar flashed.
    assert reset and reset[0][0] - routed_at >= ROUT_SECONDS and reset[0][1] == 0
