"""Around the publisher: the embedded broker link, the last will, the nodes' CLI (Home
Assistant: test_mqtt_ha.py)."""

from __future__ import annotations

import gc
import inspect
import json
import queue
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from mqtt_fixtures import WAIT, Embedded, Listener, Mosquitto, free_port

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.table import Table
from tidetower.engine.tray import DieRead, Reading, roll_of
from tidetower.firmware.cli import main
from tidetower.mqtt.broker import BrokerStartError, EmbeddedBroker
from tidetower.mqtt.ledbar.node import LedbarNode, TerminalRenderer
from tidetower.mqtt.options import CONFIG_EXIT, say_connection
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.runtime import table_link
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics

ROLL = Roll((Die(DieKind.D8, 5), Die(DieKind.D20, 20)))
LINKED = RollContext(actor="Zhao", side="a", mode="unopposed", params={"tide_linked": True})


def test_with_no_broker_configured_the_tower_runs_its_own(tmp_path: Path) -> None:
    settings = MqttSettings(port=free_port(), ws_port=free_port(), table="laptop")
    assert settings.embedded
    topics = Topics.of(settings)
    with table_link(Table(tmp_path / "s.db"), settings) as publisher:
        client_view = settings.model_copy(update={"host": "127.0.0.1"})
        with Listener(client_view, topics.tide, topics.roll) as listener:
            assert listener.json_on(topics.tide)["position"] == 8
            publisher.record(ROLL)
            assert listener.json_on(topics.roll)["phase"] == "result"


def test_a_tower_killed_outright_is_shown_offline(mosquitto: Mosquitto, tmp_path: Path) -> None:
    settings = mosquitto.settings()
    topics = Topics.of(settings)
    script = (
        "import sys, time\n"
        "from tidetower.engine.table import Table\n"
        "from tidetower.mqtt.publisher import TablePublisher\n"
        "from tidetower.mqtt.settings import MqttSettings\n"
        "p = TablePublisher(Table(sys.argv[2]), MqttSettings.model_validate_json(sys.argv[1]))\n"
        "p.start(); p.client.wait_connected(30); p.wait_delivered(30); print('up', flush=True)\n"
        "time.sleep(60)\n"
    )
    tower = subprocess.Popen(
        [sys.executable, "-c", script, settings.model_dump_json(), str(tmp_path / "s.db")],
        stdout=subprocess.PIPE,
    )
    try:
        assert tower.stdout is not None and tower.stdout.readline() == b"up\n"
        with Listener(settings, topics.status) as listener:
            listener.wait_for(lambda m: m.payload == b"online")
            tower.send_signal(signal.SIGKILL)
            assert listener.wait_for(lambda m: m.payload == b"offline")
    finally:
        tower.kill()
        tower.wait()


