"""`tidetower gm`: a GM command from the shell reaches the tower and its reply comes back."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from mqtt_fixtures import WAIT, Listener, Mosquitto

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.table import Table
from tidetower.firmware.cli import main
from tidetower.mqtt.gm_cli import parse_fields
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.topics import Topics


def test_fields_keep_their_json_types() -> None:
    assert parse_fields(("index=0", "kind=d6", "value=4", "tide_linked=true")) == {
        "index": 0,
        "kind": "d6",
        "value": 4,
        "tide_linked": True,
    }


def test_gm_sets_up_the_tide_and_hears_refusals(mosquitto: Mosquitto, tmp_path: Path) -> None:
    settings = mosquitto.settings()
    tide = Topics.of(settings).tide
    where = [
        "--broker",
        f"127.0.0.1:{mosquitto.port}",
        "--table",
        settings.table,
        "--timeout",
        str(WAIT),
    ]  # the 5 s default is for a GM at a table, not a busy CI
    runner = CliRunner()
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings) as publisher,
        Listener(settings, tide) as listener,
    ):
        listener.json_on(tide)  # sent after the tower's SUBSCRIBE to commands: it hears them
        ok = runner.invoke(
            main,
            ["gm", "tide", "weight_a=6", "weight_b=12", "size=battle", "footing=severe-a", *where],
        )
        assert ok.exit_code == 0, ok.output
        assert ok.output == "Set up a new Tide; the marker stands at 6.\n"
        assert (publisher.table.bar().high, publisher.table.bar().position) == (17, 6)
        refused = runner.invoke(main, ["gm", "tide", "weight_a=0", "--json", *where])
        assert refused.exit_code == 1
        assert json.loads(refused.output)["error"]["field"] == "weight_a"
        said = runner.invoke(main, ["gm", "tide", "weight_a=0", *where])
        assert said.exit_code == 1 and said.output.startswith("The tower refused tide: weight_a")
        assert publisher.table.bar().position == 6
        assert runner.invoke(main, ["gm", "tide", "weight_a", *where]).exit_code == 2


def test_gm_declares_a_reply_to_the_last_opening_roll(mosquitto: Mosquitto, tmp_path: Path) -> None:
    settings = mosquitto.settings()
    where = ["--broker", f"127.0.0.1:{mosquitto.port}", "--table", settings.table]
    where += ["--timeout", str(WAIT)]
    runner = CliRunner()
    with TablePublisher(Table(tmp_path / "s.db"), settings) as publisher:
        table = publisher.table
        table.declare(RollContext(actor="Zhao", side="a", mode="tide"))
        opening = table.record(Roll((Die(DieKind.D6, 6), Die(DieKind.D6, 5))))
        table.declare(RollContext(actor="Wei", mode="unopposed"))
        table.record(Roll((Die(DieKind.D8, 2),)))  # no opening: passed over
        with Listener(settings, publisher.topics.session) as listener:
            listener.json_on(publisher.topics.session, lambda b: len(b["history"]) == 2)
        reply = runner.invoke(
            main, ["gm", "declare", "actor=Mongols", "side=b", "reply_to=last", *where]
        )
        assert reply.exit_code == 0, reply.output
        assert table.state.declared.reply_to == opening.id
        assert reply.output == (
            f"Declared the next roll: Mongols for side B, replying to roll {opening.id}; "
            "the marker stands at 8.\n"
        )


def test_dice_are_typed_as_for_session_roll() -> None:
    dice = [{"kind": "d6", "value": v} for v in (5, 3, 1)] + [{"kind": "d20", "value": 13}]
    assert parse_fields(("d6=5,3,1", "d20=13")) == {"dice": dice}
    assert parse_fields(("dice=d6=5,3,1 d20=13",)) == {"dice": dice}
    assert parse_fields(('dice=[{"kind": "d6", "value": 5}]',)) == {"dice": dice[:1]}
    with pytest.raises(click.BadParameter, match="not a face number"):
        parse_fields(("d6=5,x",))


def test_gm_roll_with_typed_dice_reaches_the_tower(mosquitto: Mosquitto, tmp_path: Path) -> None:
    settings = mosquitto.settings()
    where = ["--broker", f"127.0.0.1:{mosquitto.port}", "--table", settings.table]
    tide = Topics.of(settings).tide
    with (
        TablePublisher(Table(tmp_path / "s.db"), settings) as publisher,
        Listener(settings, tide) as listener,
    ):
        listener.json_on(tide)  # sent after the tower's SUBSCRIBE to commands: it hears them
        CliRunner().invoke(main, ["gm", "declare", "actor=Kim", "side=a", *where])
        rolled = CliRunner().invoke(
            main, ["gm", "roll", "d6=5,3,1", "d20=13", "--timeout", str(WAIT), *where]
        )
        assert rolled.exit_code == 0, rolled.output
        (record,) = publisher.table.state.history
        assert sorted(d.face for d in record.roll.dice) == [1, 3, 5, 13]
