"""Issue 37 (4): a die the camera could not read keeps one number for the whole throw. With
five unreadable dice, the GM enters #0, then #1: it is the die that was #1 that is entered,
never the one that moved into its place, and #3 is still #3; the `tower` payload and the
terminal's line say the same numbers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockFactory, MockPWMPin
from loop_parts import dropped

from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.table import Table
from tidetower.engine.tray import Reading, TowerState, Unreadable
from tidetower.firmware.readloop import ReadLoop
from tidetower.mqtt.tower import attention_body

KINDS = ("d6", "d12", "d20", "d8", "d4")
FIVE = tuple(
    Unreadable((0.1 * i, 0.1, 0.1 * i + 0.08, 0.2), f"blurred {kind}", kind)
    for i, kind in enumerate(KINDS)
)


@pytest.fixture
def loop(tmp_path: Path) -> Iterator[ReadLoop]:
    """Five dice dropped through the beam, none of which the camera can read."""
    pins = MockFactory(pin_class=MockPWMPin)
    pins.reset()
    loop = dropped(Table(tmp_path / "s.db"), Reading((), FIVE), pins)
    assert loop.state is TowerState.NEEDS_ATTENTION
    yield loop
    pins.reset()
    Device.pin_factory = None


def _waiting(loop: ReadLoop) -> list[tuple[int, str | None]]:
    """The dice still to enter as the `tower` payload lists them: number and kind."""
    body = attention_body(loop.attention)
    assert body is not None
    return [(u["index"], u["kind"]) for u in body["unreadable"]]


def test_each_unreadable_die_keeps_its_number_for_the_whole_throw(loop: ReadLoop) -> None:
    loop.table.switch_system("tide-of-battle")  # its attack adds whatever dice are thrown
    loop.table.declare(RollContext(actor="Ana", side="a"))
    loop.enter_die(0, "d6", 4)
    loop.enter_die(1, "d12", 7)  # the d12 the camera numbered 1, not the d20 after it
    assert _waiting(loop) == [(2, "d20"), (3, "d8"), (4, "d4")]
    assert loop.attention is not None
    assert loop.attention.reason.startswith("3 dice could not be read: #2 blurred d20; #3")
    with pytest.raises(RuleError, match=r"die #1 is entered already: still to enter #2, #3, #4"):
        loop.enter_die(1, "d12", 8)
    loop.drop_die(3)  # #3 is still #3: no die after all
    loop.enter_die(4, "d4", 2)
    assert _waiting(loop) == [(2, "d20")]
    with pytest.raises(RuleError, match=r"unreadable die #7 does not exist: still to enter #2"):
        loop.enter_die(7, "d20", 1)
    loop.enter_die(2, "d20", 13)
    reading = loop.table.state.history[0].reading
    assert reading is not None
    entered = {(d.die, d.value, d.box) for d in reading}
    assert entered == {(KINDS[i], v, FIVE[i].box) for i, v in ((0, 4), (1, 7), (4, 2), (2, 13))}
