"""Real brokers for the MQTT tests: Mosquitto on free ports with a generated config, and
the tower's embedded amqtt broker; plus a recording subscriber built on BrokerClient."""

from __future__ import annotations

import itertools
import json
import queue
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tidetower.mqtt.broker import BrokerStartError, EmbeddedBroker
from tidetower.mqtt.client import BrokerClient, Message
from tidetower.mqtt.mosquitto import mosquitto_binary as installed_mosquitto
from tidetower.mqtt.settings import MqttSettings

_ids = itertools.count()
# How long a test waits for something that must happen: it bounds only a wait that succeeds,
# so it is long enough for a heavily loaded machine (CI trains models beside the tests).
WAIT = 20.0


def free_port() -> int:
    """A TCP port on loopback nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_listening(
    port: int, timeout: float = WAIT, alive: Callable[[], bool] = lambda: True
) -> None:
    """Return once something accepts connections on 127.0.0.1:`port`, while `alive()`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


def mosquitto_binary() -> str:
    """Debian's mosquitto, found as the tower finds it; missing is a failure, not a skip
    (.ci/run installs it)."""
    try:
        return installed_mosquitto()
    except BrokerStartError as error:
        pytest.fail(str(error))


@dataclass
class Mosquitto:
    """A Mosquitto process with TCP and WebSockets listeners on loopback."""

    workdir: Path
    extra: str = ""
    tcp_options: str = ""  # lines for the TCP listener only, e.g. its TLS files
    port: int = 0
    ws_port: int = 0
    process: subprocess.Popen[bytes] | None = None
    handed_out: bool = False  # settings() gave the ports to a client: they must stay

    def __post_init__(self) -> None:
        self.config = self.workdir / "mosquitto.conf"
        self.log = self.workdir / "mosquitto.log"
        self.new_ports()

    def new_ports(self) -> None:
        """Fresh free ports, written into the config."""
        self.port, self.ws_port = free_port(), free_port()
        self.config.write_text(self.config_text())

    def config_text(self) -> str:
        # `user root`: as root, mosquitto would otherwise switch to a user that cannot
        # write the test's persistence folder.
        anonymous = "" if "password_file" in self.extra else "allow_anonymous true\n"
        return (
            f"user root\npersistence true\npersistence_location {self.workdir}/\n"
            f"autosave_interval 1\nlog_dest file {self.workdir}/mosquitto.log\n"
            f"log_type all\n{anonymous}{self.extra}"
            f"listener {self.port} 127.0.0.1\n{self.tcp_options}"
            f"listener {self.ws_port} 127.0.0.1\nprotocol websockets\n"
        )

    def start(self) -> Mosquitto:
        """Run Mosquitto; a port taken by another process in the meantime is chosen anew
        unless a client already has it (then the failure is reported with the log)."""
        for _ in range(3):
            logged = len(self._log_text())
            if self._started():
                return self
            taken = "Address already in use" in self._log_text()[logged:]
            if not taken or self.handed_out:
                break
            self.new_ports()
        raise RuntimeError(f"mosquitto did not start; its log:\n{self._log_text()}")

    def _started(self) -> bool:
        self.process = subprocess.Popen(
            [mosquitto_binary(), "-c", str(self.config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        process = self.process
        try:
            for port in (self.port, self.ws_port):
                wait_listening(port, alive=lambda: process.poll() is None)
            if process.poll() is None:  # not some other process's listener that answered
                return True
        except TimeoutError:
            pass
        self.stop()
        return False

    def _log_text(self) -> str:
        return self.log.read_text() if self.log.exists() else ""

    def wait_saved(self, timeout: float = WAIT) -> None:
        """Return once Mosquitto has written its sessions to disk since this call.

        Mosquitto logs "Saving" as a save starts (into mosquitto.db.new, renamed when done),
        so the first save begun after this call is known complete when the next one begins.
        """
        before = self._log_text().count("Saving in-memory database")
        deadline = time.monotonic() + timeout
        while self._log_text().count("Saving in-memory database") < before + 2:
            if time.monotonic() > deadline:
                raise TimeoutError("mosquitto did not save its database")
            time.sleep(0.05)

    def kill(self) -> None:
        """Kill -9: no goodbye to anyone."""
        if self.process is not None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)
            self.process = None

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
            self.process = None

    def settings(self, **changes: Any) -> MqttSettings:
        """Client settings for this broker and a fresh table name."""
        self.handed_out = True
        return broker_settings(self.port, self.ws_port, **changes)


def broker_settings(port: int, ws_port: int, **changes: Any) -> MqttSettings:
    values: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": port,
        "ws_port": ws_port,
        "table": f"t{next(_ids)}",
        "reconnect_max": 2,
    }
    return MqttSettings(**{**values, **changes})


@dataclass
class Embedded:
    """The tower's embedded amqtt broker, started for a test."""

    broker: EmbeddedBroker
    port: int
    ws_port: int

    def settings(self, **changes: Any) -> MqttSettings:
        return broker_settings(self.port, self.ws_port, **changes)


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    broker = Mosquitto(tmp_path).start()
    yield broker
    broker.stop()


def start_embedded(attempts: int = 3) -> Embedded:
    """The embedded broker on free ports, chosen anew if another process takes one first."""
    port, ws_port = free_port(), free_port()
    try:
        broker = EmbeddedBroker(MqttSettings(port=port, ws_port=ws_port)).start(WAIT)
    except BrokerStartError as error:
        if attempts == 1 or "already in use" not in str(error).lower():
            raise
        return start_embedded(attempts - 1)
    return Embedded(broker, port, ws_port)


@pytest.fixture
def embedded() -> Iterator[Embedded]:
    broker = start_embedded()
    yield broker
    broker.broker.stop()


@pytest.fixture(params=["mosquitto", "amqtt"])
def any_broker(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Mosquitto | Embedded]:
    """Each test using it runs once against Mosquitto and once against the embedded broker."""
    if request.param == "mosquitto":
        broker = Mosquitto(tmp_path).start()
        yield broker
        broker.stop()
    else:
        inside = start_embedded()
        yield inside
        inside.broker.stop()


class Listener:
    """A test client that records every message on the topics it follows."""

    def __init__(
        self,
        settings: MqttSettings,
        *topics: str,
        persistent: bool = False,
        client_id: str | None = None,
    ) -> None:
        self.messages: queue.Queue[Message] = queue.Queue()
        self.seen: list[Message] = []
        self.topics = topics
        self.client_id = client_id or f"listener-{next(_ids)}"
        self.client = BrokerClient(settings, self.client_id, persistent=persistent)
        self._subacks: queue.Queue[list[Any]] = queue.Queue()
        # BrokerClient has no SUBACK hook of its own; the test reaches into its paho client.
        self.client._client.on_subscribe = lambda _c, _u, _mid, codes, *_: self._subacks.put(codes)
        for topic in topics:
            self.client.subscribe(topic, self.messages.put, qos=1)

    def __enter__(self) -> Listener:
        self.client.start()
        try:
            assert self.client.wait_connected(WAIT), "listener could not connect"
            self._wait_subscribed()
        except BaseException:
            self.client.stop()
            raise
        return self

    def _wait_subscribed(self) -> None:
        """Return once the broker has acknowledged every topic: from then on nothing is missed.

        Being connected is not enough: the SUBSCRIBE may still be on its way while another
        client's publish overtakes it, and a message that is not retained would be lost.
        """
        for topic in self.topics:
            try:
                codes = self._subacks.get(timeout=WAIT)
            except queue.Empty:
                raise AssertionError(f"the broker did not acknowledge {topic!r}") from None
            refused = [c for c in codes if c.is_failure]
            assert not refused, f"the broker refused a subscription of {self.topics}: {refused}"

    def __exit__(self, *exc: object) -> None:
        self.client.stop()

    def wait_for(self, check: Callable[[Message], bool], timeout: float = WAIT) -> Message:
        """The first message (new or already seen) that passes `check`."""
        for message in self.seen:
            if check(message):
                return message
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                break
            self.seen.append(message)
            if check(message):
                return message
        raise AssertionError(
            f"no matching message within {timeout} s; got "
            f"{[(m.topic, m.payload[:80]) for m in self.seen]}"
        )

    def json_on(
        self,
        topic: str,
        check: Callable[[dict[str, Any]], bool] = lambda _: True,
        timeout: float = WAIT,
    ) -> dict[str, Any]:
        """The JSON body of the first message on `topic` that passes `check`; an empty
        message (a retained topic cleared, e.g. `tower` on connect) is no body and is passed."""
        message = self.wait_for(
            lambda m: m.topic == topic and m.payload != b"" and check(json.loads(m.payload)),
            timeout,
        )
        body: dict[str, Any] = json.loads(message.payload)
        return body

    def settled(self) -> list[Message]:
        """Every message received so far, once the broker has sent all it had for this
        listener: a message the listener sends itself after them has come back (Mosquitto
        handles messages in the order they arrive), so a late one cannot slip past the check
        as it could past a fixed wait."""
        fence, token = f"tidetower-tests/fence/{self.client_id}", f"fence-{next(_ids)}".encode()
        self.client.subscribe(fence, self.messages.put, qos=1)
        codes = self._subacks.get(timeout=WAIT)
        assert not [c for c in codes if c.is_failure], f"the broker refused {fence!r}"
        assert self.client.publish(fence, token, 1, False)
        self.wait_for(lambda m: m.topic == fence and m.payload == token)
        return [m for m in self.seen if m.topic != fence]

    def drain(self, quiet: float = 0.3) -> list[Message]:
        """Everything received until nothing arrives for `quiet` seconds."""
        while True:
            try:
                self.seen.append(self.messages.get(timeout=quiet))
            except queue.Empty:
                return self.seen
