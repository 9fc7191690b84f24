"""What the tower accepts it can store, publish, draw and reload (issue 17): each accepted-
then-fatal command of the issue is refused at the boundary, over a real Mosquitto, with a
reply naming the field (and the id when it has one); the store is unchanged and the tower
answers the next good command."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mqtt_fixtures import WAIT, Listener, Mosquitto

from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.systems import get_system
from tidetower.engine.table import Table
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.topics import Topics

Tower = tuple[TablePublisher, Listener, Topics]


@pytest.fixture
def tower(mosquitto: Mosquitto, tmp_path: Path) -> Iterator[Tower]:
    settings = mosquitto.settings()
    topics = Topics.of(settings)
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings) as publisher,
        Listener(settings, topics.command_result, topics.tide) as listener,
    ):
        assert publisher.client.wait_connected(WAIT)
        listener.json_on(topics.tide)  # the tower has subscribed by the time it published
        yield publisher, listener, topics


def send(tower: Tower, name: str, raw: bytes, request: str | None) -> dict[str, Any]:
    """Publish a raw command body; its reply (matched on the id, or a null id)."""
    _, listener, topics = tower
    assert listener.client.publish(topics.command(name), raw, qos=1)
    return listener.json_on(
        topics.command_result, lambda b: b["id"] == request and b["command"] == name
    )


def refused(tower: Tower, name: str, raw: bytes, request: str | None, field: str | None) -> str:
    """The refusal's message, after checking its field and that nothing changed."""
    publisher = tower[0]
    before = publisher.table.state
    reply = send(tower, name, raw, request)
    assert not reply["ok"] and reply["error"]["field"] == field, reply
    assert "failed" not in reply["error"]["message"]
    assert publisher.table.state == before and publisher.table.store.pending() == []
    assert publisher.table.store.load() == before  # the store too, as it reloads
    alive = send(tower, "setup", b'{"id": "alive", "weight_a": 3}', "alive")
    assert alive["ok"] and publisher.table.bar().position == 3
    message: str = reply["error"]["message"]
    return message


def nested(depth: int, leaf: object = 1) -> object:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def test_a_lone_surrogate_label_is_refused_naming_it(tower: Tower) -> None:
    body = {"id": "p1", "name": "tide", "settings": {"label_a": "\ud800"}}
    message = refused(tower, "system", json.dumps(body).encode(), "p1", "settings.label_a")
    assert "lone surrogate" in message
    # the engine refuses it too, for the CLI, the buttons and the config
    with pytest.raises(RuleError) as error:
        tower[0].table.switch_system("tide", {"label_a": "\ud800"})
    assert error.value.field == "label_a"
    with pytest.raises(RuleError) as error:
        get_system("tide").initial_state({"label_b": "bell\x07"})
    assert error.value.field == "label_b"


def test_deep_or_surrogate_params_are_refused_naming_them(tower: Tower) -> None:
    deep = {"id": "d1", "params": nested(255)}
    message = refused(tower, "declare", json.dumps(deep).encode(), "d1", "params")
    assert "params nests 255 deep; the limit is 8" in message
    bad_text = {"id": "d2", "params": {"x": ["ok", "\ud800"]}}
    message = refused(tower, "declare", json.dumps(bad_text).encode(), "d2", "params.x.1")
    assert "lone surrogate" in message
    # the engine's own bound, for whatever does not come over the wire
    with pytest.raises(RuleError) as error:
        tower[0].table.declare(RollContext(params={"p": nested(8)}))
    assert error.value.field is not None and error.value.field.startswith("p.a.a")
    with pytest.raises(RuleError) as error:
        tower[0].table.declare(RollContext(params={"rating": 10**30}))
    assert error.value.field == "rating"


def test_a_huge_tide_weight_is_refused_by_system_and_by_the_config(tower: Tower) -> None:
    body = {"id": "w1", "name": "tide", "settings": {"weight_a": 1_000_000_000}}
    message = refused(tower, "system", json.dumps(body).encode(), "w1", "settings.weight_a")
    assert "weight_a must be between -1000000 and 1000000" in message
    body = {"id": "w2", "name": "tide", "settings": {"weight_a": 101}}
    message = refused(tower, "system", json.dumps(body).encode(), "w2", "settings.weight_a")
    assert "weight_a must be at most 100" in message
    with pytest.raises(RuleError) as error:  # what the config's [table.settings] goes through
        get_system("tide").initial_state({"weight_b": 101})
    assert error.value.field == "weight_b"


def test_a_retained_command_is_not_run_and_is_cleared(mosquitto: Mosquitto, tmp_path: Path) -> None:
    settings = mosquitto.settings()
    topics = Topics.of(settings)
    roll = topics.command("roll")
    body = b'{"id": "r1", "dice": [{"kind": "d8", "value": 6}, {"kind": "d20", "value": 1}]}'
    with Listener(settings, topics.command_result, topics.tide, roll) as listener:
        assert listener.client.publish(roll, body, 1, True)
        listener.wait_for(lambda m: m.topic == roll and m.payload == body)
        with TablePublisher(Table(tmp_path / "s.db"), settings) as publisher:
            reply = listener.json_on(topics.command_result, lambda b: b["id"] == "r1")
            assert not reply["ok"] and "retained commands are not run" in reply["error"]["message"]
            # the broker forwards the tower's clearing of it: nothing is kept to run again
            listener.wait_for(lambda m: m.topic == roll and m.payload == b"")
            assert publisher.table.state.history == ()
            assert listener.client.publish(roll, body, qos=1)  # sent, not kept: it runs
            assert listener.json_on(topics.command_result, lambda b: b["id"] == "r1" and b["ok"])
            assert len(publisher.table.state.history) == 1


@pytest.mark.parametrize("depth", [600, 1000, 1500])
def test_deep_json_gets_a_clear_refusal(tower: Tower, depth: int) -> None:
    raw = b"[" * depth + b"]" * depth
    message = refused(tower, "declare", raw, None, None)
    assert f"command nests {depth} deep" in message


def test_a_lone_surrogate_id_still_gets_a_reply(tower: Tower) -> None:
    message = refused(tower, "undo", b'{"id": "\\ud800"}', None, "id")
    assert "lone surrogate" in message


@pytest.mark.parametrize(
    ("raw", "field", "words"),
    [
        (b'{"id": "n1", "params": {"x": NaN}}', "params.x", "finite number"),
        (b'{"id": "n2", "params": {"x": ' + b"9" * 5000 + b"}}", None, "the limit is 4096"),
        (b'{"id": "n1", "params": {"x": ' + b"9" * 4000 + b"}}", "params.x", "between"),
        (b'{"id": "n4", "actor": "a\\u0000b"}', "actor", "control character"),
    ],
)
def test_numbers_and_control_characters_are_bounded(
    tower: Tower, raw: bytes, field: str | None, words: str
) -> None:
    request = "n1" if field == "params.x" else ("n4" if field == "actor" else None)
    assert words in refused(tower, "declare", raw, request, field)
