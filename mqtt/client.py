"""The one module that imports paho: a small typed client with back-off, will and acks.

Everything else (publisher, nodes, commands) talks to the broker through `BrokerClient`.
"""

from __future__ import annotations

import logging
import secrets
import socket
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.reasoncodes import ReasonCode

from tidetower.mqtt.settings import MqttSettings, tls_files

log = logging.getLogger(__name__)

Ack = Callable[[], None]


@dataclass(frozen=True)
class Message:
    """A message as received: its topic, raw payload and retain flag."""

    topic: str
    payload: bytes
    retain: bool


@dataclass(frozen=True)
class Will:
    """The last will the broker publishes if the connection drops."""

    topic: str
    payload: str
    retain: bool = True
    qos: int = 1


Handler = Callable[[Message], None]


def secret_client_id(prefix: str) -> str:
    """`prefix` and 128 random bits: an id no guest can guess, so none can take it over."""
    return prefix + secrets.token_hex(16)


class BrokerClient:
    """A paho client on its own network thread that reconnects with back-off forever."""

    def __init__(
        self,
        settings: MqttSettings,
        client_id: str,
        *,
        will: Will | None = None,
        persistent: bool = False,
    ) -> None:
        self.settings = settings
        self._client = paho.Client(
            CallbackAPIVersion.VERSION2,
            client_id=client_id,
            clean_session=not persistent,
            protocol=paho.MQTTv311,
        )
        self._handlers: dict[str, tuple[int, Handler]] = {}
        self._acks: dict[int, Ack | None] = {}
        self._early: set[int] = set()  # PUBACKs that beat the mid's registration
        self._lock = threading.Lock()
        self._sub_lock = threading.Lock()  # a subscribe() racing a connect is never lost
        self.connected = threading.Event()
        self.subscribed = threading.Event()
        """Set once the broker has acknowledged every subscription since the last connect."""
        self._sub_mids: set[int] = set()
        self.on_connect: list[Callable[[], None]] = []
        self.on_trouble: list[Callable[[str], None]] = []
        """Called on the network thread with a sentence each time a connection attempt fails,
        the broker refuses the connection, or the connection drops."""
        self.on_refused: list[Callable[[str], None]] = []
        """Called on the network thread with the broker's reason when it refuses the login."""
        self._configure(will)

    def _configure(self, will: Will | None) -> None:
        """Credentials, TLS, will, back-off and callbacks, before the first connect."""
        client, settings = self._client, self.settings
        if settings.username is not None:
            client.username_pw_set(settings.username, settings.password())
        if settings.tls:
            tls_files(settings)
            client.tls_set(
                ca_certs=settings.ca_file,
                certfile=settings.cert_file,
                keyfile=settings.key_file,
                cert_reqs=ssl.CERT_REQUIRED,
            )
            client.tls_insecure_set(settings.tls_insecure)
        if will is not None:
            client.will_set(will.topic, will.payload, will.qos, will.retain)
        client.reconnect_delay_set(settings.reconnect_min, settings.reconnect_max)
        client.max_inflight_messages_set(100)
        client.on_connect = self._connected
        client.on_connect_fail = self._unreachable
        client.on_disconnect = self._disconnected
        client.on_message = self._received
        client.on_publish = self._published
        client.on_subscribe = self._suback

    def start(self) -> None:
        """Connect in the background; a broker that is down is retried with back-off."""
        self._client.connect_async(
            self.settings.broker_host(), self.settings.port, self.settings.keepalive
        )
        self._client.loop_start()

    def stop(self, last_words: tuple[str, str] | None = None) -> None:
        """Publish `last_words` (topic, payload; retained) if connected, then disconnect."""
        if last_words is not None and self.connected.is_set():
            info = self._client.publish(last_words[0], last_words[1], 1, True)
            if info.rc == MQTTErrorCode.MQTT_ERR_SUCCESS:
                info.wait_for_publish(2.0)
        self.connected.clear()  # first: a disconnect asked for is no trouble to report
        self._client.disconnect()
        self._client.loop_stop()

    def wait_connected(self, timeout: float) -> bool:
        """True once connected, False if `timeout` seconds pass first."""
        return self.connected.wait(timeout)

    def publish(
        self,
        topic: str,
        payload: bytes | str,
        qos: int = 0,
        retain: bool = False,
        on_ack: Ack | None = None,
    ) -> bool:
        """Send a message; `on_ack` runs once the broker has it. False if not connected."""
        if not self.connected.is_set():
            return False
        info = self._client.publish(topic, payload, qos, retain)
        if info.rc not in (MQTTErrorCode.MQTT_ERR_SUCCESS, MQTTErrorCode.MQTT_ERR_NO_CONN):
            log.warning("publish to %s refused by the client: %s", topic, info.rc)
            return False
        with self._lock:
            early = info.mid in self._early
            self._early.discard(info.mid)
            if not early:
                self._acks[info.mid] = on_ack
        if early and on_ack is not None:
            on_ack()
        return True

    def subscribe(self, topic_filter: str, handler: Handler, qos: int = 0) -> None:
        """Call `handler` for each message on `topic_filter`; renewed on every connect."""
        # paho's own locks are never taken while holding _sub_lock except by subscribe(),
        # which paho 2.x runs under its mid lock only: no lock-order inversion with on_connect
        self._client.message_callback_add(topic_filter, self._dispatch(handler))
        with self._sub_lock:  # else a connect handled right now could miss this filter
            self._handlers[topic_filter] = (qos, handler)
            if self.connected.is_set():
                self.subscribed.clear()
                self._await_suback(self._client.subscribe(topic_filter, qos)[1])

    def _dispatch(
        self, handler: Handler
    ) -> Callable[[paho.Client, object, paho.MQTTMessage], None]:
        def call(_client: paho.Client, _userdata: object, message: paho.MQTTMessage) -> None:
            try:
                handler(Message(message.topic, bytes(message.payload), bool(message.retain)))
            except Exception:  # a bad message must never stop the network thread
                log.exception("handler for %s failed", message.topic)

        return call

    def _connected(
        self,
        client: paho.Client,
        _userdata: object,
        _flags: paho.ConnectFlags,
        reason: ReasonCode,
        _properties: object,
    ) -> None:
        if reason.is_failure:
            log.warning("broker refused the connection: %s", reason)
            self._trouble(f"the broker at {self.where} refused the connection: {reason}")
            for tell in list(self.on_refused):
                tell(str(reason))
            return
        _no_delay(client.socket())
        with self._sub_lock:
            self._sub_mids.clear()
            for topic_filter, (qos, _handler) in self._handlers.items():
                self._await_suback(client.subscribe(topic_filter, qos)[1])
            if not self._sub_mids:
                self.subscribed.set()
            self.connected.set()
        for hook in list(self.on_connect):
            hook()

    def _disconnected(
        self,
        _client: paho.Client,
        _userdata: object,
        _flags: paho.DisconnectFlags,
        reason: ReasonCode,
        _properties: object,
    ) -> None:
        if self.connected.is_set():
            log.info("broker connection lost (%s); reconnecting with back-off", reason)
            self._trouble(f"lost the broker at {self.where} ({reason})")
        self.connected.clear()
        self.subscribed.clear()

    def _unreachable(self, _client: paho.Client, _userdata: object) -> None:
        self._trouble(f"cannot reach the broker at {self.where}")

    def _trouble(self, sentence: str) -> None:
        for hook in list(self.on_trouble):
            hook(sentence)

    @property
    def where(self) -> str:
        """The broker's HOST:PORT, as a person would type it."""
        return f"{self.settings.broker_host()}:{self.settings.port}"

    def _await_suback(self, mid: int | None) -> None:
        """Note a subscription the broker is to acknowledge (None: not sent; the next
        connect subscribes again). Called holding _sub_lock."""
        if mid is not None:
            self._sub_mids.add(mid)

    def _suback(
        self, _client: paho.Client, _userdata: object, mid: int, _codes: object, _properties: object
    ) -> None:
        with self._sub_lock:  # subscribe() holds it until its mid is noted: none arrives early
            self._sub_mids.discard(mid)
            if not self._sub_mids and self.connected.is_set():
                self.subscribed.set()

    def wait_subscribed(self, timeout: float) -> bool:
        """True once every subscription is acknowledged: from then on no message is missed."""
        return self.subscribed.wait(timeout)

    def _received(self, _client: paho.Client, _userdata: object, message: paho.MQTTMessage) -> None:
        """Messages no handler matched (none expected)."""

    def _published(
        self,
        _client: paho.Client,
        _userdata: object,
        mid: int,
        _reason: ReasonCode,
        _properties: object,
    ) -> None:
        with self._lock:
            if mid not in self._acks:
                self._early.add(mid)
                return
            ack = self._acks.pop(mid)
        if ack is not None:
            ack()


def _no_delay(sock: object) -> None:
    """Send small messages at once: Nagle's wait for an ACK would delay a roll by ~40 ms."""
    if isinstance(sock, socket.socket) and sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
