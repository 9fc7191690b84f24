"""Seed 004 (graded d100): hit chance, grades and damage, defence, side momentum."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from tidetower.engine.dice import Die, DieError, DieKind, Roll, d100
from tidetower.engine.rules import RollContext, RuleError, Side
from tidetower.engine.session import new_session, record_roll, switch_system
from tidetower.engine.systems import get_system
from tidetower.engine.systems.graded_d100 import grades as g
from tidetower.engine.systems.graded_d100.fight import (
    GradedFight,
    add_momentum,
    end_turn,
    read_d100,
)

SYSTEM = get_system("graded-d100")


def roll100(value: int) -> Roll:
    return Roll((Die(DieKind.D100, value),))


def act(
    fight: GradedFight,
    mode: str,
    face: int | None = None,
    side: Side = "a",
    actor: str = "",
    **params: Any,
) -> tuple[GradedFight, dict[str, Any]]:
    roll = roll100(face) if face is not None else Roll(())
    fight, out = SYSTEM.resolve(
        fight, RollContext(actor=actor, side=side, mode=mode, params=params), roll, {}
    )
    return fight, dict(out.facts)


@pytest.mark.parametrize(
    ("margin", "grade"),
    [
        (25, "CRITICAL"),
        (24, "CLEAN"),
        (12, "CLEAN"),
        (11, "SOLID"),
        (0, "SOLID"),
        (-1, "GLANCING"),
        (-9, "GLANCING"),
        (-10, "DEFLECTED"),
        (-19, "DEFLECTED"),
        (-20, "WHIFF"),
        (-29, "WHIFF"),
        (-30, "BACKFIRE"),
    ],
)
def test_margin_sets_the_grade_by_the_seed_table(margin: int, grade: str) -> None:
    assert g.grade(margin) == grade


def test_damage_multipliers_of_the_table() -> None:
    assert [float(g.DAMAGE[n]) for n in g.GRADES] == [1.4, 1.15, 1, 0.5, 0.2, 0, 0]


def test_heroes_start_from_80_and_enemies_from_65() -> None:
    fight = SYSTEM.initial_state({})
    _, hero = act(fight, "attack", 50, side="a")
    _, enemy = act(fight, "attack", 50, side="b")
    assert (hero["chance"], enemy["chance"]) == (80, 65)


def test_every_grade_term_adds_to_the_chance() -> None:
    parts = g.chance_parts("hero", "brilliant", "reckless", "difficult", 30, 2, 65)
    assert parts == {
        "base": 80,
        "tactics": 12,
        "risk": -20,
        "target": -8,
        "gap": 12,
        "momentum": 2,
        "exhaustion": -10,
    }
    assert g.chance_parts("enemy", "poor", "aggressive", "easy", -25)["gap"] == -10


@pytest.mark.parametrize(
    ("spent", "penalty"), [(40, 0), (41, -5), (60, -5), (61, -10), (80, -10), (81, -15), (100, -15)]
)
def test_exhaustion_past_40_60_80_percent(spent: int, penalty: int) -> None:
    assert g.exhaustion(spent) == penalty


def test_rank_gap_ladder_ten_points_per_letter() -> None:
    assert g.rank_points("S") - g.rank_points("B") == 20
    assert g.gap_reading(20) == "Beneath you." and g.gap_reading(0) == "even"
    assert g.gap_reading(-20) == "cannot meaningfully harm"
    fight = SYSTEM.initial_state({})
    _, facts = act(fight, "attack", 50, rank="A", target_rank="C")
    assert facts["parts"]["gap"] == 12


def test_momentum_grows_with_good_grades_and_kills_and_fades_each_turn() -> None:
    fight = SYSTEM.initial_state({})
    fight, facts = act(fight, "attack", 10, side="a", kill=True)  # 80 - 10 = 70: CRITICAL
    assert facts["grade"] == "CRITICAL" and facts["momentum_change"] == 3 + 2
    assert fight.momentum_a == 5
    fight, _ = act(fight, "ally-falls", side="a")
    assert fight.momentum_a == 2
    fight = end_turn(end_turn(end_turn(fight)))
    assert (fight.momentum_a, fight.turn) == (0, 4)


def test_backfire_is_the_biggest_drop_of_all() -> None:
    drops = [g.MOMENTUM[n] for n in g.GRADES]
    assert min(drops) == g.MOMENTUM["BACKFIRE"] < g.ALLY_FALLS
    assert g.MOMENTUM["CRITICAL"] == 3 and drops == sorted(drops, reverse=True)


def test_momentum_feeds_every_hit_chance_of_its_side() -> None:
    fight = add_momentum(SYSTEM.initial_state({}), "b", 4)
    _, facts = act(fight, "attack", 50, side="b")
    assert facts["chance"] == 69 and facts["parts"]["momentum"] == 4


def test_one_defence_per_turn_compared_with_each_attack() -> None:
    fight = SYSTEM.initial_state({})
    fight, _ = act(fight, "defence", 40, side="a", actor="Ren")  # 80 - 40 = margin 40
    with pytest.raises(RuleError, match="one per turn"):
        act(fight, "defence", 10, side="a", actor="Ren")
    fight, first = act(fight, "attack", 50, side="b", defender="Ren")  # margin 15: CLEAN
    assert (first["rolled_grade"], first["grade"]) == ("CLEAN", "WHIFF")
    fight, second = act(fight, "attack", 1, side="b", defender="Ren")  # margin 64
    assert second["grade"] == "GLANCING"  # 40 - 10 for the extra attack < 64: capped
    _, free = act(fight, "attack", 50, side="b", defender="Ren", undefendable=True)
    assert free["grade"] == "CLEAN"
    assert end_turn(fight).defences == ()


def test_a_botched_defence_makes_the_attack_a_grade_better() -> None:
    assert g.defended("SOLID", 5, -35, 0) == "CLEAN"
    assert g.defended("CRITICAL", 30, -35, 0) == "CRITICAL"
    assert g.defended("SOLID", 5, -5, 0) == "SOLID"  # a failed defence changes nothing


def test_two_d10_read_as_tens_then_units_and_double_zero_is_100() -> None:
    assert read_d100(Roll((Die(DieKind.D10, 4), Die(DieKind.D10, 7)))) == 47
    assert read_d100(Roll((Die(DieKind.D10, 10), Die(DieKind.D10, 10)))) == 100
    assert read_d100(Roll((Die(DieKind.D10, 10), Die(DieKind.D10, 3)))) == 3
    assert d100(90, 0).face == 90
    with pytest.raises(RuleError, match="d100"):
        read_d100(Roll((Die(DieKind.D6, 4),)))
    with pytest.raises(DieError):
        Die(DieKind.D100, 101)


def test_chance_is_kept_between_the_tables_floor_and_ceiling() -> None:
    fight = SYSTEM.initial_state({})
    _, facts = act(fight, "attack", 50, tactics="brilliant", target="easy", gap=20)
    assert facts["chance"] == 95
    wide = SYSTEM.initial_state({"chance_max": 100})
    _, facts = act(wide, "attack", 50, tactics="brilliant", target="easy", gap=20)
    assert facts["chance"] == 100


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"tactics": "sneaky"}, "tactics"),
        ({"risk": "yolo"}, "risk"),
        ({"spent": 120}, "spent"),
        ({"chance": -3}, "chance"),
        ({"rank": "Z"}, "rank"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_bad_grades_name_the_field_and_change_nothing(params: dict[str, Any], match: str) -> None:
    fight = SYSTEM.initial_state({})
    with pytest.raises(RuleError, match=match):
        act(fight, "attack", 50, **params)
    assert fight == SYSTEM.initial_state({})


def test_tracker_round_trips_and_session_switches() -> None:
    fight, _ = act(
        add_momentum(SYSTEM.initial_state({"momentum_cap": 6}), "a", 3), "defence", 20, actor="Ren"
    )
    adapter = TypeAdapter(SYSTEM.state_type)
    assert adapter.validate_python(adapter.dump_python(fight, mode="json")) == fight
    state = switch_system(new_session("s"), "graded-d100")
    state, rec = record_roll(state, roll100(5), RollContext(side="a", mode="attack"))
    assert rec.outcome.facts["grade"] == "CRITICAL" and state.bar().position == -3


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 20),
    st.lists(
        st.one_of(
            st.tuples(st.just("attack"), st.sampled_from(["a", "b"]), st.integers(1, 100)),
            st.tuples(st.just("momentum"), st.sampled_from(["a", "b"]), st.integers(-10, 10)),
            st.tuples(st.just("end-turn"), st.just("a"), st.just(0)),
        ),
        max_size=30,
    ),
)
def test_side_momentum_never_leaves_its_cap(cap: int, steps: list[tuple[str, Side, int]]) -> None:
    fight = SYSTEM.initial_state({"momentum_cap": cap})
    for kind, side, n in steps:
        if kind == "attack":
            fight, _ = act(fight, "attack", n, side=side)
        elif kind == "momentum":
            fight, _ = act(fight, "momentum", side=side, amount=n)
        else:
            fight, _ = act(fight, "end-turn")
        assert -cap <= fight.momentum_a <= cap and -cap <= fight.momentum_b <= cap
        bar = SYSTEM.bar(fight)
        assert bar.low <= bar.position <= bar.high
        assert all(0 <= filled <= size for _, filled, size in bar.segments)
