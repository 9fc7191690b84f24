"""What `tidetower run` calls: the broker link for one table, embedded broker included."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from tidetower.engine.table import Table
from tidetower.mqtt.broker import EmbeddedBroker
from tidetower.mqtt.commands import LearnControl, TowerControls
from tidetower.mqtt.lan import GM_USER, LanAccess, lan_access, tower_login
from tidetower.mqtt.mosquitto import SupervisedMosquitto
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.tower import LoopView

log = logging.getLogger(__name__)


TowerBroker = EmbeddedBroker | SupervisedMosquitto
"""The broker the tower runs itself when none is configured."""


def start_broker(settings: MqttSettings, access: LanAccess | None) -> TowerBroker | None:
    """The tower's own broker when none is configured: amqtt in-process for this machine,
    a supervised Mosquitto for the LAN (`access` holds its secrets)."""
    if not settings.embedded:
        return None
    if access is None:
        return EmbeddedBroker(settings).start()
    return SupervisedMosquitto(settings, access).start()


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


@contextmanager
def table_link(
    table: Table,
    settings: MqttSettings,
    controls: TowerControls | None = None,
    flush_seconds: float = 2.0,
    learner: LearnControl | None = None,
    announce: Callable[[str], None] = log.info,
    loop: LoopView | None = None,
) -> Iterator[TablePublisher]:
    """Publish `table` (starting an embedded broker if none is configured) until exit; what
    it connects to is said through `announce`. The retained `tower` follows `loop` from
    before the first connect, so it never shows empty in between."""
    access = lan_access(settings, table.store.path.parent)
    broker = start_broker(settings, access)
    for line in link_lines(settings, access):
        announce(line)
    try:
        publisher = TablePublisher(table, tower_login(settings, access), controls, learner)
        if loop is not None:
            publisher.follow_loop(loop)
        publisher.start()
    except BaseException:
        if broker is not None:
            broker.stop()
        raise
    try:
        yield publisher
    finally:
        if not publisher.wait_delivered(flush_seconds):
            log.warning("stopping with events still in the outbox; they go out next start")
        publisher.stop()
        if broker is not None:
            broker.stop()
