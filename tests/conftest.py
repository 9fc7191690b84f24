"""Shared fixtures: real brokers in tests/mqtt_fixtures.py, real Chromium in
tests/browser_fixtures.py; and the markers that say which real parts a test uses."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from tidetower.firmware.sim_dice import VERSION, sim_dice_home, teach_sim_dice

os.environ.setdefault(
    "TIDETOWER_SIM_DICE", str(Path(tempfile.gettempdir()) / f"tidetower-tests-sim-dice-{VERSION}")
)
"""The practice table's dice are taught once for the whole run (every worker and every
`tidetower run --sim` it starts share them), as a user's cache keeps them between starts."""

pytest_plugins = ("mqtt_fixtures", "browser_fixtures")

BROKER_MODULES = ("test_mqtt_", "test_teach_link", "test_learn_page")
"""Modules whose tests run a broker, whether by fixture or by starting the embedded one."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark tests `browser` when they drive Chromium and `broker` when they run a broker."""
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if "page" in fixtures:
            item.add_marker(pytest.mark.browser)
        if "mosquitto" in fixtures or item.module.__name__.startswith(BROKER_MODULES):
            item.add_marker(pytest.mark.broker)


@pytest.fixture(scope="session", autouse=True)
def practice_dice() -> None:
    """Teach the practice table's dice before any test starts a tower: a simulated tower
    started by a test then plays at once instead of teaching first (the lock makes every
    worker wait for the one that teaches)."""
    teach_sim_dice(sim_dice_home())
