"""Seed 002 (d6 pool): Kira's quick start, the bar-brawl auction, clocks, stress, bounds."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext, RollRecord, RuleError
from tidetower.engine.session import new_session, record_roll, switch_system, undo
from tidetower.engine.systems import get_system
from tidetower.engine.systems.d6_pool import tracker as t
from tidetower.engine.systems.d6_pool.pool import (
    Bid,
    Clock,
    auction_winners,
    check_bid,
    contest,
    fortune_target,
    outcome,
    read_pool,
    resistance_cost,
)

SYSTEM = get_system("d6-pool")


def d6(*faces: int) -> Roll:
    return Roll(tuple(Die(DieKind.D6, f) for f in faces))


def play(
    table: t.D6Table,
    faces: tuple[int, ...] = (),
    mode: str = "",
    actor: str = "",
    earlier: Mapping[str, RollRecord] | None = None,
    reply_to: str | None = None,
    **params: Any,
) -> tuple[t.D6Table, dict[str, Any]]:
    ctx = RollContext(actor=actor, mode=mode, params=params, reply_to=reply_to)
    table, out = SYSTEM.resolve(table, ctx, d6(*faces), earlier or {})
    return table, dict(out.facts)


def fresh(**settings: Any) -> t.D6Table:
    table = SYSTEM.initial_state(settings)
    assert isinstance(table, t.D6Table)
    return table


# --- Kira's quick start (seed 002, 1.6) and 3.4.2 -----------------------------------------


def test_kira_prowls_5_and_2_one_hit_is_a_partial_success() -> None:
    _, facts = play(fresh(), (5, 2), actor="Kira", rating=2, difficulty=1)
    assert (facts["hits"], facts["result"], facts["excess"]) == (1, "partial", 0)


def test_kira_surveys_4_and_3_two_hits_is_a_full_success() -> None:
    _, facts = play(fresh(), (4, 3), actor="Kira", rating=2)
    assert (facts["hits"], facts["result"]) == (2, "full")


def test_kira_shoots_6_and_4_at_4_plus_full_with_one_excess_and_gains_momentum() -> None:
    table, facts = play(
        fresh(), (6, 4), actor="Kira", rating=2, action="shoot", threshold=4, combat=True
    )
    assert (facts["hits"], facts["result"], facts["excess"]) == (2, "full", 1)
    assert facts["momentum_gained"] and table.has_momentum("Kira")


def test_kira_strikes_5_and_5_spends_momentum_for_one_more_harm_level() -> None:
    table = t.set_momentum(fresh(), "Kira", True)
    table, facts = play(
        table,
        (5, 5),
        actor="Kira",
        rating=2,
        action="strike",
        difficulty=1,
        spend_momentum=True,
        harm=1,
    )
    assert facts["threshold"] == 4 and facts["result"] == "full" and facts["excess"] == 1
    assert facts["momentum_spent"] and facts["harm"] == 1 + 1 + 1
    assert table.has_momentum("Kira")  # the strike's own excess hit grants it again


def test_kira_catches_the_pack_4_and_2_partial() -> None:
    _, facts = play(fresh(), (4, 2), actor="Kira", rating=2)
    assert facts["result"] == "partial"


def test_strike_at_4_plus_reads_a_3_as_a_miss() -> None:
    _, facts = play(fresh(), (3, 3), actor="Kira", rating=2, action="strike")
    assert facts["hits"] == 0 and facts["result"] == "bad"


def test_spending_momentum_without_it_is_refused() -> None:
    with pytest.raises(RuleError, match="no momentum"):
        play(fresh(), (5, 5), actor="Kira", rating=2, action="strike", spend_momentum=True)


def test_partial_strike_spends_momentum_only_if_the_table_allows() -> None:
    strict = t.set_momentum(fresh(momentum_spend="full"), "Kira", True)
    table, facts = play(
        strict, (5, 1), actor="Kira", rating=2, action="strike", spend_momentum=True
    )
    assert facts["result"] == "partial" and not facts["momentum_spent"]
    assert table.has_momentum("Kira")
    loose = t.set_momentum(fresh(), "Kira", True)
    _, facts = play(loose, (5, 1), actor="Kira", rating=2, action="strike", spend_momentum=True)
    assert facts["momentum_spent"]


def test_end_of_combat_expires_momentum() -> None:
    table = t.set_momentum(t.set_momentum(fresh(), "Kira", True), "Bo", True)
    table, facts = play(table, mode="end-combat")
    assert table.momentum == () and sorted(facts["momentum_expired"]) == ["Bo", "Kira"]


# --- reading the tray: explosions and traitor dice --------------------------------------


def test_pair_of_sixes_needs_its_bonus_die_and_chains_on() -> None:
    with pytest.raises(RuleError, match="missing bonus"):
        read_pool((6, 6, 2), 3)
    read = read_pool((6, 6, 2, 6), 3)
    assert (read.hits, read.bonus_dice, read.exploded) == (3, 1, True)  # the 2 misses
    # the bonus 6 pairs with nothing: the chain stops at one bonus die
    with pytest.raises(RuleError, match="bonus dice"):
        read_pool((6, 6, 2, 6, 4), 3)
    # 6 6 6 + bonus 6: the bonus pairs with the unmatched 6 -> one more bonus die
    assert read_pool((6, 6, 6, 6, 1), 3).bonus_dice == 2


def test_traitor_dice_score_one_hit_only_when_all_hit() -> None:
    assert read_pool((3, 4), 0).hits == 1
    assert read_pool((6, 6, 6), -1).hits == 1
    assert read_pool((6, 6, 2), -1).hits == 0
    with pytest.raises(RuleError, match="traitor"):
        read_pool((6, 6), -1)


def test_traitor_threshold_follows_the_roll_unless_the_table_says_three() -> None:
    _, facts = play(fresh(), (3, 3), rating=0, action="strike")
    assert facts["traitor"] and facts["hits"] == 0
    _, facts = play(fresh(traitor_threshold="three"), (3, 3), rating=0, action="strike")
    assert facts["hits"] == 1


def test_outcome_table() -> None:
    assert outcome(0, 1) == ("bad", 0)
    assert outcome(1, 1) == ("partial", 0)
    assert outcome(3, 1) == ("full", 2)
    assert outcome(5, 3) == ("full", 2)


# --- push, assist, resistance, stress ------------------------------------------------------


def test_push_for_a_die_costs_two_stress_and_adds_the_die() -> None:
    table, facts = play(fresh(), (4, 1, 5), actor="Kira", rating=2, push="die")
    assert facts["dice"] == 3 and facts["hits"] == 2
    assert table.stress_of("Kira").stress == 2


def test_push_for_difficulty_never_goes_below_one() -> None:
    _, facts = play(fresh(), (4, 1), actor="Kira", rating=2, difficulty=1, push="difficulty")
    assert facts["difficulty"] == 1
    _, facts = play(fresh(), (4, 1), actor="Kira", rating=2, difficulty=3, push="difficulty")
    assert facts["difficulty"] == 2


def test_each_assist_adds_a_die_and_costs_its_helper_one_stress() -> None:
    table, facts = play(fresh(), (4, 1, 2, 2), actor="Kira", rating=2, assists=["Bo", "Ann"])
    assert facts["dice"] == 4
    assert [(s.name, s.stress) for s in table.stress] == [("Ann", 1), ("Bo", 1)]


def test_resistance_costs_six_minus_highest_and_two_sixes_clear_one() -> None:
    assert resistance_cost((1, 4, 2)) == 2
    assert resistance_cost((6, 1)) == 0
    assert resistance_cost((6, 6, 1)) == -1
    table = t.add_stress(fresh(), "Kira", 3)[0]
    table, facts = play(table, (6, 6, 2, 1), mode="resist", actor="Kira", attribute=4)
    assert facts["cost"] == -1 and table.stress_of("Kira").stress == 2


def test_resistance_at_attribute_zero_keeps_the_lowest_of_two_or_is_refused() -> None:
    _, facts = play(fresh(), (6, 2), mode="resist", actor="Kira", attribute=0)
    assert facts["cost"] == 4
    with pytest.raises(RuleError, match="attribute 0"):
        play(fresh(zero_resistance="cannot"), (6, 2), mode="resist", attribute=0)


def test_a_filled_stress_track_overwhelms_into_a_condition() -> None:
    table, facts = t.add_stress(fresh(), "Kira", 9)
    assert facts["overwhelmed"] and table.stress_of("Kira") == t.Stress("Kira", 0, 1)


# --- contests, auctions, group actions, fortune ----------------------------------------------


def test_grab_for_the_sword_two_hits_beat_one() -> None:
    assert contest((1, 0), (2, 0)) == ("b", 1, "more hits")
    assert contest((2, 1), (2, 0))[0] == "a"
    assert contest((2, 1), (2, 1))[0] is None


def test_contest_through_the_session_reply_chain() -> None:
    state = new_session("c", "d6-pool")
    state, first = record_roll(
        state, d6(4, 1), RollContext(actor="Ann", mode="contest", params={"rating": 2})
    )
    assert first.outcome.facts["awaiting_reply"]
    state, reply = record_roll(
        state,
        d6(5, 3),
        RollContext(actor="Bo", mode="contest", reply_to=first.id, params={"rating": 2}),
    )
    assert reply.outcome.facts["winner"] == "Bo" and reply.outcome.facts["excess"] == 1


def test_bar_brawl_auction_the_knight_wins_on_hits() -> None:
    table = fresh()
    for name, hits in (("barbarian", 1), ("rogue", 1), ("knight", 2), ("merchant", 0)):
        table = t.auction_roll(table, name, hits, 0)
    for name, bid in (("barbarian", 4), ("rogue", 1), ("knight", 3), ("merchant", 4)):
        table = t.auction_bid(table, name, bid)
    table, facts = t.auction_reveal(table)
    totals = {e["name"]: e["total"] for e in facts["entries"]}
    assert totals == {"barbarian": 5, "rogue": 2, "knight": 5, "merchant": 4}
    assert facts["winners"] == ["knight"] and not facts["draw"]
    assert table.auction == ()


def test_bar_brawl_bids_break_the_strict_raise_reading() -> None:
    bids = [Bid("barbarian", 1, bid=4), Bid("rogue", 1, bid=1), Bid("knight", 2)]
    with pytest.raises(RuleError, match="raise"):
        check_bid(bids, "knight", 3, "raise")
    check_bid(bids, "knight", 3, "open")


def test_auction_rules_one_bid_each_and_draws() -> None:
    bids = [Bid("a", 2, bid=1), Bid("b", 2, bid=1), Bid("c", 0, bid=2)]
    assert auction_winners(bids) == (("a", "b"), "tied at 3, tied on hits: a draw")
    with pytest.raises(RuleError, match="only bid"):
        check_bid(bids, "a", 3, "open")


def test_auction_through_the_system_keeps_hits_hidden_until_reveal() -> None:
    table = fresh()
    for name, faces in (("Ann", (4, 4)), ("Bo", (1, 2)), ("Cy", (3, 1))):
        table, facts = play(table, faces, mode="auction", actor=name, rating=2)
        assert "hits" not in facts
    with pytest.raises(RuleError, match="every participant"):
        play(table, mode="reveal")
    for name, bid in (("Ann", 1), ("Bo", 5), ("Cy", 2)):
        table, _ = play(table, mode="bid", actor=name, bid=bid)
    with pytest.raises(RuleError, match="bidding has begun"):
        play(table, (4,), mode="auction", actor="Di", rating=1)
    table, facts = play(table, mode="reveal")
    assert facts["winners"] == ["Bo"]


def test_group_action_takes_the_best_result_and_charges_the_leader() -> None:
    state = new_session("g", "d6-pool")
    state, lead = record_roll(
        state, d6(1, 2), RollContext(actor="Lea", mode="group", params={"rating": 2})
    )
    state, _ = record_roll(
        state,
        d6(5, 4),
        RollContext(actor="Bo", mode="group", reply_to=lead.id, params={"rating": 2}),
    )
    state, last = record_roll(
        state,
        d6(
            2,
        ),
        RollContext(actor="Cy", mode="group", reply_to=lead.id, params={"rating": 1}),
    )
    assert last.outcome.facts["group_result"] == "full"
    assert last.outcome.facts["group_best_by"] == "Bo"
    assert state.tracker.stress_of("Lea").stress == 2  # Lea's own bad roll and Cy's


def test_fortune_rolls_on_the_likelihood_ladder() -> None:
    assert fortune_target("even") == 4
    assert fortune_target("even", +1) == 3  # Fair chance +1 becomes 3+
    assert fortune_target("impossible", +1) == 6  # Impossible +1 becomes Remote
    assert fortune_target("certain", +2) == 1 and fortune_target("impossible", -1) == 7
    _, facts = play(fresh(), (5,), mode="fortune", likelihood="unlikely")
    assert facts["tn"] == 5 and facts["success"]
    _, facts = play(fresh(), (5,), mode="fortune", likelihood="impossible")
    assert not facts["success"] and facts["margin"] == -2


# --- clocks --------------------------------------------------------------------------------


def test_clocks_tick_partial_one_full_one_plus_excess() -> None:
    table, _ = play(fresh(), mode="new-clock", clock="Forest", size=6)
    table, facts = play(table, (4, 1), actor="Ann", rating=2, clock="Forest")
    assert facts["ticked"] == 1
    table, facts = play(table, (4, 5, 6), actor="Ann", rating=3, clock="Forest")
    assert facts["ticked"] == 3 and facts["filled"] == 4
    table, facts = play(table, (4, 5, 3), actor="Ann", rating=3, clock="Forest")
    assert facts["filled"] == 6 and facts["clock_full"]


def test_opposed_clocks_report_who_filled_first() -> None:
    table, _ = play(fresh(), mode="new-clock", clock="Guards", size=4, kind="danger")
    table, _ = play(table, mode="new-clock", clock="Ward", size=6, rival="Guards")
    table, facts = play(table, mode="tick-clock", clock="Guards", segments=4)
    assert facts["won_race_against"] == ["Ward"]
    bar = SYSTEM.bar(table)
    assert bar.segments == (("Guards", 4, 4), ("Ward", 0, 6))


def test_bad_clock_declarations_are_refused() -> None:
    with pytest.raises(RuleError, match="size"):
        play(fresh(), mode="new-clock", clock="X", size=1)
    with pytest.raises(RuleError, match="no clock"):
        play(fresh(), (4,), rating=1, clock="Nowhere")


# --- bad input changes nothing -----------------------------------------------------------


@pytest.mark.parametrize(
    ("faces", "params", "match"),
    [
        ((4, 2), {"rating": 2, "speed": 3}, "speed"),
        ((4, 2), {"rating": 2, "threshold": 5}, "threshold"),
        ((4, 2), {"rating": 2, "difficulty": 0}, "difficulty"),
        ((4, 2), {"rating": 2, "push": "luck"}, "push"),
        ((4,), {"rating": 2}, "tray shows 1"),
        ((4, 2), {}, "rating"),
    ],
)
def test_bad_declarations_name_the_field(
    faces: tuple[int, ...], params: dict[str, Any], match: str
) -> None:
    table = fresh()
    with pytest.raises(RuleError, match=match):
        play(table, faces, actor="Kira", **params)
    assert table == fresh()


def test_dice_on_a_gm_action_and_foreign_dice_are_refused() -> None:
    with pytest.raises(RuleError, match="GM action"):
        play(fresh(), (3,), mode="end-combat")
    with pytest.raises(RuleError, match="d8"):
        SYSTEM.resolve(fresh(), RollContext(params={"rating": 1}), Roll((Die(DieKind.D8, 3),)), {})
    with pytest.raises(RuleError, match="unknown d6-pool setting"):
        fresh(stress=3)


# --- the tracker round-trips and stays in bounds -----------------------------------------


def test_tracker_round_trips_through_json() -> None:
    table, _ = play(fresh(stress_max=10), mode="new-clock", clock="Ward", size=6)
    table = t.set_momentum(t.add_stress(table, "Kira", 3)[0], "Kira", True)
    table = t.auction_roll(table, "Kira", 2, 1)
    adapter = TypeAdapter(SYSTEM.state_type)
    assert adapter.validate_python(adapter.dump_python(table, mode="json")) == table


def test_session_switches_to_d6_pool_and_undoes_a_gm_action() -> None:
    state = new_session("s", "tide")
    state = switch_system(state, "d6-pool", {"stress_max": 8})
    state, _ = record_roll(
        state, Roll(()), RollContext(mode="new-clock", params={"clock": "Alarm", "size": 4})
    )
    assert state.bar().segments == (("Alarm", 0, 4),)
    state, _ = undo(state)
    assert state.tracker.clocks == ()


actions = st.one_of(
    st.tuples(st.just("tick"), st.integers(-20, 20)),
    st.tuples(st.just("stress"), st.integers(-12, 12)),
)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 16), st.lists(actions, max_size=30))
def test_clocks_and_stress_never_leave_their_bounds(
    size: int, steps: list[tuple[str, int]]
) -> None:
    table = t.add_clock(fresh(), Clock("C", size))
    for kind, amount in steps:
        if kind == "tick":
            table, _ = t.apply_clock(table, "C", amount)
        else:
            table, _ = t.add_stress(table, "K", amount)
        clock = table.clock("C")
        assert 0 <= clock.filled <= clock.size
        assert 0 <= table.stress_of("K").stress < table.settings.stress_max
        bar = SYSTEM.bar(table)
        assert bar.low <= bar.position <= bar.high
