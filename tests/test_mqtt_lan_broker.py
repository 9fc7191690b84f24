"""The LAN's broker holds what amqtt let through (issue 26): a guest's will never becomes a
command, a squatted client id never deafens the tower, a dead Mosquitto is started again,
a huge publish is cut off, and a missing Mosquitto is one line with the apt command.

Guests speak raw MQTT 3.1.1 over a socket, so they can do what no well-behaved client
does: leave a will on a command topic and drop the connection without a goodbye."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import struct
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as paho
import pytest
from click.testing import CliRunner
from mqtt_fixtures import WAIT, Listener, free_port

from tidetower.engine.table import Table
from tidetower.firmware.cli import main
from tidetower.mqtt import mosquitto
from tidetower.mqtt.broker import BrokerStartError, EmbeddedBroker
from tidetower.mqtt.lan import GM_USER, lan_access, tower_login
from tidetower.mqtt.mosquitto import SupervisedMosquitto, acl_text
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.registry import COMMANDS
from tidetower.mqtt.runtime import table_link
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics


def _lan() -> MqttSettings:
    """A LAN table whose broker listens on loopback only: tests reach nothing else."""
    return MqttSettings(port=free_port(), ws_port=free_port(), lan=True, bind="127.0.0.1")


def _text(value: str) -> bytes:
    data = value.encode()
    return struct.pack("!H", len(data)) + data


def _packet(kind: int, body: bytes) -> bytes:
    """An MQTT packet: its type byte, the remaining length (variable-length), the body."""
    length, size = b"", len(body)
    while True:
        size, digit = divmod(size, 128)
        length += bytes([digit | (0x80 if size else 0)])
        if not size:
            return bytes([kind]) + length + body


def _connect(port: int, client_id: str, will: tuple[str, str, bool] | None = None) -> socket.socket:
    """A raw guest: CONNECT (with a QoS 1 will if given); returns once CONNACK is read."""
    flags, payload = 0x02, _text(client_id)
    if will is not None:
        topic, body, retain = will
        flags |= 0x04 | 0x08 | (0x20 if retain else 0)
        payload += _text(topic) + _text(body)
    guest = socket.create_connection(("127.0.0.1", port), WAIT)
    guest.sendall(
        _packet(0x10, _text("MQTT") + bytes([4, flags]) + struct.pack("!H", 60) + payload)
    )
    connack = guest.recv(4)
    return guest, connack[3] if len(connack) == 4 else -1


def _log_says(broker: SupervisedMosquitto, pattern: str) -> None:
    """Return once Mosquitto's own log says `pattern`: the broker has handled that event."""
    deadline = time.monotonic() + WAIT
    while not re.search(pattern, broker.log_file.read_text(errors="replace")):
        assert time.monotonic() < deadline, f"Mosquitto never logged {pattern!r}"
        time.sleep(0.02)


class Tower:
    """One table on the tower's own Mosquitto, and the GM signed in with the token."""

    def __init__(self, folder: Path) -> None:
        self.settings = _lan()
        self.topics = Topics.of(self.settings)
        self.table = Table(folder / "s.db")
        self.access = lan_access(self.settings, folder)
        assert self.access is not None
        self.broker = SupervisedMosquitto(self.settings, self.access)
        self.publisher = TablePublisher(self.table, tower_login(self.settings, self.access))
        guest = self.settings.model_copy(update={"host": "127.0.0.1"})
        self.gm_settings = guest.model_copy(
            update={"username": GM_USER, "password_file": str(self.access.token_file)}
        )

    def gm_moves_the_tide(self, gm: Listener, weight_a: int, request: str) -> list[str]:
        """The GM sets a new Tide and waits for its answer; returns every answered id."""
        body = json.dumps({"id": request, "weight_a": weight_a})
        gm.client.publish(self.topics.command("setup"), body, qos=1)
        assert gm.json_on(self.topics.command_result, lambda b: b["id"] == request)["ok"]
        answered = [json.loads(m.payload) for m in gm.seen if m.topic == self.topics.command_result]
        return [reply["id"] for reply in answered]


@pytest.fixture
def tower(tmp_path: Path) -> Iterator[Tower]:
    lan = Tower(tmp_path)
    lan.broker.start()
    lan.publisher.start()
    try:
        # a command sent before the broker holds the tower's subscription reaches no one:
        # every test starts once it does, however slowly a busy machine connects the tower
        assert lan.publisher.client.wait_subscribed(WAIT), "the tower never subscribed"
        yield lan
    finally:
        lan.publisher.stop()
        lan.broker.stop()


