"""GM commands over a real Mosquitto: good ones change the table, bad ones change nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mqtt_fixtures import WAIT, Listener, Mosquitto

from tidetower.engine.table import Table
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.registry import reply_line
from tidetower.mqtt.topics import Topics


class ReadLoop:
    """The read loop's side of the commands, as `tidetower run` gives it."""

    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def reread(self) -> None:
        self.calls.append(("reread",))

    def enter_die(self, index: int, die: str, value: int) -> None:
        if index > 2:
            raise ValueError(f"the pending reading has 3 dice; index {index} is not one")
        self.calls.append(("die", index, die, value))

    def drop_die(self, index: int) -> None:
        if index > 2:
            raise ValueError(f"the pending reading has 3 dice; index {index} is not one")
        self.calls.append(("not a die", index))

    def rethrow(self) -> None:
        if not self.calls:
            raise ValueError("nothing to throw again: no reading is waiting for the GM")
        self.calls.append(("rethrow",))


class Gm:
    """A GM's client: sends a command and waits for its reply on cmd/result."""

    def __init__(self, listener: Listener, topics: Topics) -> None:
        self.listener, self.topics = listener, topics

    def send(self, name: str, body: dict[str, Any] | bytes, request: str) -> dict[str, Any]:
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        assert self.listener.client.publish(self.topics.command(name), raw, qos=1)
        return self.listener.json_on(
            self.topics.command_result, lambda b: b["id"] == request and b["command"] == name
        )


@pytest.fixture
def tower(mosquitto: Mosquitto, tmp_path: Path) -> Iterator[tuple[TablePublisher, Gm, Listener]]:
    settings = mosquitto.settings()
    topics = Topics.of(settings)
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings, ReadLoop()) as publisher,
        Listener(settings, topics.command_result, topics.tide) as listener,
    ):
        assert publisher.client.wait_connected(WAIT)
        listener.json_on(topics.tide)  # the tower has subscribed by the time it published
        yield publisher, Gm(listener, topics), listener


def test_a_die_said_to_be_none_is_dropped_and_a_muddled_one_refused(
    tower: tuple[TablePublisher, Gm, Listener],
) -> None:
    publisher, gm, _ = tower
    body = {"id": "n1", "index": 1, "not_a_die": True}
    dropped = gm.send("die", body, "n1")
    assert dropped["ok"] and reply_line(dropped, body) == (
        "Left die 1 out as no die; the marker stands at 8."
    )
    muddled = gm.send("die", {"id": "n2", "index": 0, "not_a_die": True, "kind": "d6"}, "n2")
    assert muddled["error"] == {
        "field": "kind",
        "message": "kind: Value error, not_a_die takes no kind: leave it out",
    }
    bare = gm.send("die", {"id": "n3", "index": 0}, "n3")
    assert bare["error"]["field"] == "kind" and "or not_a_die: true" in bare["error"]["message"]
    beyond = gm.send("die", {"id": "n4", "index": 5, "not_a_die": True}, "n4")
    assert (
        beyond["error"]["field"] == "index" and "index 5 is not one" in beyond["error"]["message"]
    )
    assert publisher.desk.controls.calls == [("not a die", 1)]  # type: ignore[union-attr]


