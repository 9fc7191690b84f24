"""What `tidetower run` calls: the broker link for one table, embedded broker included."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tidetower.engine.store import OutboxEvent
from tidetower.engine.table import Table
from tidetower.mqtt.broker import EmbeddedBroker
from tidetower.mqtt.lan import GM_USER, LanAccess, lan_access, tower_login
from tidetower.mqtt.mosquitto import SupervisedMosquitto
from tidetower.mqtt.options import say_connection
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.registry import LearnControl, TowerControls
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.tower import LoopView

log = logging.getLogger(__name__)


TowerBroker = EmbeddedBroker | SupervisedMosquitto
"""The broker the tower runs itself when none is configured."""


def start_broker(
    settings: MqttSettings,
    access: LanAccess | None,
    on_lost: Callable[[str], None] | None = None,
) -> TowerBroker | None:
    """The tower's own broker when none is configured: amqtt in-process for this machine,
    a supervised Mosquitto for the LAN (`access` holds its secrets), which calls `on_lost`
    with the reason if it is given up on."""
    if not settings.embedded:
        return None
    if access is None:
        return EmbeddedBroker(settings).start()
    mosquitto = SupervisedMosquitto(settings, access)
    if on_lost is not None:
        mosquitto.on_give_up.append(on_lost)
    return mosquitto.start()


def link_lines(settings: MqttSettings, access: LanAccess | None) -> list[str]:
    """What a person starting the tower is told about its broker (the GM's token included,
    on purpose: this is where the GM reads it)."""
    if not settings.embedded:
        line = f"MQTT: broker {settings.broker_host()}:{settings.port}, table {settings.table}"
        if settings.lan:  # the LAN and the GM's password are that broker's own config
            line += " (lan: that broker's own listeners, users and ACL decide)"
        return [line]
    where = f"TCP {settings.listen_host()}:{settings.port}, WebSockets {settings.ws_port}"
    if access is None:
        return [
            f"MQTT broker started in this process: {where}, this machine only"
            " (--lan lets the table's phones join)"
        ]
    reach = "for the LAN" if settings.lan else "reachable beyond this machine (bind)"
    return [
        f"MQTT broker (Mosquitto, the tower's own) started {reach}: {where}; anyone may read"
        f" the table, commands need the GM token",
        f"GM token (user {GM_USER}, on the page under Connection): {access.gm_token}"
        f"  (kept in {access.token_file})",
    ]


def outbox_words(table: Table, kept: bool) -> str:
    """What becomes of the events not yet published: they wait in a kept store, and are
    lost with a temporary one."""
    count = len(table.store.pending(1000))
    where = "they go out next start" if kept else "they are dropped with the temporary session"
    return f"{count if count < 1000 else 'over 1000'} event(s) not yet published; {where}"


def remind_while_down(
    table: Table, where: str, down: Callable[[], bool], kept: bool, say: Callable[[str], None]
) -> Callable[[OutboxEvent], None]:
    """A table listener that says again, at each roll while the broker is out of reach,
    that it still is (not at each retry: a throw is when people look)."""

    def remind(event: OutboxEvent) -> None:
        if event.kind == "roll" and down():
            say(f"the broker at {where} is still out of reach: {outbox_words(table, kept)}")

    return remind


@contextmanager
def table_link(
    table: Table,
    settings: MqttSettings,
    controls: TowerControls | None = None,
    flush_seconds: float = 2.0,
    learner: LearnControl | None = None,
    announce: Callable[[str], None] = log.info,
    loop: LoopView | None = None,
    store_kept: bool = True,
    on_broker_lost: Callable[[str], None] | None = None,
) -> Iterator[TablePublisher]:
    """Publish `table` (starting an embedded broker if none is configured) until exit; what
    it connects to, and a broker out of reach (at once, then at each roll), is said through
    `announce`. The retained `tower` follows `loop` from before the first connect, so it
    never shows empty in between. `store_kept`: False when the store goes with the process.
    `on_broker_lost`: called, from another thread, if the tower's own Mosquitto is given up."""
    access = lan_access(settings, table.store.path.parent)
    broker = start_broker(settings, access, on_broker_lost)
    for line in link_lines(settings, access):
        announce(line)
    try:
        publisher = _publisher(table, settings, access, controls, learner, loop)
        down = say_connection(publisher.client, announce, say_first_connect=False)
        publisher.start()
    except BaseException:
        if broker is not None:
            broker.stop()
        raise
    remind = remind_while_down(table, publisher.client.where, down, store_kept, announce)
    table.listeners.append(remind)
    try:
        yield publisher
    finally:
        table.listeners.remove(remind)
        if not publisher.wait_delivered(flush_seconds):
            announce(f"stopping with {outbox_words(table, store_kept)}")
        publisher.stop()
        if broker is not None:
            broker.stop()


def _publisher(
    table: Table,
    settings: MqttSettings,
    access: LanAccess | None,
    controls: TowerControls | None,
    learner: LearnControl | None,
    loop: LoopView | None,
) -> TablePublisher:
    """The table's publisher, logged in to its broker, following `loop` if given."""
    publisher = TablePublisher(table, tower_login(settings, access), controls, learner)
    if loop is not None:
        publisher.follow_loop(loop)
    return publisher
