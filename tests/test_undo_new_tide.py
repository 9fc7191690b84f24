"""Undo never throws away a Tide set up after the roll it would take back: it is refused,
saying what it would lose, and changes nothing; by hand (`tidetower session`), over MQTT
(`tidetower gm`), and after a restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from mqtt_fixtures import WAIT, Listener, Mosquitto

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.table import Table
from tidetower.firmware.cli import main
from tidetower.mqtt.publisher import TablePublisher

ZHAO = RollContext(actor="Zhao", side="a", pool=3, params={"tide_linked": True, "tier": "d8"})
THROW = Roll((Die(DieKind.D8, 8), Die(DieKind.D8, 7), Die(DieKind.D8, 6), Die(DieKind.D20, 10)))
BATTLE = {"weight_a": 6, "weight_b": 12, "size": "battle", "label_a": "Imperial"}
LOST = r"a new tide was set up after it \(Imperial v Mongol, the bar at 6 of 0\.\.17\)"


def _roll_then_new_tide(table: Table) -> str:
    """A declared roll on an 8..8 Tide, then a new Imperial/Mongol battle Tide; its id."""
    table.reset_tracker({"weight_a": 8, "weight_b": 8})
    table.declare(ZHAO)
    rolled = table.record(THROW).id
    table.reset_tracker({**BATTLE, "label_b": "Mongol"})
    return rolled


def test_undo_across_a_new_tide_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    with Table(tmp_path / "s.db") as table:
        rolled = _roll_then_new_tide(table)
        before = table.state
        with pytest.raises(RuleError, match=f"cannot take back {rolled}: {LOST}"):
            table.undo()
        assert table.state == before and table.bar().label_a == "Imperial"
        with pytest.raises(RuleError, match="nothing to redo"):
            table.redo()
    with Table(tmp_path / "s.db") as again, pytest.raises(RuleError, match=LOST):
        again.undo()  # the set-up is kept in the store


def test_a_roll_on_the_new_tide_is_taken_back_but_not_the_one_before(tmp_path: Path) -> None:
    with Table(tmp_path / "s.db") as table:
        _roll_then_new_tide(table)
        table.declare(ZHAO)
        later = table.record(THROW)
        assert table.undo().id == later.id
        assert (table.bar().label_a, table.bar().position) == ("Imperial", 6)
        with pytest.raises(RuleError, match=LOST):
            table.undo()


def _session(store: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["session", *args, "--store", str(store)])


def test_session_undo_after_a_new_tide_says_why_and_keeps_it(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    assert _session(store, "setup", "weight_a=8", "weight_b=8").exit_code == 0
    declared = ("declare", "--actor", "Zhao", "--side", "a", "--pool", "3", "tide_linked=true")
    assert _session(store, *declared, "tier=d8").exit_code == 0
    rolled = _session(store, "roll", "d8=8,7,6", "d20=10").output.split(":")[0]
    battle = ("setup", "weight_a=6", "weight_b=12", "size=battle", "label_a=Imperial")
    assert _session(store, *battle, "label_b=Mongol").exit_code == 0
    refused = _session(store, "undo")
    assert refused.exit_code == 1
    assert refused.output.startswith(f"Error: cannot take back {rolled}: a new tide was set up")
    shown = json.loads(_session(store, "show", "--json").output)
    assert (shown["bar"]["label_b"], shown["bar"]["high"]) == ("Mongol", 17)
    assert [r["id"] for r in shown["history"]] == [rolled]


def test_gm_undo_after_a_new_tide_is_refused_in_its_reply(
    mosquitto: Mosquitto, tmp_path: Path
) -> None:
    settings = mosquitto.settings()
    where = ["--broker", f"127.0.0.1:{mosquitto.port}", "--table", settings.table]
    where += ["--timeout", str(WAIT)]
    runner = CliRunner()
    with TablePublisher(Table(tmp_path / "s.db"), settings) as publisher:
        table = publisher.table
        table.declare(ZHAO)
        rolled = table.record(THROW).id
        with Listener(settings, publisher.topics.tide) as listener:
            listener.json_on(publisher.topics.tide)  # the tower hears commands by now
        battle = [f"{key}={value}" for key, value in BATTLE.items()]
        tide = runner.invoke(main, ["gm", "setup", *battle, "label_b=Mongol", *where])
        assert tide.exit_code == 0, tide.output
        undo = runner.invoke(main, ["gm", "undo", "--json", *where])
        assert undo.exit_code == 1
        reply = json.loads(undo.output)
        assert reply["ok"] is False and reply["command"] == "undo"
        assert reply["error"]["message"].startswith(f"cannot take back {rolled}: a new tide")
        said = runner.invoke(main, ["gm", "undo", *where])
        assert said.output.startswith("The tower refused undo: cannot take back")
        assert [r.id for r in table.state.history] == [rolled]
        assert table.bar().label_b == "Mongol"


def test_undo_across_a_new_tide_made_by_a_system_switch_is_refused(tmp_path: Path) -> None:
    """Issue 37: roll, `gm system name=d6-pool`, `gm system name=tide` (a fresh bar), undo:
    refused as a set-up is, and the fresh bar stays."""
    with Table(tmp_path / "s.db") as table:
        table.reset_tracker({"weight_a": 8, "weight_b": 8})
        table.declare(ZHAO)
        rolled = table.record(THROW).id
        table.switch_system("d6-pool")
        with pytest.raises(RuleError, match=f"cannot take back {rolled}: .*d6-pool"):
            table.undo()
        table.switch_system("tide")
        fresh = table.state
        with pytest.raises(RuleError, match=f"cannot take back {rolled}: a new tide was set"):
            table.undo()
        assert table.state == fresh and [r.id for r in fresh.history] == [rolled]
    with Table(tmp_path / "s.db") as again, pytest.raises(RuleError, match="a new tide"):
        again.undo()
