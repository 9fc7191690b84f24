"""Home Assistant discovery on a real Mosquitto: the entities, their retained states rendered
with Jinja2 as Home Assistant renders them, and the buttons that send the tower's commands."""

from __future__ import annotations

import contextlib
import json
from importlib.metadata import version
from pathlib import Path
from typing import Any

import jinja2
from mqtt_fixtures import WAIT, Listener, Mosquitto

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.table import Table
from tidetower.mqtt.client import Message
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.settings import MqttSettings

ROLL = Roll((Die(DieKind.D8, 5), Die(DieKind.D20, 20)))
LINKED = RollContext(actor="Zhao", side="a", mode="unopposed", params={"tide_linked": True})
ATTENTION = {
    "kind": "unreadable",
    "reason": "1 die could not be read",
    "unreadable": [{"index": 0, "reason": "unsure", "faces": [6, 9]}],
    "dice": [],
}


class Rereads:
    """The read loop's side of `reread`, counting the re-reads asked for."""

    def __init__(self) -> None:
        self.count = 0

    def reread(self) -> None:
        self.count += 1

    def enter_die(self, index: int, die: str, value: int) -> None:
        raise ValueError("no die is waiting")

    def drop_die(self, index: int) -> None:
        raise ValueError("no die is waiting")

    def rethrow(self) -> None:
        raise ValueError("no reading is waiting")


def render(template: str, message: Message) -> str:
    """A state or attributes template rendered as Home Assistant does (`value_json` is set
    when the payload is JSON)."""
    values: dict[str, Any] = {"value": message.payload.decode()}
    with contextlib.suppress(ValueError):
        values["value_json"] = json.loads(message.payload)
    return jinja2.Environment().from_string(template).render(values)


def configs(ha: Listener, settings: MqttSettings) -> dict[str, dict[str, Any]]:
    """Each discovered entity's config by its `<component>/<key>`, once all four are in."""
    head = f"homeassistant/{{}}/tidetower_{settings.table}/{{}}/config"
    wanted = {
        f"{kind}/{key}"
        for kind, key in [
            ("sensor", "tide"),
            ("sensor", "last_roll"),
            ("binary_sensor", "attention"),
            ("button", "reread"),
        ]
    }
    for name in sorted(wanted):
        ha.wait_for(lambda m, n=name: m.topic == head.format(*n.split("/")) and m.payload != b"")
    return {
        name: json.loads(m.payload)
        for name in wanted
        for m in ha.seen
        if m.topic == head.format(*name.split("/"))
    }


def test_discovery_names_the_entities_their_origin_and_version(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    settings = mosquitto.settings(ha_discovery=True)
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings) as publisher,
        Listener(settings, "homeassistant/#") as ha,
    ):
        found = configs(ha, settings)
    assert found["sensor/tide"]["state_class"] == "measurement"
    assert "state_class" not in found["sensor/last_roll"]  # text: no statistics
    assert found["binary_sensor/attention"]["device_class"] == "problem"
    assert found["button/reread"]["command_topic"] == publisher.topics.command("reread")
    for config in found.values():
        assert config["origin"] == {"name": "Tide Tower", "sw_version": version("tidetower")}
        assert config["device"]["sw_version"] == version("tidetower")
        assert config["availability_topic"] == publisher.topics.status


