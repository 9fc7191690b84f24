"""Red-team figures for LAN play (issue 26): a tower on its own Mosquitto, the GM signed in,
and guests who leave wills on command topics, squat the tower's usual client id, churn
their subscriptions and flood the listeners with idle connections.

Prints, for each attack, what the guests got and whether the GM was still answered.
Run: python bench/lan_flood.py [--connections 1100] [--replies 20]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import statistics
import struct
import tempfile
import threading
import time
from pathlib import Path

import paho.mqtt.client as paho

from tidetower.engine.table import Table
from tidetower.mqtt.client import BrokerClient, Message
from tidetower.mqtt.lan import GM_USER, lan_access, tower_login
from tidetower.mqtt.mosquitto import SupervisedMosquitto
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics

WAIT = 20.0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _text(value: str) -> bytes:
    data = value.encode()
    return struct.pack("!H", len(data)) + data


def _connect(port: int, client_id: str, will: tuple[str, str] | None = None) -> socket.socket:
    """A raw MQTT 3.1.1 guest (with a QoS 1 will if given), CONNACK read."""
    flags, payload = 0x02, _text(client_id)
    if will is not None:
        flags |= 0x04 | 0x08
        payload += _text(will[0]) + _text(will[1])
    body = _text("MQTT") + bytes([4, flags]) + struct.pack("!H", 60) + payload
    guest = socket.create_connection(("127.0.0.1", port), WAIT)
    guest.sendall(bytes([0x10, len(body)]) + body)
    guest.recv(4)
    return guest


class Gm:
    """The GM's client: sends Tide commands and times each answer."""

    def __init__(self, settings: MqttSettings, token_file: Path, topics: Topics) -> None:
        login = {"host": "127.0.0.1", "username": GM_USER, "password_file": str(token_file)}
        self.topics = topics
        self.answers: dict[str, float] = {}
        self.others: list[str] = []
        self._got = threading.Condition()
        self.client = BrokerClient(settings.model_copy(update=login), "bench-gm")
        self.client.subscribe(topics.command_result, self._answer, 1)

    def _answer(self, message: Message) -> None:
        body = json.loads(message.payload)
        with self._got:
            if str(body["id"]).startswith("gm-"):
                self.answers[body["id"]] = time.perf_counter()
            else:
                self.others.append(str(body["id"]))
            self._got.notify_all()

    def command(self, request: str, weight_a: int) -> float | None:
        """Send one Tide command; seconds to its answer, or None if none came."""
        sent = time.perf_counter()
        body = json.dumps({"id": request, "weight_a": weight_a})
        self.client.publish(self.topics.command("setup"), body, qos=1)
        with self._got:
            self._got.wait_for(lambda: request in self.answers, WAIT)
        answered = self.answers.get(request)
        return None if answered is None else answered - sent


def _wills(port: int, topics: Topics, gm: Gm, table: Table) -> None:
    """Eight guests leave wills on cmd/setup, cmd/system and cmd/teach and drop the socket."""
    for n in range(8):
        name = ("setup", "system", "teach")[n % 3]
        body = json.dumps({"id": f"will-{n}", "weight_a": 2, "face": "20"})
        _connect(port, f"will-{n}", (topics.command(name), body)).close()
    gm.command("gm-after-wills", 4)
    print(f"wills: {len(gm.others)} of 8 guest wills taken; Tide {table.bar().position} (GM's 4)")


def _squatters(port: int, gm: Gm) -> None:
    """Fifteen trials of three guests taking over `tidetower-main`, then a GM command."""
    deaf = 0
    for trial in range(15):
        squatters = [_connect(port, "tidetower-main") for _ in range(3)]
        deaf += gm.command(f"gm-squat-{trial}", 3 + trial % 5) is None
        for squatter in squatters:
            squatter.close()
    print(f"squatters: {deaf} of 15 trials left the tower deaf to the GM")


def _churn(port: int, topics: Topics, gm: Gm, replies: int) -> None:
    """One guest subscribes and unsubscribes as fast as it can while the GM commands."""
    guest = paho.Client(paho.CallbackAPIVersion.VERSION2, "churner")
    guest.connect("127.0.0.1", port)
    guest.loop_start()
    stop = threading.Event()

    def churn() -> None:
        while not stop.is_set():
            guest.subscribe(f"{topics.command_result}", 1)
            guest.unsubscribe(f"{topics.command_result}")

    worker = threading.Thread(target=churn, daemon=True)
    worker.start()
    answered = sum(gm.command(f"gm-churn-{n}", 2 + n % 5) is not None for n in range(replies))
    stop.set()
    worker.join()
    guest.loop_stop()
    print(f"churn: {answered} of {replies} GM replies while a guest churned")


def _flood(settings: MqttSettings, gm: Gm, connections: int, replies: int) -> None:
    """Idle TCP and WebSockets connections, half each, then the GM's commands."""
    held: list[tuple[str, socket.socket]] = []
    cut = {"TCP": 0, "WebSockets": 0}
    for n in range(connections):
        kind, port = ("TCP", settings.port) if n % 2 == 0 else ("WebSockets", settings.ws_port)
        try:
            held.append((kind, socket.create_connection(("127.0.0.1", port), 2.0)))
        except OSError:
            cut[kind] += 1
    times = [gm.command(f"gm-flood-{n}", 2 + n % 5) for n in range(replies)]
    for kind, sock in held:
        cut[kind] += _closed(sock)
    ok = [t for t in times if t is not None]
    median = statistics.median(ok) * 1000 if ok else float("nan")
    files = len(os.listdir("/proc/self/fd"))
    print(
        f"flood: {connections} connections, cut or refused by Mosquitto: {cut['TCP']} of "
        f"{connections - connections // 2} TCP, {cut['WebSockets']} of {connections // 2} "
        f"WebSockets; {len(ok)} of {replies} GM replies, median {median:.1f} ms; "
        f"the tower held {files} files"
    )


def _closed(sock: socket.socket) -> bool:
    """True when the broker has closed this connection; closes it either way."""
    sock.settimeout(0.01)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except OSError:
        return True
    finally:
        sock.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--connections", type=int, default=1100)
    parser.add_argument("--replies", type=int, default=20)
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 8192)), hard))
    with tempfile.TemporaryDirectory() as folder:
        settings = MqttSettings(port=_free_port(), ws_port=_free_port(), lan=True, bind="127.0.0.1")
        topics, table = Topics.of(settings), Table(Path(folder) / "s.db")
        access = lan_access(settings, Path(folder))
        assert access is not None
        with SupervisedMosquitto(settings, access):
            publisher = TablePublisher(table, tower_login(settings, access))
            publisher.start()
            gm = Gm(settings, access.token_file, topics)
            gm.client.start()
            gm.client.wait_connected(WAIT)
            gm.client.wait_subscribed(WAIT)
            _wills(settings.port, topics, gm, table)
            _squatters(settings.port, gm)
            _churn(settings.port, topics, gm, args.replies * 3)
            _flood(settings, gm, args.connections, args.replies)
            gm.client.stop()
            publisher.stop()


if __name__ == "__main__":
    main()
