"""Seed 001 (Tide of Battle): the goblin count and recount, shifting through Neutral."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext, RuleError, Side
from tidetower.engine.session import declare, new_session, record_roll, switch_system, undo
from tidetower.engine.systems import get_system
from tidetower.engine.systems.tide_of_battle.tide import (
    BattleTide,
    Roster,
    demoralise,
    numbers_shift,
    recount,
    restore,
    shift,
    start,
    walk,
)

SYSTEM = get_system("tide-of-battle")
PCS = Roster(plain=4)
GOBLINS = Roster(plain=11, complex=1)  # 11 Squatters and a Flayer counting as 2


def gm(
    tide: BattleTide, mode: str, side: Side | None = None, actor: str = "", **params: Any
) -> tuple[BattleTide, dict[str, Any]]:
    ctx = RollContext(actor=actor, side=side, mode=mode, params=params)
    tide, out = SYSTEM.resolve(tide, ctx, Roll(()), {})
    return tide, {**out.facts, "motions": out.motions}


def test_goblins_13_against_4_pcs_is_3_to_1_two_steps_for_the_goblins() -> None:
    assert GOBLINS.count(PCS) == 13
    assert numbers_shift(PCS, GOBLINS) == (1, 2)
    tide = start({"sides": ["PCs", "Goblins"], "numbers": [4, {"plain": 11, "complex": 1}]})
    assert tide.describe() == "Goblins +2" and tide.bonus(1) == 2 and tide.bonus(0) == 0


def test_recount_to_6_against_4_shifts_two_points_to_the_pcs() -> None:
    tide = start({"sides": ["PCs", "Goblins"], "numbers": [4, {"plain": 11, "complex": 1}]})
    tide, facts = gm(tide, "recount", numbers=[4, {"plain": 4, "complex": 1}])
    assert tide.describe() == "Neutral"
    (motion,) = facts["motions"]
    assert (motion.before, motion.after) == (2, 0) and "toward PCs" in motion.cause


def test_recount_shifts_only_by_the_change_in_ratio() -> None:
    tide = shift(BattleTide(("PCs", "Goblins")), 0, 3, "power")  # PCs +3 from elsewhere
    tide = recount(tide, PCS, GOBLINS)  # goblins gain 2: PCs +1
    assert tide.describe() == "PCs +1"
    assert recount(tide, PCS, GOBLINS) == tide  # same ratio: no shift


def test_shifting_three_steps_passes_through_neutral_as_the_seed_walks_it() -> None:
    tide = start({"sides": ["PCs", "Monsters"], "morale": [0, 2]})
    assert walk(tide, 0, 3) == ["Monsters +2", "Monsters +1", "Neutral", "PCs +1"]
    tide, facts = gm(tide, "shift", side="a", steps=3, cause="Swing the Tide")
    assert facts["path"][-1] == "PCs +1" and tide.signed == -1


def test_start_from_the_highest_morale_home_ground_and_surprise() -> None:
    assert start({"sides": ["PCs", "M"], "morale": [2, 0]}).describe() == "PCs +2"
    assert start({"morale": [1, 1]}).describe() == "Neutral"
    home = start({"morale": [1, 1], "home": "b"})
    assert home.describe() == "B +1"
    both = start({"morale": [0, 0], "home": "b", "surprised": ["b"]})
    assert both.describe() == "Neutral"  # home +1 to B, surprise +1 to A
    assert start({"surprised": ["a", "b"]}).describe() == "Neutral"


def test_surrounded_is_plus_four_at_five_to_one_or_more() -> None:
    assert numbers_shift(Roster(plain=5), Roster(plain=1)) == (0, 4)
    assert numbers_shift(Roster(plain=40), Roster(plain=2)) == (0, 4)
    assert numbers_shift(Roster(plain=3), Roster(plain=0)) == (0, 4)
    assert numbers_shift(Roster(plain=7), Roster(plain=4)) == (None, 0)


def test_a_legendary_monster_counts_as_the_opponents_it_faces() -> None:
    dragon = Roster(legendary=1)
    assert dragon.count(PCS) == 4 and numbers_shift(PCS, dragon) == (None, 0)


def test_demoralised_creature_shifts_one_to_the_opponents_and_back_on_restore() -> None:
    tide = BattleTide(("PCs", "Orcs"))
    tide, _ = gm(tide, "demoralise", side="b", actor="Orc chief")
    assert tide.describe() == "PCs +1"
    with pytest.raises(RuleError, match="already demoralised"):
        demoralise(tide, "Orc chief", 1)
    tide, _ = gm(tide, "restore", actor="Orc chief")
    assert tide.describe() == "Neutral" and tide.demoralised == ()
    with pytest.raises(RuleError, match="not demoralised"):
        restore(tide, "Orc chief")


def test_attack_rolls_and_defences_get_the_favoured_sides_bonus() -> None:
    tide = start({"morale": [2, 0]})
    ctx = RollContext(side="a", params={"attack": 3, "defence": 15})
    _, out = SYSTEM.resolve(tide, ctx, Roll((Die(DieKind.D20, 10),)), {})
    assert out.facts["total"] == 15 and out.facts["hit"]
    ctx = RollContext(side="b", params={"defence": 13})
    _, out = SYSTEM.resolve(tide, ctx, Roll((Die(DieKind.D20, 14),)), {})
    assert out.facts["defence"] == 15 and not out.facts["hit"]


def test_three_sides_only_one_is_favoured_at_a_time() -> None:
    tide = BattleTide(("Town", "Orcs", "Wolves"))
    tide = shift(tide, 1, 2, "power")
    tide = shift(tide, 2, 3, "power")
    assert tide.describe() == "Wolves +1" and tide.bonus(1) == 0
    with pytest.raises(RuleError, match="two sides"):
        recount(tide, PCS, GOBLINS)
    tide = demoralise(tide, "Alpha", 2, favour=0)
    assert tide.describe() == "Neutral"
    bar = SYSTEM.bar(shift(tide, 0, 2, "x"))
    assert (bar.label_a, bar.position) == ("Town", -2)


@pytest.mark.parametrize(
    ("settings_", "match"),
    [
        ({"sides": ["A"]}, "2..26 sides"),
        ({"morale": [1]}, "morale"),
        ({"home": "z"}, "unknown side"),
        ({"numbers": [4, {"plain": -1}]}, "plain"),
        ({"numbers": [4, {"heroes": 1}]}, "heroes"),
        ({"weather": "rain"}, "weather"),
    ],
)
def test_bad_settings_name_the_field(settings_: dict[str, Any], match: str) -> None:
    with pytest.raises(RuleError, match=match):
        start(settings_)


def test_gm_actions_refuse_dice_and_unknown_params() -> None:
    tide = BattleTide()
    with pytest.raises(RuleError, match="GM action"):
        SYSTEM.resolve(tide, RollContext(mode="shift", side="a"), Roll((Die(DieKind.D6, 3),)), {})
    with pytest.raises(RuleError, match="speed"):
        gm(tide, "shift", side="a", speed=2)
    with pytest.raises(RuleError, match="steps"):
        gm(tide, "shift", side="a", steps=-1)


def test_tracker_round_trips_and_session_switches_and_undoes() -> None:
    tide = demoralise(start({"sides": ["P", "G"], "numbers": [4, 13]}), "Gob", 1)
    adapter = TypeAdapter(SYSTEM.state_type)
    assert adapter.validate_python(adapter.dump_python(tide, mode="json")) == tide
    state = switch_system(new_session("s"), "tide-of-battle", {"morale": [0, 2]})
    state, _ = record_roll(
        state, Roll(()), RollContext(mode="shift", side="a", params={"steps": 3})
    )
    assert state.bar().position == -1
    state, _ = undo(state)
    assert state.bar().position == 2


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 9)), max_size=25), st.integers(1, 8))
def test_signed_tide_is_the_sum_of_its_shifts_and_stays_on_the_bar(
    shifts: list[tuple[int, int]], span: int
) -> None:
    tide, total = BattleTide(span=span), 0
    for side, steps in shifts:
        tide = shift(tide, side, steps, "x")
        total += steps if side == 1 else -steps
        assert tide.signed == total
        bar = SYSTEM.bar(tide)
        assert bar.low <= bar.position <= bar.high and bar.low == -bar.high
        assert tide.bonus(0) + tide.bonus(1) == abs(total)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30), st.integers(0, 30))
def test_recount_lands_where_a_fresh_count_would(a1: int, b1: int, a2: int, b2: int) -> None:
    first = recount(BattleTide(), Roster(plain=a1), Roster(plain=b1))
    again = recount(first, Roster(plain=a2), Roster(plain=b2))
    fresh = recount(BattleTide(), Roster(plain=a2), Roster(plain=b2))
    assert again.signed == fresh.signed and 0 <= again.steps <= 4


def test_declaring_an_attack_without_a_side_is_refused_before_the_roll() -> None:
    state = switch_system(new_session("s"), "tide-of-battle")
    with pytest.raises(RuleError, match="side"):
        declare(state, RollContext(params={"attack": 2}))
    declare(state, RollContext(side="b", params={"attack": 2}))
