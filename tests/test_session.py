"""The table session: declare, record, undo, switch; bad input changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.table import Table

COLUMN = {"weight_a": 6, "weight_b": 12, "size": "battle", "footing": "severe-a"}


@pytest.fixture
def table(tmp_path: Path) -> Table:
    return Table(tmp_path / "session.db", "tide", COLUMN)


def _pool(*faces: int, kind: DieKind = DieKind.D6) -> Roll:
    return Roll(tuple(Die(kind, f) for f in faces))


def _linked_exchange(table: Table, zhao: Roll, reply: Roll) -> None:
    table.declare(RollContext(actor="Zhao", side="a", mode="tide", params={"tier": "d6"}))
    opening = table.record(zhao)
    table.declare(RollContext(actor="Mongols", side="b", reply_to=opening.id))
    table.record(reply)


def test_marks_are_read_from_the_tray(table: Table) -> None:
    table.declare(RollContext(actor="Zhao", mode="unopposed", pool=4, params={"tier": "d6"}))
    record = table.record(_pool(6, 5, 2, 1))
    assert record.outcome.facts["marks"] == 2
    assert table.state.declared == RollContext()  # a declaration is used once


def test_undo_restores_the_bar_and_rearms_the_declaration(table: Table) -> None:
    _linked_exchange(table, _pool(1, 1), _pool(6, 6, 6, 6, kind=DieKind.D12))
    assert table.bar().position == 5
    taken_back = table.undo()
    assert table.bar().position == 6
    assert table.state.declared == taken_back.context
    assert len(table.state.history) == 1


def test_undo_with_no_history_is_a_clear_error(table: Table) -> None:
    with pytest.raises(RuleError, match="nothing to undo"):
        table.undo()


@pytest.mark.parametrize(
    ("context", "roll", "named"),
    [
        (RollContext(pool=3, params={"tier": "d6"}), _pool(5, 5), "declared as 3 dice"),
        (RollContext(params={"tier": "d8"}), _pool(5, 5), "declared as d8"),
        (RollContext(), Roll((Die(DieKind.D4, 2),)), "d4 is not part of a Tide roll"),
        (RollContext(), Roll((Die(DieKind.D20, 2), Die(DieKind.D20, 3))), "2 d20"),
        (RollContext(), Roll(()), "no tier dice"),
    ],
)
def test_a_bad_reading_changes_nothing(
    table: Table, context: RollContext, roll: Roll, named: str
) -> None:
    table.declare(context)
    before = table.state
    with pytest.raises(RuleError, match=named):
        table.record(roll)
    assert table.state == before
    assert Table(table.store.path).state == before  # and nothing reached the disk


@pytest.mark.parametrize(
    ("context", "named"),
    [
        (RollContext(reply_to="nope"), "unknown roll 'nope'"),
        (RollContext(params={"tide_linked": True}), "needs a side"),
        (RollContext(mode="heroic"), "unknown mode"),
        (RollContext(params={"tier": "d20"}), "not a tier die"),
        (RollContext(params={"marks": -1}), "marks must be at least 0"),
    ],
)
def test_a_bad_declaration_changes_nothing(table: Table, context: RollContext, named: str) -> None:
    before = table.state
    with pytest.raises((RuleError, ValueError), match=named):
        table.declare(context)
    assert table.state == before


def test_a_linked_reply_from_the_same_side_is_refused(table: Table) -> None:
    table.declare(RollContext(actor="Zhao", side="a", mode="tide", params={"marks": 2}))
    opening = table.record(Roll(()))
    table.declare(RollContext(actor="Wei", side="a", reply_to=opening.id, params={"marks": 0}))
    with pytest.raises(RuleError, match="other side"):
        table.record(Roll(()))
    assert table.bar().position == 6


def test_an_omen_on_an_opening_roll_counts_once_for_many_replies(table: Table) -> None:
    table.declare(RollContext(actor="Zhao", side="a", mode="tide", params={"marks": 2}))
    opening = table.record(Roll((Die(DieKind.D20, 20),)))
    for _ in range(2):
        table.declare(
            RollContext(actor="rider", side="b", reply_to=opening.id, params={"marks": 2})
        )
        table.record(Roll(()))
    assert table.bar().position == 7


def test_reset_and_switch_keep_the_history(table: Table) -> None:
    table.declare(RollContext(mode="unopposed", params={"marks": 1}))
    table.record(Roll(()))
    table.reset_tracker({"weight_a": 8, "weight_b": 8, "size": "skirmish"})
    assert (table.bar().high, table.bar().position) == (15, 8)
    assert len(table.state.history) == 1
    with pytest.raises(RuleError, match="unknown rule system"):
        table.switch_system("chess")
    with pytest.raises(RuleError, match="unknown Tide setting"):
        table.reset_tracker({"weight": 3})
    assert table.state.system == "tide"


def test_every_change_leaves_an_event_in_the_outbox_until_delivered(table: Table) -> None:
    seen: list[str] = []
    table.listeners.append(lambda event: seen.append(event.kind))
    table.declare(RollContext(mode="unopposed", params={"marks": 2}))
    record = table.record(Roll(()))
    table.undo()
    assert seen == ["state", "roll", "undo"]
    pending = Table(table.store.path).store.pending()
    assert [e.kind for e in pending][-3:] == ["state", "roll", "undo"]
    assert pending[-2].body["record"]["id"] == record.id
    for event in pending:
        table.store.delivered(event.seq)
    assert table.store.pending() == []


def test_a_failed_write_leaves_the_store_usable(table: Table) -> None:
    import sqlite3

    other = sqlite3.connect(table.store.path, timeout=0)
    other.execute("BEGIN IMMEDIATE")  # someone else holds the write lock
    table.store.wait_for_writers(0)
    with pytest.raises(sqlite3.OperationalError):
        table.declare(RollContext(params={"marks": 1}))
    other.rollback()
    other.close()
    table.declare(
        RollContext(mode="unopposed", params={"marks": 1})
    )  # not hung, and it works again
    assert table.record(Roll(())).outcome.facts["marks"] == 1
