"""Redo, and the GM's actions in the session's log: an undone roll put back as it was while
nothing else changed, refused clearly otherwise; undo, redo and a new Tide logged with when
they happened; all of it kept across a restart, and on the retained `session`."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path

import pytest

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.session import ACTIONS_KEPT
from tidetower.engine.table import Table
from tidetower.engine.tray import DieRead, Reading, roll_of
from tidetower.mqtt.views import session_payload

ZHAO = RollContext(
    actor="Zhao", side="a", mode="unopposed", pool=2, params={"tide_linked": True, "tier": "d8"}
)
READING = (
    DieRead("d8", 6, (0.1, 0.1, 0.2, 0.2), 0.97),
    DieRead("d8", 2, (0.3, 0.1, 0.4, 0.2), 0.91),
    DieRead("d20", 20, (0.5, 0.1, 0.6, 0.2), 1.0, typed=True),  # typed
)
THROW = roll_of(Reading(READING))


@pytest.fixture
def table(tmp_path: Path) -> Table:
    ticks = itertools.count(1000)
    return Table(tmp_path / "session.db", clock=lambda: float(next(ticks)))


def _throw(table: Table) -> None:
    table.declare(ZHAO)
    table.record(THROW, reading=READING, snapshot=f"{table.state.next_id}.jpg")


def test_redo_puts_back_the_roll_undone_as_it_was_under_a_new_id(table: Table) -> None:
    _throw(table)
    first = table.state.history[-1]
    after = table.bar().position
    taken_back = table.undo()
    assert taken_back == first and table.bar().position == after - 1  # the Omen moved it
    redone = table.redo()
    assert (redone.id, redone.seq) == (f"{table.state.session_id}-2", 2)  # ids are never reused
    assert (redone.roll, redone.context, redone.outcome) == (
        first.roll,
        first.context,
        first.outcome,
    )
    assert (redone.snapshot, redone.reading, redone.at) == (first.snapshot, first.reading, first.at)
    assert table.bar().position == after and table.state.history == (redone,)
    assert table.state.declared == RollContext()  # the declaration was used, as by the throw
    with pytest.raises(RuleError, match="nothing to redo") as refused:
        table.redo()
    assert refused.value.field is None


def test_undone_rolls_are_put_back_in_turn(table: Table) -> None:
    _throw(table)
    _throw(table)
    summaries = [r.outcome.summary for r in table.state.history]
    table.undo()
    table.undo()
    assert table.state.history == ()
    table.redo()
    table.redo()
    assert [r.outcome.summary for r in table.state.history] == summaries
    assert [r.seq for r in table.state.history] == [3, 4]


@pytest.mark.parametrize(
    "change",
    [
        lambda t: t.declare(ZHAO),
        lambda t: t.record(Roll((Die(DieKind.D8, 1), Die(DieKind.D8, 1)))),
        lambda t: t.reset_tracker({}),
        lambda t: t.switch_system("d6-pool"),
    ],
    ids=["declare", "roll", "new-tide", "switch"],
)
def test_redo_is_refused_once_anything_else_changed(
    table: Table, change: Callable[[Table], None]
) -> None:
    _throw(table)
    table.undo()
    change(table)
    before = table.state
    with pytest.raises(RuleError, match="nothing to redo: redo puts back a roll just undone"):
        table.redo()
    assert table.state == before  # refused, nothing changed


def test_the_gms_actions_are_logged_with_when_and_after_which_roll(table: Table) -> None:
    seen: list[tuple[str, object]] = []
    table.listeners.append(lambda e: seen.append((e.kind, e.body.get("action"))))  # type: ignore[union-attr]
    _throw(table)
    table.undo()
    table.redo()
    table.reset_tracker({"weight_a": 5, "weight_b": 7})
    table.switch_system("d6-pool")
    actions = table.state.actions
    assert [a.kind for a in actions] == ["undo", "redo", "reset", "system"]
    assert [a.after_seq for a in actions] == [1, 2, 2, 2]  # a redo comes after its roll
    assert [a.roll_id for a in actions[:2]] == [f"{table.state.session_id}-{n}" for n in (1, 2)]
    assert actions[0].text.startswith(f"undid {actions[0].roll_id}: Zhao: 1 Mark")
    assert actions[1].text.startswith(f"redid {actions[0].roll_id} as {actions[1].roll_id}")
    assert actions[2].text == "set up tide afresh: the bar at 5 of 0..11"
    assert actions[3].text == "switched from tide to d6-pool"
    times = [a.at for a in actions]
    assert all(t is not None for t in times) and times == sorted(times)
    logged = [body for kind, body in seen if body is not None]  # the terminal prints these
    assert [kind for kind, body in seen if body is not None] == ["undo", "redo", "state", "state"]
    assert [b["kind"] for b in logged] == ["undo", "redo", "reset", "system"]  # type: ignore[index]


def test_the_log_keeps_the_latest_actions(table: Table) -> None:
    for _ in range(ACTIONS_KEPT + 3):
        table.reset_tracker({})
    assert len(table.state.actions) == ACTIONS_KEPT


def test_actions_and_the_roll_to_redo_survive_a_restart(table: Table) -> None:
    _throw(table)
    table.undo()
    path = table.store.path
    table.close()
    with Table(path) as again:
        assert [a.kind for a in again.state.actions] == ["undo"]
        assert again.redo().reading == tuple(READING)
        assert [a.kind for a in again.state.actions] == ["undo", "redo"]


def test_the_retained_session_lists_who_threw_when_the_photo_the_typed_dice_and_the_gm(
    table: Table,
) -> None:
    _throw(table)
    table.record(Roll((Die(DieKind.D8, 3),), roller="Li"))  # a throw typed in by hand
    table.undo()
    session = session_payload(table.state)
    (item,) = session.history
    assert (item.roller, item.at, item.snapshot) == ("Zhao", 1000.0, f"{item.id}.jpg")
    assert item.dice == ["d8=6", "d8=2", "d20=20"] and item.typed == [2]  # the GM typed the d20
    assert session.redo is not None and (session.redo.roller, session.redo.typed) == ("Li", [0])
    assert [(a.kind, a.after_seq) for a in session.actions] == [("undo", 2)]
    last = session.last_roll
    assert last is not None and last.snapshot == item.snapshot and last.at == 1000.0
    assert [d.typed for d in last.dice] == [False, False, True]
    assert last.dice[2].confidence is None and last.dice[2].box == [0.5, 0.1, 0.6, 0.2]
    assert last.outcome is not None and last.outcome.facts["scored"] == [0]
