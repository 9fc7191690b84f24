"""`tidetower session` by hand: readable lines, and a reply declared without typing an id."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tidetower.firmware import session_cli
from tidetower.firmware.cli import main
from tidetower.mqtt.registry import reply_line
from tidetower.mqtt.wording import declared_line


def _session(store: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["session", *args, "--store", str(store)])


def test_a_reply_names_the_last_opening_roll_and_no_repr_is_printed(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    assert _session(store, "tide", "6", "12").exit_code == 0
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
    assert declared_line({}) == "nothing"
    pool = {"actor": "Zhao", "side": "a", "tide_linked": True, "pool": 3, "tier": "d8"}
    assert declared_line(pool) == "Zhao for side A, Tide-linked, a pool of 3d8"
    assert declared_line({"params": {"rating": 3}, "marks": 2}) == (
        "2 Marks entered by the GM, rating 3"
    )
    done = {"command": "tide", "ok": True, "detail": {"position": 6}}
    assert reply_line(done, {}) == "Set up a new Tide; the marker stands at 6."
    roll = {"command": "roll", "ok": True, "detail": {"roll_id": "s-1", "summary": "Zhao: 1 Mark"}}
    assert reply_line(roll, {}) == "Recorded roll s-1: Zhao: 1 Mark."
    error = {"field": "weight_a", "message": "weight_a: Input should be greater than or equal to 1"}
    refused = reply_line({"command": "tide", "ok": False, "error": error}, {})
    assert refused == (
        "The tower refused tide: weight_a: Input should be greater than or equal to 1."
    )


def test_a_roll_taken_back_is_put_back_by_hand(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    assert _session(store, "tide", "6", "12").exit_code == 0
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
    assert _session(store, "tide", "3", "2").exit_code == 0
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
    assert _session(store, "tide", "3", "2").exit_code == 0
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
    assert _session(store, "tide", "3", "2").exit_code == 0
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
