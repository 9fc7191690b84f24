"""`tidetower session` by hand: readable lines, and a reply declared without typing an id."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tidetower.engine.describe import plain
from tidetower.engine.systems import get_system
from tidetower.firmware import session_cli
from tidetower.firmware.cli import main
from tidetower.mqtt.registry import reply_line
from tidetower.mqtt.wording import declared_line


def _session(store: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["session", *args, "--store", str(store)])


def test_a_reply_names_the_last_opening_roll_and_no_repr_is_printed(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    assert _session(store, "setup", "weight_a=6", "weight_b=12").exit_code == 0
    none_yet = _session(store, "declare", "--actor", "Mongols", "--side", "b", "--reply")
    assert none_yet.exit_code == 1 and "no roll awaits a reply" in none_yet.output
    opening = _session(store, "declare", "--actor", "Zhao", "--side", "a", "--mode", "tide")
    assert opening.output == "declared: Zhao for side A, mode tide\n", opening.output
    rolled = _session(store, "roll", "d6=6,5,1")
    opening_id = rolled.output.split(":")[0]
    assert _session(store, "declare", "--actor", "Wei", "--mode", "unopposed").exit_code == 0
    assert _session(store, "roll", "d8=2").exit_code == 0  # no opening: passed over
    reply = _session(store, "declare", "--actor", "Mongols", "--side", "b", "--reply-to", "last")
    assert reply.output == f"declared: Mongols for side B, replying to roll {opening_id}\n"
    shown = _session(store, "show")
    assert f"declared: Mongols for side B, replying to roll {opening_id}" in shown.output
    assert "RollContext" not in shown.output + reply.output + opening.output
    both = _session(store, "declare", "--reply", "--reply-to", "x")
    assert both.exit_code == 2 and "not both" in both.output


def test_the_declared_roll_and_replies_read_as_sentences() -> None:
    tide = get_system("tide").describe()
    assert declared_line({}, tide) == "nothing"
    pool = {"actor": "Zhao", "side": "a", "pool": 3, "params": {"tide_linked": True, "tier": "d8"}}
    assert declared_line(pool, tide) == "Zhao for side A, pool 3, Tide-linked, Tier d8"
    assert declared_line({"params": {"rating": 3}}, plain("x")) == "rating 3"
    done = {"command": "setup", "ok": True, "detail": {"position": 6, "tracker": "the Tide"}}
    assert reply_line(done, {}) == "Set up the Tide afresh; the marker stands at 6."
    roll = {"command": "roll", "ok": True, "detail": {"roll_id": "s-1", "summary": "Zhao: 1 Mark"}}
    assert reply_line(roll, {}) == "Recorded roll s-1: Zhao: 1 Mark."
    error = {"field": "weight_a", "message": "weight_a: Input should be greater than or equal to 1"}
    refused = reply_line({"command": "setup", "ok": False, "error": error}, {})
    assert refused == (
        "The tower refused setup: weight_a: Input should be greater than or equal to 1."
    )


def test_setup_takes_the_systems_settings_by_name_and_lists_them(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    done = _session(store, "setup", "weight_a=6", "weight_b=12", "size=battle", "label_a=Imperial")
    assert done.exit_code == 0, done.output
    assert "Imperial collapse" in done.output and "collapse" in done.output
    shown = json.loads(_session(store, "show", "--json").output)["bar"]
    assert (shown["high"], shown["label_a"]) == (17, "Imperial")
    unknown = _session(store, "setup", "weight=6")
    assert unknown.exit_code == 2 and "known are weight_a, weight_b, size" in unknown.output
    bad = _session(store, "setup", "weight_a=many")
    assert bad.exit_code == 2 and "weight_a must be a whole number" in bad.output
    assert _session(store, "setup", "weight_a=0").exit_code == 1  # the system's bounds
    helped = _session(store, "setup", "--help").output
    assert "footing" in helped and "Weight A: whole" in helped
    assert _session(store, "setup", "weight_a").exit_code == 2  # NAME=VALUE or nothing


def test_declare_takes_the_tides_own_fields_by_name(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    assert _session(store, "setup").exit_code == 0  # every setting at its default
    args = ("declare", "--actor", "Zhao", "--side", "a", "--pool", "3")
    declared = _session(store, *args, "tier=d8", "tide_linked=true")
    assert declared.output == "declared: Zhao for side A, pool 3, Tier d8, Tide-linked\n"
    state = json.loads(_session(store, "show", "--json").output)["declared"]
    assert state["params"] == {"tier": "d8", "tide_linked": True}
    assert "--tier" not in _session(store, "declare", "--help").output
    assert "tide_linked" in _session(store, "declare", "--help").output
    unknown = _session(store, "declare", "rating=3")
    assert unknown.exit_code == 2 and "known are" in unknown.output and "tier" in unknown.output
    flag = _session(store, "declare", "--side", "a", "tide_linked=maybe")
    assert flag.exit_code == 2 and "true or false" in flag.output
    assert _session(store, "declare", "tier=d7").exit_code == 1  # the system refuses it


def test_setup_and_declare_for_a_d6_pool_table(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    assert _session(store, "system", "d6-pool").exit_code == 0
    assert _session(store, "setup").exit_code == 0
    clock = _session(store, "declare", "--mode", "new-clock", "clock=Alarm", "size=4")
    assert clock.exit_code == 0, clock.output
    assert "new-clock" in clock.output and "Alarm" in clock.output
    shown = json.loads(_session(store, "show", "--json").output)
    assert shown["system"] == "d6-pool"
    assert shown["declared"]["params"] == {"clock": "Alarm", "size": 4}
    action = _session(store, "declare", "--actor", "Kira", "--mode", "action", "--pool", "2")
    assert action.output == "declared: Kira, mode action, pool 2\n"
    refused = _session(store, "declare", "--mode", "action", "bogus=2")
    assert refused.exit_code == 2 and "bogus" in refused.output  # the description refuses it
    rolled = _session(store, "roll", "d6=6,1")
    assert rolled.exit_code == 0 and "Kira" in rolled.output


def test_a_roll_taken_back_is_put_back_by_hand(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    assert _session(store, "setup", "weight_a=6", "weight_b=12").exit_code == 0
    assert _session(store, "declare", "--actor", "Wei", "--mode", "unopposed").exit_code == 0
    assert _session(store, "redo").output.startswith("Error: nothing to redo")
    first = _session(store, "roll", "d8=8,7,1").output.split(":")[0]
    assert _session(store, "undo").output.startswith(f"took back {first}:")
    again = _session(store, "redo")
    assert again.exit_code == 0 and again.output.startswith("put back ")
    assert "2 Marks" in again.output
    assert _session(store, "redo").exit_code == 1  # one roll taken back, one put back


HOLDER = """
import sys
from tidetower.engine.table import Table
with Table(sys.argv[1]):
    print("holding", flush=True)
    sys.stdin.readline()
