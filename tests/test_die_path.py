"""One die from the camera to the store and the wire: confidence and box are never lost."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory
from loop_parts import dropped, pwm_pins
from mqtt_fixtures import Listener, Mosquitto

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.session import new_session
from tidetower.engine.store import SessionStore
from tidetower.engine.table import Table
from tidetower.engine.tray import DieRead, Reading, TowerState, Unreadable
from tidetower.firmware.readloop import ReadLoop
from tidetower.mqtt.ledbar.node import bar_state
from tidetower.mqtt.payloads import BarPayload
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.topics import Topics
from tidetower.mqtt.views import seen_event, session_payload

FIXTURES = Path(__file__).parent / "fixtures"
ANA = RollContext(actor="Ana", side="a", mode="attack")
ZERO = DieRead("d10", 0, (0.1, 0.1, 0.2, 0.2), 0.93)
SEVEN = DieRead("d10", 7, (0.4, 0.1, 0.5, 0.2), 0.88)
TENS = DieRead("d10-tens", 30, (0.1, 0.3, 0.2, 0.4), 0.91)
UNITS = DieRead("d10", 7, (0.25, 0.32, 0.35, 0.45), 0.84)
TWO_D10 = [
    {"kind": "d10", "value": 10, "confidence": 0.93, "box": [0.1, 0.1, 0.2, 0.2], "typed": False},
    {"kind": "d10", "value": 7, "confidence": 0.88, "box": [0.4, 0.1, 0.5, 0.2], "typed": False},
]
# a d100 is as sure as its less sure half, and lies where both its dice lie
D100 = {"kind": "d100", "value": 37, "confidence": 0.84, "box": [0.1, 0.3, 0.35, 0.45]}


factory = pytest.fixture(pwm_pins, name="factory")


def _thrown(table: Table, reading: Reading, factory: MockFactory) -> ReadLoop:
    """Dice dropped through the beam under graded d100 that the camera reads as `reading`."""
    table.switch_system("graded-d100")
    table.declare(ANA)
    return dropped(table, reading, factory)


@pytest.mark.parametrize(
    ("read", "sent"),
    [((ZERO, SEVEN), TWO_D10), ((TENS, UNITS), [{**D100, "typed": False}])],
    ids=["d10-showing-0", "d100-pair"],
)
def test_the_result_on_the_wire_keeps_each_die_s_confidence_and_box(
    mosquitto: Mosquitto,
    tmp_path: Path,
    factory: MockFactory,
    read: tuple[DieRead, ...],
    sent: list[dict[str, object]],
) -> None:
    settings = mosquitto.settings()
    topics = Topics.of(settings)
    with (
        Listener(settings, topics.roll) as listener,
        TablePublisher(Table(tmp_path / "s.db"), settings) as publisher,
    ):
        loop = _thrown(publisher.table, Reading(read), factory)
        assert loop.state is TowerState.RESULT
        result = listener.json_on(topics.roll, lambda b: b["phase"] == "result")
    assert result["dice"] == sent
    # one noun per field: `dice` are the rules' dice in every phase, `reading` the camera's
    new = seen_event(new_session("s", "graded-d100"), read).model_dump(mode="json")
    assert new["dice"] == sent
    camera = [{**die.to_dict(), "typed": False} for die in read]
    for body in camera:
        body["kind"] = body.pop("die")
        body.pop("check", None)
    assert new["reading"] == result["reading"] == camera


def test_the_history_keeps_them_and_marks_a_half_the_gm_typed(
    tmp_path: Path, factory: MockFactory
) -> None:
    blurred = Unreadable((0.25, 0.32, 0.35, 0.45), "blurred")
    loop = _thrown(Table(tmp_path / "s.db"), Reading((TENS,), (blurred,)), factory)
    loop.enter_die(0, "d10", 7)  # the GM types the units die the camera could not read
    loop.table.close()
    with Table(tmp_path / "s.db") as again:  # as the store keeps it
        session = session_payload(again.state)
    assert session.history[-1].dice == ["d100=37"] and session.history[-1].typed == [0]
    assert session.last_roll is not None
    (die,) = session.last_roll.dice
    assert (die.kind, die.value, die.confidence, die.typed) == ("d100", 37, None, True)
    assert die.box == D100["box"]


def test_a_units_d10_s_0_is_10_in_the_history_with_its_confidence(
    tmp_path: Path, factory: MockFactory
) -> None:
    loop = _thrown(Table(tmp_path / "s.db"), Reading((ZERO, SEVEN)), factory)
    session = session_payload(loop.table.state)
    assert session.history[-1].dice == ["d10=10", "d10=7"] and session.history[-1].typed == []
    assert session.last_roll is not None
    assert [d.model_dump() for d in session.last_roll.dice] == TWO_D10


def test_a_store_written_before_dice_pointed_at_their_reading_still_loads(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    # store_schema1.db: written by the tower of 8545765 (see fixtures/README.md)
    path = tmp_path / "old.db"
    shutil.copy(FIXTURES / "store_schema1.db", path)
    with SessionStore(path, read_only=True) as store:
        state = store.load()
    assert state is not None and [str(d) for d in state.undone[-1].roll.dice] == ["d100=100"]
    session = session_payload(state)
    assert [h.dice for h in session.history] == [["d10=10", "d10=7"], ["d100=37"]]
    assert [h.typed for h in session.history] == [[1], []]
    settings = mosquitto.settings()
    topics = Topics.of(settings)
    with (
        Listener(settings, topics.roll) as listener,
        TablePublisher(Table(path), settings) as publisher,  # sends the outbox it left
    ):
        first = listener.json_on(topics.roll, lambda b: b["seq"] == 1)
        second = listener.json_on(topics.roll, lambda b: b["seq"] == 2)
        assert publisher.table.state.history == state.history
    assert [(d["value"], d["confidence"], d["typed"]) for d in first["dice"]] == [
        (10, 0.93, False),
        (7, None, True),
    ]
    assert second["dice"] == [
        {**D100, "confidence": 0.84, "box": [0.1, 0.3, 0.35, 0.4], "typed": False}
    ]


def test_the_led_node_keeps_a_tracker_s_segments() -> None:
    wire = BarPayload(
        system="d6-pool",
        low=0,
        high=6,
        length=6,
        position=2,
        label_a="A",
        label_b="B",
        colour_a="#dc143c",
        colour_b="#008080",
        segments=[("Alarm", 2, 6), ("Escape", 1, 4)],
    )
    assert bar_state(wire).segments == (("Alarm", 2, 6), ("Escape", 1, 4))


def _as_schema_2(context: dict[str, object]) -> dict[str, object]:
    """A declaration as schema 2 stored it: the Tide's fields beside the shared ones, each
    at its default (false, none) when it was not declared."""
    own = context.pop("params")
    assert isinstance(own, dict)
    return {"tide_linked": False, "tier": None, "marks": None, **context, **own, "params": {}}


def test_a_schema_2_store_keeps_each_declaration_s_own_fields(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    opening = RollContext(
        actor="Zhao", side="a", mode="tide", pool=2, params={"tier": "d8", "tide_linked": True}
    )
    with Table(path) as table:
        table.declare(opening)
        table.record(Roll((Die(DieKind.D8, 5), Die(DieKind.D8, 3), Die(DieKind.D20, 20))))
        table.declare(RollContext(actor="Li", side="b", params={"marks": 2}))
    with sqlite3.connect(path) as db:  # rewritten as the tower before schema 3 wrote it
        (session,) = db.execute("SELECT body FROM session").fetchone()
        body = json.loads(session)
        body["declared"] = _as_schema_2(body["declared"])
        db.execute("UPDATE session SET schema = 2, body = ?", (json.dumps(body),))
        for seq, roll in db.execute("SELECT seq, body FROM rolls").fetchall():
            record = json.loads(roll)
            record["context"] = _as_schema_2(record["context"])
            db.execute("UPDATE rolls SET body = ? WHERE seq = ?", (json.dumps(record), seq))
    with SessionStore(path, read_only=True) as store:
        state = store.load()
    assert state is not None
    assert state.history[0].context == opening
    assert state.declared == RollContext(actor="Li", side="b", params={"marks": 2})
