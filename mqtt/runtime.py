"""What `tidetower run` calls: the broker link for one table, embedded broker included."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

from tidetower.engine.table import Table
from tidetower.mqtt.broker import EmbeddedBroker
from tidetower.mqtt.commands import LearnControl, TowerControls
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.settings import MqttSettings

log = logging.getLogger(__name__)


@contextmanager
def table_link(
    table: Table,
    settings: MqttSettings,
    controls: TowerControls | None = None,
    flush_seconds: float = 2.0,
    learner: LearnControl | None = None,
) -> Iterator[TablePublisher]:
    """Publish `table` (starting an embedded broker if none is configured) until exit."""
    broker = EmbeddedBroker(settings).start() if settings.embedded else None
    if broker is not None:
        log.info(
            "embedded MQTT broker on %s:%d (WebSockets %d)",
            settings.bind,
            settings.port,
            settings.ws_port,
        )
    publisher = TablePublisher(table, settings, controls, learner).start()
    try:
        yield publisher
    finally:
        if not publisher.wait_delivered(flush_seconds):
            log.warning("stopping with events still in the outbox; they go out next start")
        publisher.stop()
        if broker is not None:
            broker.stop()