"""


def _holder(store: Path) -> subprocess.Popen[str]:
    """Another process (a tower) that holds the store until told to let go."""
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(store)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline() == "holding\n"
    return holder


def _let_go(holder: subprocess.Popen[str]) -> None:
    assert holder.stdin is not None
    holder.stdin.write("\n")
    holder.stdin.close()
    assert holder.wait() == 0


def test_session_show_reads_a_store_the_tower_holds(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    assert _session(store, "setup", "weight_a=3", "weight_b=2").exit_code == 0
    assert _session(store, "roll", "d6=4").exit_code == 0
    holder = _holder(store)
    try:
        shown = _session(store, "show", "--json")
        assert shown.exit_code == 0, shown.output
        assert len(json.loads(shown.output)["history"]) == 1
    finally:
        _let_go(holder)
    assert _session(store, "roll", "d6=5").exit_code == 0  # show claimed nothing


def test_a_session_command_waits_for_the_writer_to_let_go(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    assert _session(store, "setup", "weight_a=3", "weight_b=2").exit_code == 0
    holder = _holder(store)
    results: list[Result] = []
    command = threading.Thread(target=lambda: results.append(_session(store, "roll", "d6=4")))
    command.start()
    _let_go(holder)  # within the command's wait: it goes ahead instead of failing at once
    command.join()
    assert results[0].exit_code == 0, results[0].output
    assert len(json.loads(_session(store, "show", "--json").output)["history"]) == 1


def test_a_writer_that_never_lets_go_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "s.db"
    assert _session(store, "setup", "weight_a=3", "weight_b=2").exit_code == 0
    monkeypatch.setattr(session_cli, "WAIT_FOR_WRITER_S", 0.2)
    holder = _holder(store)
    try:
        refused = _session(store, "roll", "d6=4")
    finally:
        _let_go(holder)
    assert refused.exit_code == 1
    assert f"Error: session store {store} is in use by tidetower pid {holder.pid}" in (
        refused.output
    )
