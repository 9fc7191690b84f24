"""Shared fixtures: real brokers in tests/mqtt_fixtures.py, real Chromium in
tests/browser_fixtures.py; and the markers that say which real parts a test uses."""

from __future__ import annotations

import pytest

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
