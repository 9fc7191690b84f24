"""Who may move the Tide on Mosquitto: the per-table ACL of docs/mqtt.md, read from the page
itself, with one tower serving two tables."""

from __future__ import annotations

import json
import re
import subprocess
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest
from mqtt_fixtures import WAIT, Listener, Mosquitto

from tidetower.engine.table import Table
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.registry import COMMANDS
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics

DOC = Path(__file__).parent.parent / "docs" / "mqtt.md"
USERS = ("tower", "north", "south", "display")
FENCE = "pattern readwrite tidetower-tests/fence/%c\n"
"""Lets each test client fence its own messages (Listener.settled); not part of the docs."""


def documented_acl() -> str:
    """The ACL block that follows `/etc/mosquitto/tidetower.acl` in docs/mqtt.md."""
    text = DOC.read_text(encoding="utf-8")
    found = re.search(r"`/etc/mosquitto/tidetower\.acl`.*?```\n(.*?)```", text, re.DOTALL)
    assert found, "docs/mqtt.md has no ACL block after /etc/mosquitto/tidetower.acl"
    return found.group(1)


def test_the_documented_acl_lets_a_gm_send_every_command_and_write_nothing_else() -> None:
    lines = documented_acl().splitlines()
    granted = {line.split("/")[-1] for line in lines if line.startswith("pattern write")}
    assert granted == set(COMMANDS)
    assert "pattern write tidetower/%u/cmd/+" not in lines  # that would let a GM fake replies


@dataclass
class Club:
    """Mosquitto with the documented ACL and one tower serving the tables north and south."""

    broker: Mosquitto
    north: TablePublisher
    south: TablePublisher

    def login(self, user: str, table: str = "north") -> MqttSettings:
        """Client settings for `user` on `table`'s topics."""
        return self.broker.settings(table=table, username=user, password_env=f"PW_{user}")


@pytest.fixture
def club(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Club]:
    passwords = tmp_path / "passwords"
    for number, user in enumerate(USERS):
        flags = ["-c"] if number == 0 else []
        subprocess.run(
            ["mosquitto_passwd", "-b", *flags, str(passwords), user, f"{user}-pw"], check=True
        )
        monkeypatch.setenv(f"PW_{user}", f"{user}-pw")
    (tmp_path / "acl").write_text(documented_acl() + FENCE)
    rules = f"allow_anonymous false\npassword_file {passwords}\nacl_file {tmp_path / 'acl'}\n"
    broker = Mosquitto(tmp_path, extra=rules).start()
    try:
        with ExitStack() as stack:
            club = Club(broker, *_towers(broker, tmp_path, stack))
            yield club
    finally:
        broker.stop()


def _towers(broker: Mosquitto, tmp_path: Path, stack: ExitStack) -> list[TablePublisher]:
    towers = []
    for table in ("north", "south"):
        login = broker.settings(table=table, username="tower", password_env="PW_tower")
        publisher = TablePublisher(Table(tmp_path / f"{table}.db"), login)
        towers.append(stack.enter_context(publisher))
        assert publisher.client.wait_connected(WAIT)
    return towers


def _sent_and_routed(listener: Listener, topic: str, body: str) -> None:
    """Publish and return once the broker acknowledged it: routed, or dropped by the ACL."""
    acked = threading.Event()
    assert listener.client.publish(topic, body, 1, on_ack=acked.set)
    assert acked.wait(WAIT)


def test_each_gm_commands_only_its_own_table(club: Club) -> None:
    north, south = Topics.of(club.login("north")), Topics.of(club.login("south", "south"))
    with (
        Listener(club.login("north"), north.command_result, north.tide) as north_gm,
        Listener(club.login("south", "south"), south.command_result) as south_gm,
    ):
        assert north_gm.json_on(north.tide)["position"] == 8  # a GM reads its own table
        _sent_and_routed(south_gm, north.command("setup"), '{"id": "s", "weight_a": 2}')
        _sent_and_routed(south_gm, south.command("setup"), '{"id": "s2", "weight_a": 6}')
        assert south_gm.json_on(south.command_result, lambda b: b["id"] == "s2")["ok"]
        north_gm.client.publish(north.command("setup"), '{"id": "n", "weight_a": 3}', qos=1)
        assert north_gm.json_on(north.command_result, lambda b: b["id"] == "n")["ok"]
        replies = [json.loads(m.payload)["id"] for m in north_gm.settled() if "cmd" in m.topic]
        assert replies == ["n"]  # south's command on north never reached the tower
    assert club.north.table.bar().position == 3 and club.south.table.bar().position == 6


def test_a_gm_cannot_answer_for_the_tower_or_write_the_tables_state(club: Club) -> None:
    topics = Topics.of(club.login("north"))
    with (
        Listener(club.login("display"), topics.command_result, topics.tide) as display,
        Listener(club.login("north"), topics.command_result) as gm,
    ):
        assert display.json_on(topics.tide)["position"] == 8
        fake = '{"id": "fake", "command": "setup", "ok": true}'
        _sent_and_routed(gm, topics.command_result, fake)
        _sent_and_routed(gm, topics.tide, json.dumps({"position": 0}))
        _sent_and_routed(display, topics.command("setup"), '{"id": "d", "weight_a": 2}')
        gm.client.publish(topics.command("setup"), '{"id": "g", "weight_a": 4}', qos=1)
        display.json_on(topics.command_result, lambda b: b["id"] == "g")
        seen = display.settled()
        ids = [json.loads(m.payload)["id"] for m in seen if m.topic == topics.command_result]
        assert ids == ["g"]  # no fake reply, no reply to the display's own command
        positions = [json.loads(m.payload)["position"] for m in seen if m.topic == topics.tide]
        assert positions == [8, 4]  # the tower's bar only: the GM's fake never went out
    assert club.north.table.bar().position == 4
