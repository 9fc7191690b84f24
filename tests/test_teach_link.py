"""The guided teach flow on a real broker: a display sees each step and confirms the faces."""

from __future__ import annotations

import json
from typing import Any

from mqtt_fixtures import WAIT, Listener, Mosquitto

from tidetower.firmware.teach_cli import Progress, ask_anywhere, collect
from tidetower.mqtt.client import BrokerClient, Message
from tidetower.mqtt.settings import MqttSettings
from tidetower.mqtt.teaching import TeachLink
from tidetower.mqtt.topics import Topics
from tidetower.vision.settle import SettleWatch
from tidetower.vision.sources.simulated import SimulatedSource


class Display:
    """A display page's part: answers each throw awaiting confirmation with what the die
    shows (or "throw again" for a face taught already), after one impossible face."""

    def __init__(self, settings: MqttSettings, source: SimulatedSource) -> None:
        self.topics = Topics.of(settings)
        self.source = source
        self.sent = 0
        self.client = BrokerClient(settings, "display-under-test")
        self.client.subscribe(self.topics.teach, self.seen, 1)

    def seen(self, message: Message) -> None:
        if not message.payload:
            return
        body = json.loads(message.payload)
        if body["step"] != "confirm":
            return
        truth = self.source.dice[0].value
        left = [f for f in body["faces"] if f not in body["taught"]]
        if self.sent == 0:
            self.send({"id": "impossible", "value": 9})  # a d8 has no 9: refused, no change
        self.send({"id": f"answer-{self.sent}", "value": truth if truth in left else None})

    def send(self, body: dict[str, Any]) -> None:
        self.sent += 1
        self.client.publish(self.topics.command("teach"), json.dumps(body), 1)


def test_a_display_confirms_every_face_and_an_impossible_one_changes_nothing(
    mosquitto: Mosquitto,
) -> None:
    settings = mosquitto.settings()
    topics = Topics.of(settings)
    source = SimulatedSource(5)

    def throw() -> None:
        if source.dice:
            source.reach_in()
        source.throw(dice=("d8",))

    display = Display(settings, source)
    with Listener(settings, topics.teach, topics.command_result) as watcher:
        with TeachLink(settings) as link:
            display.client.start()
            assert display.client.wait_connected(WAIT) and display.client.wait_subscribed(WAIT)
            answer = ask_anywhere("d8", link.answers)
            photos = collect(
                source,
                "d8",
                answer,
                SettleWatch(empty_tray=source.empty),
                throw,
                Progress("d8", "blue d8", link),
            )
        refused = watcher.json_on(topics.command_result, lambda b: b["id"] == "impossible")
        watcher.wait_for(lambda m: m.topic == topics.teach and not m.payload)  # emptied at the end
        steps = [
            json.loads(m.payload)["step"]
            for m in watcher.seen
            if m.topic == topics.teach and m.payload
        ]
        replies = [json.loads(m.payload) for m in watcher.seen if m.topic == topics.command_result]
    display.client.stop()
    assert sorted(photos) == list(range(1, 9))
    assert not refused["ok"] and refused["error"]["field"] == "value"
    assert "9 is not a face of the d8" in refused["error"]["message"]
    assert steps == ["throw", "confirm"] * (len(steps) // 2) and len(steps) >= 16
    agains = [r for r in replies if r["ok"] and r["detail"] == {"face": None}]
    assert agains, "this seed throws a face taught already: the display says throw again"


def test_an_answer_with_no_throw_waiting_is_refused(mosquitto: Mosquitto) -> None:
    settings = mosquitto.settings()
    topics = Topics.of(settings)
    with Listener(settings, topics.command_result) as watcher, TeachLink(settings) as link:
        Progress("d20", None, link).show("throw", {1, 2, 3})
        watcher.client.publish(topics.command("teach"), json.dumps({"id": "early", "value": 2}), 1)
        reply = watcher.json_on(topics.command_result, lambda b: b["id"] == "early")
    assert not reply["ok"] and "no throw is waiting" in reply["error"]["message"]
    assert link.answers.empty()


def test_the_first_answer_counts_typed_or_tapped(mosquitto: Mosquitto) -> None:
    settings = mosquitto.settings()
    topics = Topics.of(settings)
    with Listener(settings, topics.command_result) as watcher, TeachLink(settings) as link:
        progress = Progress("d20", None, link)
        progress.show("confirm", {3, 4}, guess=3)
        link.typed("3\n")
        watcher.client.publish(topics.command("teach"), json.dumps({"id": "late", "value": 4}), 1)
        late = watcher.json_on(topics.command_result, lambda b: b["id"] == "late")
        assert link.answers.get(timeout=WAIT) == "3\n" and link.answers.empty()
        progress.show("confirm", {4}, guess=4)  # the next throw: a stale answer would be dropped
        watcher.client.publish(topics.command("teach"), json.dumps({"id": "next", "value": 4}), 1)
        assert watcher.json_on(topics.command_result, lambda b: b["id"] == "next")["ok"]
        assert link.answers.get(timeout=WAIT) == "4"
    assert not late["ok"] and "answered already" in late["error"]["message"]