@pytest.mark.parametrize("retain", [False, True])
def test_a_guests_will_on_a_command_topic_is_never_taken(tower: Tower, retain: bool) -> None:
    tide, system = json.dumps({"id": "will", "weight_a": 2}), json.dumps({"id": "w2"})
    wills = {
        "will-tide": (tower.topics.command("setup"), tide),
        "will-system": (tower.topics.command("system"), system),
        "will-teach": (tower.topics.command("teach"), json.dumps({"id": "w3", "face": "20"})),
        "will-status": (tower.topics.status, "offline"),
    }
    with Listener(tower.gm_settings, tower.topics.command_result) as gm:
        assert tower.gm_moves_the_tide(gm, 5, "before") == ["before"]
        for client_id, (topic, body) in wills.items():
            _connect(tower.settings.port, client_id, (topic, body, retain))[0].close()  # no goodbye
            _log_says(tower.broker, rf"Client {client_id} (closed its connection|disconnected)")
        assert tower.gm_moves_the_tide(gm, 4, "after") == ["before", "after"]
    assert tower.table.bar().position == 4  # the GM's Tide, never the wills'
    with Listener(tower.gm_settings, tower.topics.status) as late:
        assert late.wait_for(lambda m: m.topic == tower.topics.status).payload == b"online"


def test_a_will_over_websockets_is_never_taken(tower: Tower) -> None:
    guest = paho.Client(paho.CallbackAPIVersion.VERSION2, "ws-will", transport="websockets")
    guest.ws_set_options(path="/mqtt")
    guest.will_set(tower.topics.command("setup"), json.dumps({"id": "ws", "weight_a": 2}), 1)
    guest.connect("127.0.0.1", tower.settings.ws_port)
    deadline = time.monotonic() + WAIT
    while not guest.is_connected():
        assert time.monotonic() < deadline, "the WebSockets guest never connected"
        guest.loop(0.1)
    sock = guest.socket()
    assert sock is not None
    sock.close()  # dropped without a DISCONNECT: the broker would send the will
    _log_says(tower.broker, r"Client ws-will (closed its connection|disconnected)")
    with Listener(tower.gm_settings, tower.topics.command_result) as gm:
        assert tower.gm_moves_the_tide(gm, 4, "gm") == ["gm"]
    assert tower.table.bar().position == 4


def test_the_loopback_broker_refuses_a_will_on_a_command_topic() -> None:
    settings = MqttSettings(port=free_port(), ws_port=free_port())
    with EmbeddedBroker(settings):
        topics = Topics.of(settings)
        refused, code = _connect(settings.port, "w", (topics.command("setup"), "{}", False))
        assert code == 5  # not authorised
        fine, code = _connect(settings.port, "s", (topics.status, "offline", False))
        assert code == 0  # any other will is kept
        for guest in (refused, fine):
            guest.close()


def test_guests_squatting_the_towers_usual_client_id_leave_it_answering(tower: Tower) -> None:
    own = tower_login(tower.settings, tower.access).client_id
    assert own is not None and own.startswith("tidetower-") and own != "tidetower-main"
    assert lan_access(tower.settings, tower.access.folder).tower_client_id == own  # every start
    _log_says(tower.broker, rf"New client connected from 127\.0\.0\.1:\d+ as {own} ")
    ids = ["tidetower-main"] * 3 + ["tidetower-teach-main"]  # each takes the one before over
    squatters = [_connect(tower.settings.port, client_id)[0] for client_id in ids]
    with Listener(tower.gm_settings, tower.topics.command_result) as gm:
        for n in range(5):
            assert tower.gm_moves_the_tide(gm, 3 + n, f"gm-{n}")[-1] == f"gm-{n}"
    for squatter in squatters:
        squatter.close()
    assert tower.table.bar().position == 7


def test_the_acl_lets_the_gm_send_each_command_and_nothing_else() -> None:
    settings = MqttSettings(table="north")
    lines = acl_text(settings).splitlines()
    gm = lines[lines.index(f"user {GM_USER}") + 1 :]
    written = {line.removeprefix("topic write ") for line in gm if line.startswith("topic write")}
    assert written == {f"tidetower/north/cmd/{name}" for name in COMMANDS}
    assert "tidetower/north/cmd/result" not in written
    anonymous = lines[: lines.index("user tower")]
    assert [line for line in anonymous if line.startswith("topic")] == [
        "topic read tidetower/north/#"
    ]


