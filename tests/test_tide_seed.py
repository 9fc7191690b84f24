"""Every worked example of seed 000 (the Tide), as the seed tells it."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext, RollRecord, RuleError
from tidetower.engine.session import SessionState, declare, new_session, record_roll
from tidetower.engine.systems.tide.system import TideScene
from tidetower.engine.systems.tide.track import TideTrack

COLUMN: dict[str, Any] = {"weight_a": 6, "weight_b": 12, "size": "battle", "footing": "severe-a"}


@pytest.mark.parametrize(
    ("weight_a", "weight_b", "length", "start"),
    [(8, 8, 15, 8), (8, 6, 13, 8), (8, 12, 19, 8), (6, 12, 17, 6)],
)
def test_setup_rows(weight_a: int, weight_b: int, length: int, start: int) -> None:
    track = TideTrack(weight_a, weight_b, "battle")
    assert (track.length, track.position) == (length, start)
    assert track.routed is None


def test_landowners_hall_margin_is_two_for_the_traveller() -> None:
    state = new_session("t", "tide")
    state = declare(state, RollContext(actor="traveller", mode="opposed", params={"marks": 3}))
    state, opening = record_roll(state, Roll(()))
    state = declare(state, RollContext(actor="landowner", reply_to=opening.id, params={"marks": 1}))
    state, reply = record_roll(state, Roll(()))
    assert reply.outcome.facts["margin"] == 2
    assert reply.outcome.facts["winner_actor"] == "traveller"
    assert reply.outcome.motions == ()


def test_zhaos_first_order_moves_the_bar_six_to_five() -> None:
    track = TideTrack(**COLUMN)
    motions = track.exchange("b", 4)
    assert [(m.before, m.after) for m in motions] == [(6, 5)]
    assert track.position == 5


def _exchange(
    state: SessionState, zhao: int, reply: int, linked: bool, omen: int | None = None
) -> tuple[SessionState, RollRecord]:
    """Zhao opens with `zhao` Marks (and an Omen), the Mongols reply with `reply` Marks."""
    dice = (Die(DieKind.D20, omen),) if omen else ()
    state = declare(
        state,
        RollContext(
            actor="Zhao", side="a", mode="opposed", params={"tide_linked": linked, "marks": zhao}
        ),
    )
    state, opening = record_roll(state, Roll(dice))
    state = declare(
        state, RollContext(actor="Mongols", side="b", reply_to=opening.id, params={"marks": reply})
    )
    return record_roll(state, Roll(()))


def test_zhaos_first_order_through_the_session() -> None:
    state = new_session("t", "tide", COLUMN)
    state, reply = _exchange(state, 1, 5, linked=True)
    assert [(m.before, m.after) for m in reply.outcome.motions] == [(6, 5)]
    assert state.tracker.track.position == 5


def test_personal_stand_at_the_wash_stays_at_two() -> None:
    state = new_session("t", "tide", COLUMN)
    state = dataclasses.replace(state, tracker=TideScene(TideTrack(**COLUMN, position=2)))
    state, reply = _exchange(state, 1, 5, linked=False)
    assert reply.outcome.motions == ()
    assert state.tracker.track.position == 2


def test_one_throw_two_motions_ends_in_rout() -> None:
    track = TideTrack(**COLUMN, position=2)
    motions = track.exchange("b", 4, omen=1)
    assert [(m.before, m.after) for m in motions] == [(2, 1), (1, 0)]
    assert track.routed == "a"


def test_one_throw_two_motions_through_the_session() -> None:
    state = new_session("t", "tide", COLUMN)
    for _ in range(4):  # four losing linked exchanges walk the bar 6 -> 2
        state, _reply = _exchange(state, 0, 3, linked=True)
    assert state.tracker.track.position == 2
    state, reply = _exchange(state, 1, 5, linked=True, omen=1)
    assert [(m.before, m.after) for m in reply.outcome.motions] == [(2, 1), (1, 0)]
    assert state.bar().routed == "a"


def test_zhao_column_omen_bands() -> None:
    assert TideTrack(**COLUMN).omen_faces() == {"a": [1, 2, 3], "b": [20]}


@pytest.mark.parametrize(
    ("size", "toward_a", "toward_b"),
    [
        ("small-skirmish", [1], [20]),
        ("skirmish", [1, 2], [19, 20]),
        ("battle", [1, 2, 3], [18, 19, 20]),
    ],
)
def test_equal_footing_table(size: str, toward_a: list[int], toward_b: list[int]) -> None:
    assert TideTrack(8, 8, size).omen_faces() == {"a": toward_a, "b": toward_b}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("size", "footing", "bands"),
    [
        ("battle", "slight-a", {"a": [1, 2, 3], "b": [19, 20]}),
        ("battle", "severe-b", {"a": [1], "b": [18, 19, 20]}),
        ("skirmish", "severe-a", {"a": [1, 2], "b": [20]}),  # never below Small skirmish
        ("small-skirmish", "slight-b", {"a": [1], "b": [20]}),  # never fewer than one face
    ],
)
def test_imbalance_procedure(size: str, footing: str, bands: dict[str, list[int]]) -> None:
    assert TideTrack(8, 8, size, footing).omen_faces() == bands  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"weight_a": 0, "weight_b": 8, "size": "battle"}, "weight_a"),
        ({"weight_a": 8, "weight_b": -1, "size": "battle"}, "weight_b"),
        ({"weight_a": 8, "weight_b": 8, "size": "war"}, "size"),
        ({"weight_a": 8, "weight_b": 8, "size": "battle", "footing": "dire"}, "footing"),
    ],
)
def test_bad_setup_names_what_is_wrong(kwargs: dict[str, object], named: str) -> None:
    with pytest.raises(RuleError, match=named):
        TideTrack(**kwargs)  # type: ignore[arg-type]


def test_a_bad_omen_changes_nothing() -> None:
    track = TideTrack(**COLUMN)
    with pytest.raises(RuleError, match="Omen"):
        track.exchange("b", 9, omen=21)
    assert track.position == 6
