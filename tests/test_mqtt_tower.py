"""The retained `tower` topic: the read loop's state and what it needs from the GM."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mqtt_fixtures import WAIT, Listener, Mosquitto

from tidetower.engine.table import Table
from tidetower.engine.tray import Attention, DieRead, Reading, TowerState, Unreadable
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.topics import Topics
from tidetower.mqtt.tower import attention_body

# Two d6 read, three the camera could not read: what the loop holds in needs-attention.
READING = Reading(
    dice=(
        DieRead("d6", 4, (0.1, 0.1, 0.2, 0.24), 0.97),
        DieRead("d6", 2, (0.5, 0.2, 0.6, 0.34), 0.91),
    ),
    unreadable=(
        Unreadable((0.3, 0.6, 0.4, 0.74), "face blurred"),
        Unreadable((0.7, 0.5, 0.8, 0.64), "dice touching"),
        Unreadable((0.5, 0.5, 0.6, 0.6), "unsure: d20 6 or 9", "d20", (6, 9)),
    ),
)
UNREADABLE = Attention("unreadable", "3 die(s) could not be read", READING)


class Loop:
    """The read loop as the publisher follows it: state, attention, error, listeners."""

    def __init__(self) -> None:
        self.state = TowerState.IDLE
        self.attention: Attention | None = None
        self.error: str | None = None
        self.on_state: list[Callable[[TowerState], None]] = []

    def enter(
        self, state: TowerState, attention: Attention | None = None, error: str | None = None
    ) -> None:
        self.state, self.attention, self.error = state, attention, error
        for listener in self.on_state:
            listener(state)


def test_attention_body_from_the_loops_own_objects() -> None:
    body = attention_body(UNREADABLE)
    assert body is not None and attention_body(None) is None
    assert body["unreadable"] == [
        {
            "index": 0,
            "box": [0.3, 0.6, 0.4, 0.74],
            "reason": "face blurred",
            "kind": None,
            "faces": [],
        },
        {
            "index": 1,
            "box": [0.7, 0.5, 0.8, 0.64],
            "reason": "dice touching",
            "kind": None,
            "faces": [],
        },
        {
            "index": 2,
            "box": [0.5, 0.5, 0.6, 0.6],
            "reason": "unsure: d20 6 or 9",
            "kind": "d20",
            "faces": [6, 9],
        },
    ]
    assert body["dice"][0] == {
        "kind": "d6",
        "value": 4,
        "box": [0.1, 0.1, 0.2, 0.24],
        "confidence": 0.97,
        "typed": False,
    }
    blocked = attention_body(Attention("blocked", "a die is stuck"))
    assert blocked == {
        "kind": "blocked",
        "reason": "a die is stuck",
        "unreadable": [],
        "dice": [],
        "snapshot": None,
    }


def _tower(
    listener: Listener, topic: str, check: Callable[[dict[str, Any]], bool]
) -> dict[str, Any]:
    message = listener.wait_for(
        lambda m: m.topic == topic and m.payload != b"" and check(json.loads(m.payload))
    )
    body: dict[str, Any] = json.loads(message.payload)
    return body


def test_the_tower_state_is_retained_and_sent_again_on_every_connect(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    settings = mosquitto.settings()
    topic = Topics.of(settings).tower
    loop = Loop()
    with TablePublisher(Table(tmp_path / "s.db"), settings) as publisher:
        publisher.follow_loop(loop)
        loop.enter(TowerState.NEEDS_ATTENTION, UNREADABLE)
        with Listener(settings, topic) as late:  # joins after it was published: retained
            body = _tower(late, topic, lambda b: b["state"] == "needs-attention")
        assert body == {
            "v": 1,
            "state": "needs-attention",
            "error": None,
            **{"attention": attention_body(UNREADABLE)},
            "problems": [],
        }
        with Listener(settings, topic) as live:  # publishing is async: wait till it lands
            live.wait_for(lambda m: m.payload != b"")  # the retained needs-attention
            for state in ("rolling", "settling", "reading", "result", "error"):
                publisher.tower_state(state, attention_body(UNREADABLE), "camera unplugged")
            _tower(live, topic, lambda b: b["state"] == "error")
        with Listener(settings, topic) as late:  # the latest value wins
            body = _tower(late, topic, lambda b: True)
        assert body == {
            "v": 1,
            "state": "error",
            "attention": None,
            "error": "camera unplugged",
            "problems": [],
        }
        with Listener(settings, topic) as someone:  # clears it; then the broker restarts
            someone.client.publish(topic, b"", 1, True)
            someone.wait_for(lambda m: m.payload == b"")
        mosquitto.stop()
        mosquitto.start()
        with Listener(settings, topic) as late:  # the tower sent it again on reconnecting
            assert _tower(late, topic, lambda b: True)["state"] == "error"


def test_the_state_set_just_before_stopping_is_published(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    settings = mosquitto.settings()
    topic = Topics.of(settings).tower
    publisher = TablePublisher(Table(tmp_path / "s.db"), settings)
    step, stepped = publisher._step, threading.Event()

    def slow_step() -> None:  # the worker descheduled after a step, as on a busy machine
        step()
        stepped.set()
        time.sleep(0.3)

    publisher._step = slow_step  # type: ignore[method-assign]
    with publisher:
        assert publisher.client.wait_connected(WAIT) and publisher.wait_delivered(WAIT)
        stepped.clear()
        publisher.tower_state("idle")
        assert stepped.wait(WAIT)
        publisher.tower_state("result")  # as `run --rolls N` ends: the loop's last state
    with Listener(settings, topic) as late:
        assert _tower(late, topic, lambda b: True)["state"] == "result"


def test_tower_state_never_waits_for_the_broker(tmp_path: Path) -> None:
    publisher = TablePublisher(Table(tmp_path / "s.db"), Mosquitto(tmp_path).settings())
    for _ in range(200):  # no broker at all: each call returns (it would hang otherwise)
        publisher.tower_state("needs-attention", attention_body(UNREADABLE))
    publisher.tower_state("dancing")  # a bug in the caller is logged, not raised
    latest = publisher.latest_tower
    assert latest is not None and latest.state == "needs-attention"


def test_a_tower_without_a_read_loop_clears_a_stale_tower(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    settings = mosquitto.settings()
    topic = Topics.of(settings).tower
    with Listener(settings, topic) as watcher:
        watcher.client.publish(topic, '{"v": 1, "state": "reading"}', 1, True)
        watcher.wait_for(lambda m: m.payload.startswith(b"{"))  # left from an earlier run
        with TablePublisher(Table(tmp_path / "s.db"), settings):
            watcher.wait_for(lambda m: m.payload == b"")
            with Listener(settings, topic) as late:
                assert late.settled() == []