def test_declare_set_up_roll_and_undo(tower: tuple[TablePublisher, Gm, Listener]) -> None:
    publisher, gm, listener = tower
    reply = gm.send("setup", {"id": "t1", "weight_a": 5, "weight_b": 7, "label_a": "Zhao"}, "t1")
    assert reply["ok"] and reply["detail"] == {"position": 5, "tracker": "the Tide"}
    bar = listener.json_on(gm.topics.tide, lambda b: b["length"] == 11)
    assert bar["label_a"] == "Zhao" and bar["position"] == 5
    declare = {
        "id": "d1",
        "actor": "Zhao",
        "side": "a",
        "tide_linked": True,
        "mode": "unopposed",
        "pool": 1,
        "tier": "d8",
    }
    assert gm.send("declare", declare, "d1")["ok"]
    rolled = gm.send(
        "roll",
        {"id": "r1", "dice": [{"kind": "d8", "value": 6}, {"kind": "d20", "value": 1}]},
        "r1",
    )
    assert rolled["ok"] and publisher.table.bar().position == 4
    undone = gm.send("undo", {"id": "u1"}, "u1")
    assert undone["detail"]["roll_id"] == rolled["detail"]["roll_id"]
    assert publisher.table.bar().position == 5
    redone = gm.send("redo", {"id": "u2"}, "u2")  # put back as it was, under a new id
    assert redone["ok"] and redone["detail"]["summary"] == rolled["detail"]["summary"]
    assert redone["detail"]["roll_id"] != rolled["detail"]["roll_id"]
    assert publisher.table.bar().position == 4
    stale = gm.send("undo", {"id": "u3", "roll_id": rolled["detail"]["roll_id"]}, "u3")
    assert stale["error"] == {
        "field": "roll_id",
        "message": f"the last roll is now {redone['detail']['roll_id']}, not "
        f"{rolled['detail']['roll_id']}: nothing was taken back",
    }
    assert gm.send("undo", {"id": "u4", "roll_id": redone["detail"]["roll_id"]}, "u4")["ok"]
    assert publisher.table.bar().position == 5
    assert gm.send("die", {"id": "f1", "index": 1, "kind": "d8", "value": 7}, "f1")["ok"]
    assert gm.send("reread", {"id": "x1"}, "x1")["ok"]
    assert gm.send("rethrow", {"id": "x2", "v": 1}, "x2")["ok"]
    assert publisher.desk.controls.calls == [  # type: ignore[union-attr]
        ("die", 1, "d8", 7),
        ("reread",),
        ("rethrow",),
    ]


BAD = [
    ("setup", b'{"id": "b1", "weight_a": ', None, "not JSON"),
    ("declare", b"\xff\xfe\x00garbage", None, "not JSON"),
    ("declare", b'["id", "b0"]', None, "must be a JSON object"),
    ("fireball", {"id": "b2"}, "command", "unknown command 'fireball'"),
    ("setup", {"id": "b3", "label_a": "x" * 5000}, None, "the limit is 4096"),
    ("setup", {"id": "b4", "weight_a": 0}, "weight_a", "weight_a must be at least 1"),
    ("setup", {"id": "b5", "colour": "red"}, "colour", "unknown Tide setting"),
    ("declare", {"id": "b6", "side": "c"}, "side", "'a' or 'b'"),
    ("declare", {"id": "b7", "tide_linked": True}, "side", "needs a side"),
    ("system", {"id": "b8", "name": "chess"}, "name", "unknown rule system"),
    ("roll", {"id": "b9", "dice": [{"kind": "d6", "value": 7}]}, "dice.0.value", "1..6"),
    ("die", {"id": "b10", "index": 3, "kind": "d8", "value": 2}, "index", "index 3"),
    ("undo", {"id": "b11"}, None, "nothing to undo"),
    ("undo", {"id": "b28", "roll_id": "t-9"}, "roll_id", "no roll is left, not t-9"),
    ("redo", {"id": "b29"}, None, "nothing to redo"),
    ("redo", {"id": "b30", "roll_id": "t-9"}, "roll_id", "Extra inputs"),
    ("undo", {"id": ""}, "id", "at least 1 character"),
    ("rethrow", {"id": "b12", "index": 0}, "index", "Extra inputs"),
    ("rethrow", {"id": "b13", "v": "one"}, "v", "Input should be 1"),
    ("setup", {"id": "b13v", "v": 2, "weight_a": 3}, "v", "Input should be 1"),
    ("rethrow", {"v": 1}, "id", "id: Field required"),
    ("rethrow", {"id": "b15"}, None, "nothing to throw again"),
    ("teach", {"id": "b16", "value": 3}, "command", "no die is being taught"),
    ("teach", {"id": "b17"}, "value", "value: Field required"),
    ("teach", {"id": "b18", "value": True}, "value", "valid integer"),
    ("learn", {"id": "b19"}, "command", "keeps no corrections to learn from"),
    ("learn", {"id": "b20", "now": True}, "now", "Extra inputs"),
    # the engine's refusals, named where the GM typed the field (RuleError.field)
    ("setup", {"id": "b21", "marks_threshold": 9}, "marks_threshold", "marks threshold must"),
    (
        "system",
        {"id": "b22", "name": "tide", "settings": {"size": "duel"}},
        "settings.size",
        "duel",
    ),
    (
        "system",
        {"id": "b23", "name": "tide-of-battle", "settings": {"home": "z"}},
        "settings.home",
        "'z'",
    ),
    ("declare", {"id": "b24", "mode": "heroic"}, "mode", "unknown mode 'heroic'"),
    ("declare", {"id": "b25", "tier": "d20"}, "tier", "not a tier die"),
    ("declare", {"id": "b26", "reply_to": "nope"}, "reply_to", "unknown roll 'nope'"),
    (
        "roll",
        {"id": "b27", "dice": [{"kind": "d4", "value": 2}]},
        "dice",
        "not part of a Tide roll",
    ),
]