def test_the_last_roll_and_attention_survive_a_home_assistant_restart(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    settings = mosquitto.settings(ha_discovery=True)
    with TablePublisher(Table(tmp_path / "s.db"), settings) as publisher:
        topics = publisher.topics
        with Listener(settings, "homeassistant/#", topics.session, topics.tower) as ha:
            found = configs(ha, settings)
            record = publisher.record(ROLL, context=LINKED)
            publisher.tower_state("needs-attention", ATTENTION)
            ha.json_on(topics.session, lambda b: b["last_roll"] is not None)
            ha.wait_for(lambda m: m.topic == topics.tower and b"needs-attention" in m.payload)
        roll, attention = found["sensor/last_roll"], found["binary_sensor/attention"]
        # Home Assistant restarts: it subscribes afresh and gets the retained states at once.
        with Listener(settings, roll["state_topic"], attention["state_topic"]) as again:
            session = again.wait_for(lambda m: m.topic == roll["state_topic"])
            tower = again.wait_for(lambda m: m.topic == attention["state_topic"])
    assert session.retain and tower.retain
    assert render(roll["value_template"], session) == record.outcome.summary
    assert json.loads(render(roll["json_attributes_template"], session))["id"] == record.id
    assert render(attention["value_template"], tower) == "ON"
    details = json.loads(render(attention["json_attributes_template"], tower))
    assert details["kind"] == "unreadable"
    cleared = Message(tower.topic, b"", True)  # a tower with no read loop empties `tower`
    assert render(attention["value_template"], cleared) == "OFF"
    assert render(attention["json_attributes_template"], cleared) == "{}"
    fresh = Message(session.topic, b'{"last_roll": null}', True)  # no roll yet
    assert render(roll["value_template"], fresh) == "none"


def test_each_entity_is_named_under_its_tables_device_and_undo_is_left_to_the_page(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    """Issue 27 (5): two tables' entities read "Tide Tower north Tide position", not both
    "Tide position"; no button takes back a roll unconfirmed, and an older one is removed."""
    names = set()
    for table in ("north", "south"):
        settings = mosquitto.settings(ha_discovery=True, table=table)
        undo = f"homeassistant/button/tidetower_{table}/undo/config"
        with Listener(settings, "homeassistant/#") as ha:
            ha.client.publish(undo, '{"name": "Undo last roll"}', qos=1, retain=True)  # older
            ha.wait_for(lambda m, u=undo: m.topic == u and m.payload != b"")
            with TablePublisher(Table(tmp_path / f"{table}.db"), settings):
                found = configs(ha, settings)
                ha.wait_for(lambda m, u=undo: m.topic == u and m.payload == b"")
        assert all(config["has_entity_name"] is True for config in found.values())
        assert found["sensor/tide"]["name"] == "Tracker position"  # the entity's own part only
        names.add(found["sensor/tide"]["device"]["name"])
        assert not any("undo" in key for key in found)
    assert names == {"Tide Tower north", "Tide Tower south"}


def test_the_reread_button_reaches_the_read_loop(mosquitto: Mosquitto, tmp_path: Path) -> None:
    settings = mosquitto.settings(ha_discovery=True)
    camera = Rereads()
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings, camera) as publisher,
        Listener(settings, "homeassistant/#", publisher.topics.command_result) as ha,
    ):
        found = configs(ha, settings)  # sent after the tower's SUBSCRIBE: it hears commands
        button = found["button/reread"]
        ha.client.publish(button["command_topic"], button["payload_press"], qos=1)
        reply = ha.json_on(publisher.topics.command_result, lambda b: b["command"] == "reread")
        assert reply["ok"] and reply["id"] == "ha-reread", reply
    assert camera.count == 1


def test_home_assistant_discovery_is_resent_on_its_birth(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    settings = mosquitto.settings(ha_discovery=True)
    config = f"homeassistant/sensor/tidetower_{settings.table}/tide/config"
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings) as publisher,
        Listener(settings, "homeassistant/#") as ha,
    ):
        first = ha.wait_for(lambda m: m.topic == config)
        body = json.loads(first.payload)
        assert body["state_topic"] == publisher.topics.tide
        assert body["availability_topic"] == publisher.topics.status
        with Listener(settings, body["json_attributes_topic"]) as state:
            attributes = state.json_on(body["json_attributes_topic"])
        assert attributes["tracker"]["name"] == "the Tide"  # what it is: among its attributes
        assert render(body["value_template"], state.seen[-1]) == str(attributes["position"])
        ha.client.publish(config, "", qos=1, retain=True)  # HA lost its config
        ha.wait_for(lambda m: m.topic == config and m.payload == b"")
        ha.client.publish("homeassistant/status", "online", qos=1)
        ha.wait_for(lambda m: m.topic == config and m is not first and m.payload != b"")


def test_discovery_is_off_by_default(mosquitto: Mosquitto, tmp_path: Path) -> None:
    settings = mosquitto.settings()
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings) as publisher,
        Listener(settings, "homeassistant/#") as ha,
    ):
        assert publisher.wait_delivered(WAIT)
        assert ha.settled() == []