def test_a_mosquitto_that_dies_is_started_again_and_the_gm_is_answered(tower: Tower) -> None:
    first = tower.broker.pid
    assert first is not None
    with Listener(tower.gm_settings, tower.topics.command_result) as gm:
        assert tower.gm_moves_the_tide(gm, 3, "before") == ["before"]
    os.kill(first, signal.SIGKILL)
    deadline = time.monotonic() + WAIT
    while tower.broker.restarts < 1 or tower.broker.pid in (None, first):
        assert time.monotonic() < deadline, "Mosquitto was not started again"
        time.sleep(0.05)
    # the new Mosquitto keeps nothing: a status is the tower's own, sent once it is back
    # (it subscribes to its commands before it says so)
    with Listener(tower.gm_settings, tower.topics.status) as back:
        assert back.wait_for(lambda m: m.topic == tower.topics.status).payload == b"online"
    with Listener(tower.gm_settings, tower.topics.command_result) as gm:
        assert tower.gm_moves_the_tide(gm, 6, "after") == ["after"]
    assert tower.table.bar().position == 6


def test_a_publish_larger_than_a_mebibyte_is_cut_off_unread(tower: Tower) -> None:
    guest, code = _connect(tower.settings.port, "big")
    assert code == 0
    topic = _text(tower.topics.command("setup"))
    header = bytes([0x30, 0xFF, 0xFF, 0xFF, 0x7F])  # a PUBLISH that declares 256 MiB
    with pytest.raises(OSError):
        guest.sendall(header + topic)
        for _ in range(64):  # 64 MiB, if the broker kept reading
            guest.sendall(b"x" * (1 << 20))
    _log_says(tower.broker, r"Client big (closed its connection|disconnected)")
    with Listener(tower.gm_settings, tower.topics.command_result) as gm:
        assert tower.gm_moves_the_tide(gm, 4, "gm") == ["gm"]


def test_lan_play_without_mosquitto_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mosquitto.shutil, "which", lambda *_a, **_k: None)
    missing = pytest.raises(BrokerStartError, match=r"not installed: sudo apt install mosquitto$")
    with missing, table_link(Table(tmp_path / "s.db"), _lan()):
        pass
    result = CliRunner().invoke(
        main, ["run", "--sim", "--lan", "--rolls", "1", "--store", str(tmp_path / "t.db")]
    )
    assert result.exit_code == 78
    assert "sudo apt install mosquitto" in result.output


def test_a_guest_churning_its_subscriptions_loses_the_gm_no_reply(tower: Tower) -> None:
    churner = paho.Client(paho.CallbackAPIVersion.VERSION2, "churner")
    churner.connect("127.0.0.1", tower.settings.port)
    churner.loop_start()
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            churner.subscribe(tower.topics.command_result, 1)
            churner.unsubscribe(tower.topics.command_result)

    worker = threading.Thread(target=churn, daemon=True)
    worker.start()
    try:
        with Listener(tower.gm_settings, tower.topics.command_result) as gm:
            answered = [tower.gm_moves_the_tide(gm, 2 + n % 5, f"gm-{n}")[-1] for n in range(20)]
    finally:
        stop.set()
        worker.join()
        churner.loop_stop()
    assert answered == [f"gm-{n}" for n in range(20)]


def test_a_flood_of_connections_is_capped_and_the_gm_still_answered(tower: Tower) -> None:
    with Listener(tower.gm_settings, tower.topics.command_result) as gm:
        flood = [socket.create_connection(("127.0.0.1", tower.settings.port), WAIT)]
        flood += [
            socket.create_connection(("127.0.0.1", tower.settings.port), WAIT)
            for _ in range(mosquitto.MAX_CONNECTIONS + 49)
        ]
        last = flood[-1]
        last.settimeout(WAIT)
        assert last.recv(1) == b""  # beyond max_connections: closed by Mosquitto at once
        assert tower.gm_moves_the_tide(gm, 4, "gm") == ["gm"]
        for sock in flood:
            sock.close()
    assert tower.table.bar().position == 4
