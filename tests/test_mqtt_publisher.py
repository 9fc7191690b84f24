"""The tower's publisher against real brokers: rolls, the retained bar, the outbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mqtt_fixtures import WAIT, Embedded, Listener, Mosquitto

from tidetower.engine.dice import Die, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.table import Table
from tidetower.engine.tray import DieRead, Reading, roll_of
from tidetower.mqtt.inbox import Inbox
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.topics import Topics

ZHAO = RollContext(
    actor="Zhao", side="a", mode="unopposed", pool=2, params={"tide_linked": True, "tier": "d8"}
)
READING = (
    DieRead("d8", 5, (0.1, 0.12, 0.4, 0.44), 0.97),
    DieRead("d8", 3, (0.6, 0.12, 0.9, 0.44), 0.91),
    DieRead("d20", 20, (0.12, 0.08, 0.17, 0.58), 0.88),
)
OMEN_ROLL = Roll(roll_of(Reading(READING)).dice, "Zhao")


def omen_roll(publisher: TablePublisher) -> str:
    """Declare Zhao's linked roll and throw it: the d20 Omen moves the Tide 8 -> 9."""
    publisher.table.declare(ZHAO)
    return publisher.record(OMEN_ROLL, reading=READING).id


def test_a_roll_goes_from_the_engine_to_a_subscriber(
    any_broker: Mosquitto | Embedded, tmp_path: Path
) -> None:
    settings = any_broker.settings()
    topics = Topics.of(settings)
    with (
        Listener(settings, topics.roll, topics.tide) as listener,
        TablePublisher(Table(tmp_path / "s.db"), settings) as publisher,
    ):
        assert publisher.client.wait_connected(WAIT)
        publisher.table.declare(ZHAO)
        publisher.roll_seen(READING)  # as the read loop does, before it records the roll
        roll_id = publisher.table.record(OMEN_ROLL, reading=READING).id
        new = listener.json_on(topics.roll, lambda b: b["phase"] == "new")
        result = listener.json_on(topics.roll, lambda b: b["phase"] == "result")
        bar = listener.json_on(topics.tide, lambda b: b["position"] == 9)
        unread = Roll(tuple(Die(d.kind, d.face) for d in OMEN_ROLL.dice))
        second = publisher.record(unread, reading=READING)  # no die points at a camera die
        again = listener.json_on(topics.roll, lambda b: b["id"] == second.id)
    assert new["id"] == result["id"] == roll_id and new["seq"] == result["seq"] == 1
    assert result["event"] == f"{roll_id}:result" and result["v"] == 1
    assert result["dice"][2] == {
        "kind": "d20",
        "value": 20,
        "confidence": 0.88,
        "box": [0.12, 0.08, 0.17, 0.58],
        "typed": False,
    }
    assert new["dice"] == result["dice"] and new["outcome"] is None
    assert again["dice"][0] == {
        "kind": "d8",
        "value": 5,
        "confidence": None,
        "box": None,
        "typed": True,  # no camera die behind it: typed in
    }
    assert result["outcome"]["summary"].startswith("Zhao: 1 Mark")
    assert result["motions"] == [{"cause": "omen 20 toward B's collapse", "before": 8, "after": 9}]
    assert bar["last_motion"]["after"] == 9 and bar["length"] == 15


def test_a_late_subscriber_gets_the_bar_retained(mosquitto: Mosquitto, tmp_path: Path) -> None:
    settings = mosquitto.settings()
    topics = Topics.of(settings)
    with TablePublisher(Table(tmp_path / "s.db"), settings) as publisher:
        omen_roll(publisher)
        assert publisher.wait_delivered(WAIT)
        with Listener(settings, topics.tide, topics.session, topics.status) as late:
            bar = late.json_on(topics.tide)
            session = late.json_on(topics.session)
            status = late.wait_for(lambda m: m.topic == topics.status)
        # kept by the broker, not sent again by the tower: a node that joins late has them
        firsts = [next(m for m in late.seen if m.topic == t) for t in (topics.tide, topics.session)]
        assert all(m.retain for m in firsts)
    assert bar["position"] == 9 and status.payload == b"online" and status.retain
    assert session["history"][0]["summary"].startswith("Zhao")
    with Listener(settings, topics.status) as after:
        assert after.wait_for(lambda m: m.topic == topics.status).payload == b"offline"


def test_the_declared_roll_and_its_odds_are_retained(mosquitto: Mosquitto, tmp_path: Path) -> None:
    settings = mosquitto.settings()
    topics = Topics.of(settings)
    with (
        Listener(settings, topics.session) as listener,
        TablePublisher(Table(tmp_path / "s.db"), settings) as publisher,
    ):
        publisher.table.declare(ZHAO)
        session = listener.json_on(topics.session, lambda b: b["declared"]["actor"] == "Zhao")
    odds = session["odds"]
    assert odds["dice"] == "2d8" and odds["counts"] == "Marks"
    assert [row["value"] for row in odds["rows"]] == [0, 1, 2]
    assert abs(odds["rows"][0]["chance"] - 0.25) < 1e-9 and odds["mean"] == 1.0
    assert session["sides"]["a"] == {"label": "A", "colour": "#dc143c"}


@pytest.mark.slow
def test_results_made_before_the_broker_is_up_go_out_once_it_is(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path)  # ports chosen, not started yet
    settings = broker.settings()
    topics = Topics.of(settings)
    table = Table(tmp_path / "s.db")
    with TablePublisher(table, settings) as publisher:
        omen_roll(publisher)
        publisher.record(OMEN_ROLL, reading=READING)
        assert len(table.store.pending()) == 3
        broker.start()
        try:
            assert publisher.wait_delivered(WAIT)
            with Listener(settings, topics.tide, topics.session) as late:
                assert late.json_on(topics.tide)["position"] == 9
                assert len(late.json_on(topics.session)["history"]) == 2
        finally:
            broker.stop()
    assert table.store.pending() == []


@pytest.mark.slow
def test_broker_killed_mid_session_every_result_arrives_once_in_order(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    settings = mosquitto.settings()
    topics = Topics.of(settings)
    inbox, results = Inbox(), []
    table = Table(tmp_path / "s.db")
    with (
        Listener(settings, topics.roll, persistent=True, client_id="gm-tablet") as listener,
        TablePublisher(table, settings) as publisher,
    ):
        ids = [omen_roll(publisher)] + [
            publisher.record(OMEN_ROLL, reading=READING).id for _ in range(2)
        ]
        listener.json_on(topics.roll, lambda b: b["id"] == ids[-1])
        mosquitto.wait_saved()  # a broker killed -9 keeps only the sessions it has saved
        mosquitto.kill()
        ids += [publisher.record(OMEN_ROLL, reading=READING).id for _ in range(3)]
        assert len(table.store.pending()) >= 3
        mosquitto.start()
        ids += [publisher.record(OMEN_ROLL, reading=READING).id for _ in range(3)]
        listener.json_on(topics.roll, lambda b: b["id"] == ids[-1])
        for message in listener.drain():
            body = json.loads(message.payload)
            if message.topic == topics.roll and inbox.accept(body["event"]):
                results.append(body["id"])
    assert results == ids and len(set(ids)) == 9
    assert table.store.pending() == []


def test_settings_take_broker_and_table_from_the_command_line() -> None:
    settings = MqttSettings().with_broker("10.0.0.5:1884", "north")
    assert (settings.host, settings.port, settings.table) == ("10.0.0.5", 1884, "north")
    assert Topics.of(settings).tide == "tidetower/north/tide"
