"""Shared fixtures: the MQTT tests' real brokers live in tests/mqtt_fixtures.py."""

pytest_plugins = ("mqtt_fixtures",)
