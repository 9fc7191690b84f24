"""Seed 003 (battle rhythm): the Count clock, simultaneous resolution, rewind, Cast Lots."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.session import new_session, record_roll, switch_system, undo
from tidetower.engine.systems import get_system
from tidetower.engine.systems.battle_rhythm import rhythm as r
from tidetower.engine.systems.battle_rhythm.rhythm import BattleRhythm

SYSTEM = get_system("battle-rhythm")


def gm(
    scene: BattleRhythm, mode: str, actor: str = "", **params: Any
) -> tuple[BattleRhythm, dict[str, Any]]:
    scene, out = SYSTEM.resolve(
        scene, RollContext(actor=actor, mode=mode, params=params), Roll(()), {}
    )
    return scene, dict(out.facts)


def attack(faces: tuple[int, ...], **params: Any) -> dict[str, Any]:
    roll = Roll(tuple(Die(DieKind.D6, f) for f in faces))
    _, out = SYSTEM.resolve(BattleRhythm(), RollContext(mode="attack", params=params), roll, {})
    return dict(out.facts)


def test_the_seed_example_advances_three_counts_and_everyone_subtracts_three() -> None:
    scene = r.declare(BattleRhythm(), "Ash", "strike", 3)
    scene = r.declare(scene, "Bree", "charge", 5)
    scene = r.advance(scene)
    assert scene.count == 3
    assert [(a.actor, a.remaining(scene.count)) for a in scene.resolved] == [("Ash", 0)]
    assert [(a.actor, a.remaining(scene.count)) for a in scene.pending] == [("Bree", 2)]


def test_everything_that_reaches_zero_resolves_together() -> None:
    scene = r.declare(BattleRhythm(), "Ash", "strike", 4)
    scene = r.declare(scene, "Bree", "strike", 4)
    scene = r.declare(scene, "Cole", "shove", 6)
    scene, facts = gm(scene, "advance")
    assert {a["actor"] for a in facts["resolved"]} == {"Ash", "Bree"}
    assert facts["count"] == 4 and facts["pending"] == [
        {"actor": "Cole", "action": "shove", "remaining": 2}
    ]


def test_lowest_mobility_declares_first() -> None:
    scene = SYSTEM.initial_state({"mobility": {"Ash": 2, "Bree": 5}})
    scene = r.declare(scene, "Ash", "strike", 3)
    scene = r.declare(scene, "Bree", "dodge", 2)
    with pytest.raises(RuleError, match=r"Ash \(Mobility 2\) must declare before Bree"):
        r.declare(scene, "Ash", "feint", 2)
    free = SYSTEM.initial_state({"mobility": {"Ash": 2, "Bree": 5}, "declare_order": "free"})
    r.declare(r.declare(free, "Bree", "dodge", 2), "Ash", "strike", 3)


def test_after_a_resolution_everyone_may_respond_again() -> None:
    scene = SYSTEM.initial_state({"mobility": {"Ash": 2, "Bree": 5}})
    scene = r.declare(r.declare(scene, "Ash", "strike", 3), "Bree", "dodge", 2)
    scene = r.advance(scene)
    assert r.declare(scene, "Ash", "feint", 2).pending[-1].due == 4


def test_a_new_action_abandons_the_old_without_refund() -> None:
    scene = r.declare(BattleRhythm(), "Ash", "strike", 5)
    scene = r.advance(r.declare(scene, "Bree", "shove", 2))
    scene = r.declare(scene, "Ash", "flee", 2)
    assert [(a.action, a.due) for a in scene.pending] == [("flee", 4)]
    both = r.declare(scene, "Ash", "shout", 1, alongside=True)
    assert len(both.pending) == 2
    scene, _ = gm(scene, "abandon", actor="Ash")
    assert scene.pending == ()
    with pytest.raises(RuleError, match="no pending action"):
        r.abandon(scene, "Ash")


def test_rewind_returns_everyone_to_the_last_resolution() -> None:
    scene = r.advance(r.declare(BattleRhythm(), "Ash", "strike", 2))
    with_bree = r.declare(r.declare(scene, "Bree", "charge", 4), "Cole", "aim", 6)
    moved = r.advance(with_bree, counts=1)
    back = r.rewind(moved)
    assert back.count == 2 and back.pending == () and back.declared == ()
    with pytest.raises(RuleError, match="nothing has resolved"):
        r.rewind(BattleRhythm())


def test_advance_by_counts_never_jumps_past_a_scheduled_action() -> None:
    scene = r.declare(BattleRhythm(), "Ash", "strike", 3)
    part = r.advance(scene, counts=2)
    assert part.count == 2 and part.resolved == ()
    assert r.advance(scene, counts=10).count == 3
    with pytest.raises(RuleError, match="no action is scheduled"):
        r.advance(BattleRhythm())


def test_at_the_very_beginning_an_action_may_start_from_a_later_count() -> None:
    scene = r.declare(BattleRhythm(), "Ash", "strike", 3, starts_at=2)
    assert scene.pending[0].due == 5
    with pytest.raises(RuleError, match="after 0"):
        r.declare(BattleRhythm(), "Ash", "strike", 3, starts_at=0)
    resolved = r.advance(scene)
    with pytest.raises(RuleError, match="beginning of a battle"):
        r.declare(resolved, "Bree", "strike", 3, starts_at=6)


def test_offense_minus_defense_is_accuracy_and_lands_above_zero() -> None:
    assert r.accuracy(5, 3) == 2
    assert attack((4, 4), offense=5, defense=3)["lands"]
    assert not attack((4, 4), offense=3, defense=3)["lands"]
    assert attack((4, 4), offense=0)["lands"]  # no Defensive Maneuver: it always lands


def test_fate_overrides_accuracy_with_crits() -> None:
    crit = attack((6, 6), offense=1, defense=9)
    assert crit["lot_name"].startswith("attacker CRIT") and crit["lands"]
    fumble = attack((1, 1), offense=9, defense=1)
    assert fumble["lot"] == -2 and not fumble["lands"]
    defender = attack((6, 6), offense=9, defense=1, casters="defender")
    assert defender["lot_name"].startswith("defender CRIT") and not defender["lands"]
    weal_vs_weal = attack((5, 6, 6, 5), offense=2, defense=1, casters="both")
    assert weal_vs_weal["lot"] == 0


def test_only_pcs_cast_lots() -> None:
    assert attack((), offense=2, defense=1, casters="none")["lot"] == 0
    with pytest.raises(RuleError, match="2 per PC"):
        attack((3,), offense=2, casters="attacker")


def test_lot_odds_are_exact_and_match_200k_throws() -> None:
    odds = r.lot_odds()
    assert odds == {
        -2: Fraction(1, 36),
        -1: Fraction(2, 36),
        0: Fraction(30, 36),
        1: Fraction(2, 36),
        2: Fraction(1, 36),
    }
    rng = np.random.default_rng(3)
    sums = rng.integers(1, 7, 200_000) + rng.integers(1, 7, 200_000)
    lots = np.array([r.LOT_BY_SUM.get(s, 0) for s in range(13)])[sums]
    for value, p in odds.items():
        assert abs(float(p) - (lots == value).mean()) < 0.005


def test_bad_declarations_name_the_field() -> None:
    with pytest.raises(RuleError, match="effort"):
        gm(BattleRhythm(), "declare", actor="Ash", effort=0)
    with pytest.raises(RuleError, match="actor"):
        gm(BattleRhythm(), "declare", effort=2)
    with pytest.raises(RuleError, match="mode"):
        gm(BattleRhythm(), "teleport")
    with pytest.raises(RuleError, match="mobility"):
        SYSTEM.initial_state({"mobility": {"Ash": "fast"}})


def test_bar_shows_counts_to_the_next_action_and_each_pending_one() -> None:
    scene = r.declare(r.declare(BattleRhythm(), "Ash", "strike", 3), "Bree", "charge", 5)
    scene = r.advance(scene)
    scene = r.declare(scene, "Ash", "strike", 4)
    bar = SYSTEM.bar(scene)
    assert (bar.position, bar.high) == (2, 4)
    assert bar.segments == (("Bree: charge", 3, 5), ("Ash: strike", 0, 4))


def test_tracker_round_trips_and_the_session_can_switch_and_undo() -> None:
    scene = r.advance(r.declare(SYSTEM.initial_state({"mobility": {"Ash": 1}}), "Ash", "x", 2))
    adapter = TypeAdapter(SYSTEM.state_type)
    assert adapter.validate_python(adapter.dump_python(scene, mode="json")) == scene
    state = switch_system(new_session("s"), "battle-rhythm")
    state, _ = record_roll(
        state, Roll(()), RollContext(actor="Ash", mode="declare", params={"effort": 3})
    )
    state, _ = record_roll(state, Roll(()), RollContext(mode="advance"))
    assert state.tracker.count == 3
    state, _ = undo(state)
    assert state.tracker.count == 0 and len(state.tracker.pending) == 1


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("declare"), st.sampled_from(["A", "B", "C"]), st.integers(1, 9)),
            st.tuples(st.just("advance"), st.just(""), st.integers(0, 4)),
            st.tuples(st.just("rewind"), st.just(""), st.just(0)),
        ),
        max_size=30,
    )
)
def test_the_count_never_runs_backwards_past_a_resolution_nor_skips_an_action(
    steps: list[tuple[str, str, int]],
) -> None:
    scene = BattleRhythm(declare_order="free")
    for kind, who, n in steps:
        try:
            if kind == "declare":
                scene = r.declare(scene, who, "act", n)
            elif kind == "advance":
                scene = r.advance(scene, n or None)
            else:
                scene = r.rewind(scene)
        except RuleError:
            continue
        assert all(a.remaining(scene.count) >= 1 for a in scene.pending)
        assert all(a.due == scene.count for a in scene.resolved)
        if scene.checkpoint is not None:
            assert scene.count >= scene.checkpoint.count
        bar = SYSTEM.bar(scene)
        assert bar.low <= bar.position <= bar.high