def test_outbox_events_wait_for_the_next_start_of_the_tower(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    nowhere = mosquitto.settings().model_copy(update={"port": free_port()})  # no broker there
    seen = Reading(
        tuple(DieRead(d.kind.value, d.face, (0.1, 0.1, 0.2, 0.2), 0.9) for d in ROLL.dice)
    )
    with TablePublisher(Table(tmp_path / "s.db"), nowhere) as publisher:
        ids = [publisher.record(roll_of(seen), reading=seen.dice).id for _ in range(3)]
    publisher.table.close()
    settings = mosquitto.settings(table=nowhere.table)
    topics = Topics.of(settings)
    with (
        Listener(settings, topics.roll) as listener,
        TablePublisher(Table(tmp_path / "s.db"), settings) as again,
    ):
        assert again.wait_delivered(WAIT)
        last = listener.json_on(topics.roll, lambda b: b["id"] == ids[-1])
        got = [json.loads(m.payload)["id"] for m in listener.drain(0.2)]
    assert got == ids
    # The camera's confidence and boxes survived the restart in the outbox.
    assert [d["confidence"] for d in last["dice"]] == [0.9] * len(ROLL.dice)


def test_the_ledbar_shrugs_off_a_bad_tide_message(embedded: Embedded, tmp_path: Path) -> None:
    settings = embedded.settings()
    topics = Topics.of(settings)
    lines: list[str] = []
    with Listener(settings) as sender, LedbarNode(settings) as node:
        node.renderers.append(TerminalRenderer(lines.append))
        sender.client.publish(topics.tide, b"\xff not json", qos=1)
        sender.client.publish(topics.tide, json.dumps({"v": 1, "position": "x"}), qos=1)
        with TablePublisher(Table(tmp_path / "s.db"), settings) as publisher:
            publisher.record(ROLL, context=LINKED)
            assert publisher.wait_delivered(WAIT)
        deadline = time.monotonic() + WAIT
        while not any("8 → 9" in line for line in lines):
            assert time.monotonic() < deadline, lines
            time.sleep(0.05)


def test_the_node_commands_take_broker_and_table(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(main, ["ledbar", "--broker", "nowhere"])
    assert bad.exit_code == 2 and "--broker must be HOST:PORT" in bad.output
    out = runner.invoke(
        main,
        [
            "display",
            "--broker",
            "pi.local:1883",
            "--table",
            "north",
            "--export",
            str(tmp_path / "page"),
        ],
    )
    assert out.exit_code == 0, out.output
    assert "ws=ws://pi.local:9001/mqtt&table=north" in out.output
    assert (tmp_path / "page" / "mqttws.js").exists()
    config = tmp_path / "tower.toml"
    config.write_text('[mqtt]\nhost = "pi.local"\ntable = "south"\nled_count = 2\n')
    bad_config = runner.invoke(main, ["ledbar", "--config", str(config)])
    assert bad_config.exit_code == CONFIG_EXIT and "mqtt.led_count" in bad_config.output


def _certificates(folder: Path) -> tuple[Path, Path, Path]:
    """A throw-away CA and a server certificate for 127.0.0.1, made with openssl."""
    ca, key, cert = folder / "ca.crt", folder / "server.key", folder / "server.crt"

    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    openssl(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "1",
        "-subj",
        "/CN=test CA",
        "-keyout",
        str(folder / "ca.key"),
        "-out",
        str(ca),
    )
    openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=127.0.0.1",
        "-keyout",
        str(key),
        "-out",
        str(folder / "server.csr"),
    )
    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    openssl(
        "x509",
        "-req",
        "-in",
        str(folder / "server.csr"),
        "-CA",
        str(ca),
        "-CAkey",
        str(folder / "ca.key"),
        "-CAcreateserial",
        "-days",
        "1",
        "-out",
        str(cert),
        "-extfile",
        str(folder / "san.ext"),
    )
    return ca, cert, key


def test_tls_to_the_broker_with_the_tables_ca(tmp_path: Path) -> None:
    ca, cert, key = _certificates(tmp_path)
    broker = Mosquitto(tmp_path, tcp_options=f"cafile {ca}\ncertfile {cert}\nkeyfile {key}\n")
    broker.start()
    try:
        settings = broker.settings(tls=True, ca_file=str(ca))
        topics = Topics.of(settings)
        with (
            TablePublisher(Table(tmp_path / "s.db"), settings),
            Listener(settings, topics.tide) as listener,
        ):
            assert listener.json_on(topics.tide)["position"] == 8
        stranger = TablePublisher(
            Table(tmp_path / "t.db"),
            settings.model_copy(update={"ca_file": None, "table": "other"}),
        )  # trusts only the system's CAs
        with stranger:
            assert not stranger.client.wait_connected(1.5)
    finally:
        broker.stop()


def test_an_embedded_broker_on_a_busy_port_says_so() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        settings = MqttSettings(port=port, ws_port=free_port())
        with pytest.raises(BrokerStartError, match=f"127.0.0.1:{port}"):
            EmbeddedBroker(settings).start()


def _amqtt_coroutines_waiting() -> int:
    """amqtt's coroutines that are suspended, not finished: each one a task left running."""
    gc.collect()
    return sum(
        1
        for thing in gc.get_objects()
        if inspect.iscoroutine(thing)
        and inspect.getcoroutinestate(thing) == inspect.CORO_SUSPENDED
        and "amqtt" in thing.cr_code.co_filename
    )


def test_a_stopped_broker_leaves_nothing_running_even_with_a_client_connected() -> None:
    before = _amqtt_coroutines_waiting()
    for _ in range(3):  # a test run starts many; amqtt shares state between them
        settings = MqttSettings(port=free_port(), ws_port=free_port())
        broker = EmbeddedBroker(settings).start()
        client = settings.model_copy(update={"host": "127.0.0.1"})
        with Listener(client, "t/#") as listener:
            assert listener.client.publish("t/x", "1", qos=1)
            listener.wait_for(lambda m: m.topic == "t/x")
            broker.stop()  # the listener is still connected, as a tower's own client is
    assert _amqtt_coroutines_waiting() == before


def test_the_ledbar_says_when_it_cannot_reach_the_broker_and_when_it_is_back(
    tmp_path: Path,
) -> None:
    broker = Mosquitto(tmp_path)  # its ports chosen, nothing listening on them yet
    settings = broker.settings(reconnect_max=1)
    lines: queue.Queue[str] = queue.Queue()
    node = LedbarNode(settings)
    say_connection(node.client, lines.put)
    with node:
        first = lines.get(timeout=WAIT)
        assert first.startswith(f"cannot reach the broker at 127.0.0.1:{broker.port}"), first
        broker.start()
        try:
            back = lines.get(timeout=WAIT)  # once an outage, not at every retry
            assert back == f"connected to the broker at 127.0.0.1:{broker.port}"
            broker.stop()
            assert lines.get(timeout=WAIT).startswith("lost the broker at 127.0.0.1")
            broker.start()
            assert (
                lines.get(timeout=WAIT) == f"reconnected to the broker at 127.0.0.1:{broker.port}"
            )
        finally:
            broker.stop()
