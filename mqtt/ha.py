"""Home Assistant MQTT discovery: the Tide, the last roll and needs-attention as sensors, and
undo and re-read as buttons that send the tower's own `cmd/<name>` commands.

Every state comes from a retained topic (`tide`, `session`, `tower`), so Home Assistant shows
it again as soon as it restarts, without waiting for the next roll.
"""

from __future__ import annotations

import json
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics

Config = dict[str, Any]


def package_version() -> str:
    """The installed tidetower's version (discovery's `sw_version`)."""
    try:
        return version("tidetower")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"


def _common(settings: MqttSettings) -> Config:
    """What every entity shares: availability, the device, and where the config comes from."""
    node = f"tidetower_{settings.table}"
    device = {
        "identifiers": [node],
        "name": f"Tide Tower {settings.table}",
        "manufacturer": "Tide Tower",
        "sw_version": package_version(),
    }
    return {
        "availability_topic": Topics.of(settings).status,
        "payload_available": "online",
        "payload_not_available": "offline",
        "device": device,
        "origin": {"name": "Tide Tower", "sw_version": package_version()},
    }


def _sensors(topics: Topics, node: str) -> dict[str, Config]:
    """The Tide's position (a measurement) and the last roll's outcome, both retained."""
    tide = {
        "name": "Tide position",
        "unique_id": f"{node}_tide",
        "state_topic": topics.tide,
        "value_template": "{{ value_json.position }}",
        "state_class": "measurement",
        "json_attributes_topic": topics.tide,
        "icon": "mdi:waves",
    }
    last_roll = {
        "name": "Last roll",
        "unique_id": f"{node}_last_roll",
        "state_topic": topics.session,
        "value_template": "{{ (value_json.last_roll.outcome.summary "
        "if value_json.last_roll else 'none')[:255] }}",
        "json_attributes_topic": topics.session,
        "json_attributes_template": "{{ (value_json.last_roll or {}) | tojson }}",
        "icon": "mdi:dice-d20",
    }
    return {"tide": tide, "last_roll": last_roll}


def _attention(topics: Topics, node: str) -> Config:
    """On while the tower waits for the GM (dice it could not read, a blocked sensor)."""
    return {
        "name": "Needs attention",
        "unique_id": f"{node}_attention",
        "state_topic": topics.tower,
        "value_template": "{{ 'ON' if value_json is defined and "
        "value_json.state == 'needs-attention' else 'OFF' }}",
        "json_attributes_topic": topics.tower,
        "json_attributes_template": "{{ ((value_json.attention if value_json is defined "
        "else none) or {}) | tojson }}",
        "device_class": "problem",
    }


def _buttons(topics: Topics, node: str) -> dict[str, Config]:
    """Undo and re-read: a press sends the command body (replies go to `cmd/result`)."""
    names = {"undo": ("Undo last roll", "mdi:undo"), "reread": ("Re-read", "mdi:camera-retake")}
    return {
        command: {
            "name": name,
            "unique_id": f"{node}_{command}",
            "command_topic": topics.command(command),
            "payload_press": json.dumps({"id": f"ha-{command}"}),
            "icon": icon,
        }
        for command, (name, icon) in names.items()
    }


def discovery_messages(settings: MqttSettings) -> list[tuple[str, str]]:
    """(topic, retained JSON config) for each entity Home Assistant should create."""
    topics, node = Topics.of(settings), f"tidetower_{settings.table}"
    entities = [
        *(("sensor", key, config) for key, config in _sensors(topics, node).items()),
        ("binary_sensor", "attention", _attention(topics, node)),
        *(("button", key, config) for key, config in _buttons(topics, node).items()),
    ]
    common = _common(settings)
    return [
        (f"{settings.ha_prefix}/{kind}/{node}/{key}/config", json.dumps({**common, **config}))
        for kind, key, config in entities
    ]
