"""`tidetower session` by hand: readable lines, and a reply declared without typing an id."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from tidetower.firmware.cli import main
from tidetower.mqtt.wording import declared_line, reply_line


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
