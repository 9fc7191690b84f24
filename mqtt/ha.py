"""Home Assistant MQTT discovery: the Tide position and the last roll as sensors."""

from __future__ import annotations

import json

from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics


def discovery_messages(settings: MqttSettings) -> list[tuple[str, str]]:
    """(topic, retained JSON config) for each sensor Home Assistant should create."""
    topics = Topics.of(settings)
    node = f"tidetower_{settings.table}"
    device = {
        "identifiers": [node],
        "name": f"Tide Tower {settings.table}",
        "manufacturer": "Tide Tower",
    }
    common = {
        "availability_topic": topics.status,
        "payload_available": "online",
        "payload_not_available": "offline",
        "device": device,
    }
    tide = {
        **common,
        "name": "Tide position",
        "unique_id": f"{node}_tide",
        "state_topic": topics.tide,
        "value_template": "{{ value_json.position }}",
        "json_attributes_topic": topics.tide,
        "icon": "mdi:waves",
    }
    roll = {
        **common,
        "name": "Last roll",
        "unique_id": f"{node}_last_roll",
        "state_topic": topics.roll,
        "value_template": "{{ value_json.outcome.summary if value_json.outcome "
        "else value_json.phase }}",
        "json_attributes_topic": topics.roll,
        "icon": "mdi:dice-d20",
    }
    prefix = f"{settings.ha_prefix}/sensor/{node}"
    return [
        (f"{prefix}/tide/config", json.dumps(tide)),
        (f"{prefix}/last_roll/config", json.dumps(roll)),
    ]
