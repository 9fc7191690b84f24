"""Home Assistant MQTT discovery: the tracker, the last roll and needs-attention as sensors, and
re-read as a button that sends the tower's own `cmd/reread`.

There is no undo button: a button's press payload is fixed when it is discovered, so it could
not name the roll the person saw, and would take back whatever roll is last when pressed (one
thrown a moment ago), which the page's confirmation exists to prevent. Undo is the page's.

Every state comes from a retained topic (the tracker's, `session`, `tower`), so Home Assistant
shows it again as soon as it restarts, without waiting for the next roll. The tracker's sensor
is keyed by its topic's name, so a table that played earlier versions keeps its entity; what
the tracker is (its kind and name) is among the sensor's attributes.
"""

from __future__ import annotations

import json
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics

Config = dict[str, Any]
RETIRED = (("button", "undo"),)
"""Entities earlier versions discovered: an empty retained config removes them from HA."""


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
        "has_entity_name": True,  # shown as "<device> <entity>": two tables stay apart
        "origin": {"name": "Tide Tower", "sw_version": package_version()},
    }


def _sensors(topics: Topics, node: str) -> dict[str, Config]:
    """The tracker's position (a measurement) and the last roll's outcome, both retained."""
    key = tracker_key(topics)
    tracker = {
        "name": "Tracker position",
        "unique_id": f"{node}_{key}",
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
    return {key: tracker, "last_roll": last_roll}


def tracker_key(topics: Topics) -> str:
    """The tracker sensor's key: its retained topic's last part."""
    return topics.tide.rsplit("/", 1)[-1]


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


def _reread(topics: Topics, node: str) -> Config:
    """Re-read: a press sends the command body (the reply goes to `cmd/result`)."""
    return {
        "name": "Re-read",
        "unique_id": f"{node}_reread",
        "command_topic": topics.command("reread"),
        "payload_press": json.dumps({"id": "ha-reread"}),
        "icon": "mdi:camera-retake",
    }


def discovery_messages(settings: MqttSettings) -> list[tuple[str, str]]:
    """(topic, retained JSON config) for each entity Home Assistant should create, and an
    empty one for each it should remove."""
    topics, node = Topics.of(settings), f"tidetower_{settings.table}"
    entities = [
        *(("sensor", key, config) for key, config in _sensors(topics, node).items()),
        ("binary_sensor", "attention", _attention(topics, node)),
        ("button", "reread", _reread(topics, node)),
    ]
    common = _common(settings)
    return [
        *(
            (_config_topic(settings, kind, key), json.dumps({**common, **c}))
            for kind, key, c in entities
        ),
        *((_config_topic(settings, kind, key), "") for kind, key in RETIRED),
    ]


def _config_topic(settings: MqttSettings, kind: str, key: str) -> str:
    """Where the discovery config of one entity of this table is retained."""
    return f"{settings.ha_prefix}/{kind}/tidetower_{settings.table}/{key}/config"
