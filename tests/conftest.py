"""Shared fixtures: real brokers in tests/mqtt_fixtures.py, real Chromium in
tests/browser_fixtures.py."""

pytest_plugins = ("mqtt_fixtures", "browser_fixtures")