@pytest.mark.parametrize(
    ("name", "body", "field", "words"),
    BAD,
    ids=[
        b[1].get("id", f"no-id{i}") if isinstance(b[1], dict) else f"raw{i}"
        for i, b in enumerate(BAD)
    ],
)
def test_bad_commands_change_nothing_and_say_why(
    tower: tuple[TablePublisher, Gm, Listener],
    name: str,
    body: dict[str, Any] | bytes,
    field: str | None,
    words: str,
) -> None:
    publisher, gm, _ = tower
    before = publisher.table.state
    # an oversized body is refused unread, so its reply cannot carry the request's id
    request = body.get("id") if isinstance(body, dict) and len(str(body)) < 4096 else None
    reply = gm.send(name, body, request) if request else _reply_without_id(gm, name, body)
    assert not reply["ok"] and reply["error"]["field"] == field
    assert words in reply["error"]["message"]
    assert publisher.table.state == before and publisher.table.store.pending() == []
    assert gm.send("declare", {"id": "alive", "actor": "still"}, "alive")["ok"]


def test_a_refused_param_is_named_under_params(
    tower: tuple[TablePublisher, Gm, Listener],
) -> None:
    publisher, gm, _ = tower
    assert gm.send("system", {"id": "s1", "name": "d6-pool"}, "s1")["ok"]
    before = publisher.table.state
    for body, field, words in [
        ({"params": {"rating": 13}}, "params.rating", "rating must be at most 12"),
        ({"params": {"rating": 2, "threshold": 5}}, "params.threshold", "unknown threshold"),
        ({"params": {"rating": 2, "push": "die"}}, "actor", "needs the actor's name"),
        ({"params": {"rating": 2, "bid": 3}}, "params.bid", "unknown action param(s) bid"),
    ]:
        request = f"p-{field}"
        reply = gm.send("declare", {"id": request, **body}, request)
        assert not reply["ok"] and reply["error"]["field"] == field
        assert words in reply["error"]["message"]
    assert publisher.table.state == before


def _reply_without_id(gm: Gm, name: str, body: dict[str, Any] | bytes) -> dict[str, Any]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    assert gm.listener.client.publish(gm.topics.command(name), raw, qos=1)
    return gm.listener.json_on(gm.topics.command_result, lambda b: b["id"] is None)


class BrokenCamera(ReadLoop):
    """A read loop whose camera fails in a way no schema foresaw."""

    def reread(self) -> None:
        raise RuntimeError("camera unplugged")


def test_a_failure_inside_the_tower_is_reported_and_the_tower_keeps_going(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    settings = mosquitto.settings()
    topics = Topics.of(settings)
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings, BrokenCamera()) as publisher,
        Listener(settings, topics.command_result, topics.tide) as listener,
    ):
        assert publisher.client.wait_connected(WAIT)
        listener.json_on(topics.tide)
        gm = Gm(listener, topics)
        listener.client.publish(topics.command("reread"), '{"id": "r"}', qos=1)
        reply = listener.json_on(topics.command_result, lambda b: b["command"] == "reread")
        assert not reply["ok"] and "camera unplugged" in reply["error"]["message"]
        assert gm.send("undo", {"id": "u"}, "u")["error"]["message"].startswith("nothing")
