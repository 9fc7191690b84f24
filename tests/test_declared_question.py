"""A throw the rules refuse is one question to the GM, never a dropped throw (issue 36.4)."""

from __future__ import annotations

from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory
from loop_parts import dropped, pwm_pins

from tidetower.engine.rules import RollContext
from tidetower.engine.table import Table
from tidetower.engine.tray import DieRead, Reading, TowerState
from tidetower.firmware.readloop import ReadLoop

factory = pytest.fixture(pwm_pins, name="factory")


def _die(kind: str, value: int, place: int) -> DieRead:
    return DieRead(kind, value, (0.1 * place, 0.1, 0.1 * place + 0.08, 0.2), 0.9)


def _thrown(
    tmp_path: Path, factory: MockFactory, declared: RollContext, dice: tuple[DieRead, ...]
) -> ReadLoop:
    """A Tide table with `declared`, and a throw through the beam that reads as `dice`."""
    table = Table(tmp_path / "s.db")
    table.declare(declared)
    return dropped(table, Reading(dice), factory)


def test_a_die_read_as_another_kind_than_declared_is_asked_about_and_typed(
    tmp_path: Path, factory: MockFactory
) -> None:
    read = (_die("d8", 3, 0), _die("d6", 4, 1), _die("d8", 7, 2), _die("d20", 12, 3))
    loop = _thrown(tmp_path, factory, RollContext(pool=3, params={"tier": "d8"}), read)
    attention = loop.attention
    assert loop.state is TowerState.NEEDS_ATTENTION and attention is not None
    assert attention.kind == "refused" and attention.reading is not None
    assert "declared as d8 but the tray shows d6, d8" in attention.reason
    assert "type #0" in attention.reason and "rethrow" in attention.reason
    (asked,) = attention.reading.unreadable
    assert asked.box == read[1].box and "d6 showing 4" in asked.reason
    assert not loop.table.state.history
    loop.enter_die(0, "d8", 5)
    (record,) = loop.table.state.history
    assert sorted((d.kind.value, d.face) for d in record.roll.dice) == [
        ("d20", 12),
        ("d8", 3),
        ("d8", 5),
        ("d8", 7),
    ]


def test_a_throw_no_kind_can_mend_says_what_to_do_and_waits(
    tmp_path: Path, factory: MockFactory
) -> None:
    read = (_die("d8", 3, 0), _die("d8", 7, 1))
    loop = _thrown(tmp_path, factory, RollContext(pool=3, params={"tier": "d8"}), read)
    attention = loop.attention
    assert loop.state is TowerState.NEEDS_ATTENTION and attention is not None
    assert "declared as 3 dice but the tray shows 2" in attention.reason
    assert "throw again (rethrow)" in attention.reason and "(reread)" in attention.reason
    assert attention.reading is not None and not attention.reading.unreadable
    loop.table.declare(RollContext(pool=2, params={"tier": "d8"}))  # the GM takes it as read
    loop.reread()
    loop.step()
    assert loop.state is TowerState.RESULT and len(loop.table.state.history) == 1


def test_a_tens_die_without_its_units_die_is_asked_about(
    tmp_path: Path, factory: MockFactory
) -> None:
    loop = _thrown(tmp_path, factory, RollContext(), (_die("d10-tens", 30, 0),))
    attention = loop.attention
    assert attention is not None and attention.kind == "refused"
    assert "without a units d10" in attention.reason and "rethrow" in attention.reason
