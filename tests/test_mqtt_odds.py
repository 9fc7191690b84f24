"""The declared roll's exact odds on the retained `session`, for each rule system."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from fractions import Fraction
from itertools import product
from pathlib import Path
from typing import Any

import pytest
from mqtt_fixtures import WAIT, Listener, Mosquitto, free_port
from playwright.sync_api import Page, expect

from tidetower.engine.dice import Die, DieKind, Roll
from tidetower.engine.rules import RollContext
from tidetower.engine.session import SessionState, declare, new_session, record_roll
from tidetower.engine.systems import get_system
from tidetower.engine.systems.battle_rhythm.odds import landing_chance, lot_chances
from tidetower.engine.systems.d6_pool.odds import pool_odds
from tidetower.engine.systems.graded_d100.grades import GRADES
from tidetower.engine.systems.graded_d100.odds import d100_odds, defended_odds
from tidetower.engine.systems.tide.marks import pool_distribution
from tidetower.engine.table import Table
from tidetower.mqtt.display.server import DisplayServer
from tidetower.mqtt.payloads import OddsBody, SessionPayload
from tidetower.mqtt.publisher import TablePublisher
from tidetower.mqtt.topics import Topics
from tidetower.mqtt.views import declared_odds, session_payload


def declared(
    system: str,
    context: RollContext,
    settings: Mapping[str, Any] | None = None,
) -> SessionState:
    """A fresh session of `system` with `context` declared through the engine."""
    return declare(new_session("odds", system, settings), context)


def odds_of(state: SessionState) -> OddsBody:
    """The declared roll's odds, which must be there."""
    odds = declared_odds(state)
    assert odds is not None
    return odds


def chances(odds: OddsBody) -> dict[int, float]:
    """value -> chance of the rows."""
    return {row.value: row.chance for row in odds.rows}


def same(shown: Mapping[Any, float], exact: Mapping[Any, Fraction]) -> None:
    """The shown chances are the exact ones as floats, and they sum to 1."""
    assert shown == {k: float(v) for k, v in exact.items()}
    assert abs(sum(shown.values()) - 1) < 1e-9


def d6(*faces: int) -> Roll:
    return Roll(tuple(Die(DieKind.D6, f) for f in faces))


def d100(face: int) -> Roll:
    return Roll((Die(DieKind.D100, face),))


# --- tide ------------------------------------------------------------------------------------


def test_a_tide_marks_pool_shows_each_marks_count() -> None:
    state = declared("tide", RollContext(actor="Zhao", side="a", pool=3, params={"tier": "d12"}))
    odds = odds_of(state)
    same(chances(odds), pool_distribution(3, DieKind.D12))
    assert (odds.counts, odds.dice, odds.outcomes, odds.explosion) == ("Marks", "3d12", [], None)
    assert odds.rows[0].at_least == 1.0


def tide_directions(before: int, after: Counter[int], total: int) -> dict[str, float]:
    """Where the Tide went, counted over every tray resolved, as the odds name it."""
    return {
        "Tide moves toward A's collapse": sum(n for p, n in after.items() if p < before) / total,
        "Tide holds": after[before] / total,
        "Tide moves toward B's collapse": sum(n for p, n in after.items() if p > before) / total,
    }


def test_a_linked_roll_shows_where_its_omen_takes_the_tide_as_every_tray_does() -> None:
    context = RollContext(
        actor="Zhao", side="a", pool=2, params={"tide_linked": True, "tier": "d8"}
    )
    state = declared("tide", context, {"size": "battle", "footing": "severe-a"})
    system = get_system("tide")
    after: Counter[int] = Counter()
    for *pool, omen in product(range(1, 9), range(1, 9), range(1, 21)):
        throw = Roll((*(Die(DieKind.D8, f) for f in pool), Die(DieKind.D20, omen)))
        scene, _ = system.resolve(state.tracker, context, throw, {})
        after[scene.track.marker] += 1
    shown = {o.label: o.chance for o in odds_of(state).outcomes}
    assert shown == tide_directions(state.tracker.track.marker, after, 8 * 8 * 20)
    assert shown["Tide moves toward A's collapse"] == 3 / 20  # Battle, severe-a: 1-3 against A


def test_a_reply_shows_where_the_exchange_takes_the_tide_as_every_tray_does() -> None:
    opening_context = RollContext(
        actor="Zhao", side="a", mode="tide", pool=2, params={"tier": "d6"}
    )
    opened, opening = record_roll(
        declare(new_session("odds"), opening_context),
        Roll((Die(DieKind.D6, 6), Die(DieKind.D6, 2), Die(DieKind.D20, 20))),
    )
    assert opening.outcome.facts["awaiting_reply"]
    reply = RollContext(
        actor="Mongols", side="b", reply_to=opening.id, pool=3, params={"tier": "d6"}
    )
    state = declare(opened, reply)
    system = get_system("tide")
    after: Counter[int] = Counter()
    for *pool, omen in product(range(1, 7), range(1, 7), range(1, 7), range(1, 21)):
        throw = Roll((*(Die(DieKind.D6, f) for f in pool), Die(DieKind.D20, omen)))
        scene, _ = system.resolve(state.tracker, reply, throw, {opening.id: opening})
        after[scene.track.marker] += 1
    shown = {o.label: o.chance for o in odds_of(state).outcomes}
    expected = tide_directions(state.tracker.track.marker, after, 6**3 * 20)
    assert shown.keys() == expected.keys()
    assert all(abs(shown[k] - expected[k]) < 1e-12 for k in shown)
    assert abs(sum(shown.values()) - 1) < 1e-12


def test_a_roll_that_cannot_move_the_tide_now_has_no_tide_outcomes() -> None:
    personal = RollContext(actor="Zhao", mode="unopposed", pool=2, params={"tier": "d6"})
    opening = RollContext(actor="Zhao", side="a", mode="tide", pool=2, params={"tier": "d6"})
    for context in (personal, opening):  # a personal roll; an opening awaiting its reply
        assert odds_of(declared("tide", context)).outcomes == []


def test_the_tide_names_the_dice_that_scored_and_the_omen_that_moved_it() -> None:
    context = RollContext(actor="Zhao", side="a", mode="unopposed", params={"tide_linked": True})
    throw = Roll((Die(DieKind.D6, 5), Die(DieKind.D20, 20), Die(DieKind.D6, 2), Die(DieKind.D6, 6)))
    _, record = record_roll(declare(new_session("facts"), context), throw)
    facts = record.outcome.facts
    assert (facts["scored"], facts["omen_die"]) == ([0, 3], 1)
    assert {k: facts[k] for k in ("marks", "omen", "tide_linked", "position")} == {
        "marks": 2,
        "omen": 20,
        "tide_linked": True,
        "position": 9,
    }  # the facts the Tide gave before are unchanged
    calm = Roll((Die(DieKind.D6, 1), Die(DieKind.D20, 10)))
    _, quiet = record_roll(declare(new_session("facts"), context), calm)
    assert (quiet.outcome.facts["scored"], quiet.outcome.facts["omen_die"]) == ([], None)


# --- d6-pool ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "actor", "expected"),
    [
        ({"rating": 3, "difficulty": 2}, "", (3, 2, 3)),
        ({"rating": 2, "action": "strike"}, "", (2, 1, 4)),
        ({"rating": 2, "action": "Defend", "threshold": 3}, "", (2, 1, 3)),
        ({"rating": 2, "push": "die", "assists": ["Ivo", "Ren"], "bonus": -1}, "Kira", (4, 1, 3)),
        ({"rating": 2, "push": "difficulty", "difficulty": 3}, "Kira", (2, 2, 3)),
        ({"rating": 0, "action": "strike"}, "", (0, 1, 4)),
        ({"rating": 1, "bonus": -3, "difficulty": 1}, "", (-2, 1, 3)),
    ],
)
def test_a_d6_action_roll_shows_the_pools_own_odds(
    params: dict[str, Any], actor: str, expected: tuple[int, int, int]
) -> None:
    odds = odds_of(declared("d6-pool", RollContext(actor=actor, params=params)))
    exact = pool_odds(*expected)
    same(chances(odds), exact.hits)
    same(
        {o.label: o.chance for o in odds.outcomes},
        {"bad": exact.bad, "partial": exact.partial, "full": exact.full},
    )
    assert odds.explosion == float(exact.explosion) and odds.counts == "hits"


def test_the_tables_traitor_threshold_of_three_is_the_one_read() -> None:
    context = RollContext(params={"rating": 0, "action": "strike"})
    odds = odds_of(declared("d6-pool", context, {"traitor_threshold": "three"}))
    assert odds.dice == "2d6 traitor at 3+ vs 1"
    same(chances(odds), pool_odds(0, 1, 3).hits)


@pytest.mark.parametrize("settings", [{}, {"traitor_threshold": "three"}])
def test_traitor_odds_match_every_tray_the_system_resolves(settings: dict[str, Any]) -> None:
    context = RollContext(params={"rating": 0, "action": "strike"})
    state = declared("d6-pool", context, settings)
    system = get_system("d6-pool")
    results: Counter[str] = Counter()
    for faces in product(range(1, 7), repeat=2):
        _, out = system.resolve(state.tracker, context, d6(*faces), {})
        results[str(out.facts["result"])] += 1
    shown = {o.label: o.chance for o in odds_of(state).outcomes}
    assert shown == {k: results[k] / 36 for k in ("bad", "partial", "full")}


def test_a_d6_group_roll_shows_outcomes_and_a_contest_only_hits() -> None:
    group = odds_of(
        declared(
            "d6-pool", RollContext(actor="Lea", mode="group", params={"rating": 4, "difficulty": 2})
        )
    )
    assert group.dice == "4d6 at 3+ vs 2" and len(group.outcomes) == 3
    contest = odds_of(
        declared("d6-pool", RollContext(actor="Ann", mode="contest", params={"rating": 4}))
    )
    assert contest.dice == "4d6 at 3+" and contest.outcomes == []
    same(chances(contest), pool_odds(4, 1, 3).hits)


# --- graded-d100 -----------------------------------------------------------------------------


def grade_chances(odds: OddsBody) -> dict[str, float]:
    assert [row.label for row in odds.rows] == list(GRADES)  # CRITICAL first
    return {str(row.label): row.chance for row in odds.rows}


def test_a_graded_attack_shows_each_grade_at_its_hit_chance() -> None:
    state = new_session("odds", "graded-d100")
    state, _ = record_roll(
        state, Roll(()), RollContext(side="a", mode="momentum", params={"amount": 3})
    )
    context = RollContext(actor="Sora", side="a", params={"tactics": "good", "risk": "aggressive"})
    odds = odds_of(declare(state, context))
    assert odds.dice == "d100 under 80%"  # hero 80 + good 5 - aggressive 8 + momentum 3
    same(grade_chances(odds), d100_odds(80))
    assert odds.rows[2].at_least == pytest.approx(0.8)  # SOLID or better: the roll lands


def test_a_graded_chance_is_clamped_to_the_tables_ceiling() -> None:
    context = RollContext(side="a", params={"tactics": "brilliant", "target": "easy"})
    odds = odds_of(declared("graded-d100", context))
    same(grade_chances(odds), d100_odds(95))


def test_an_attack_meeting_a_defence_shows_the_defended_grades() -> None:
    state = new_session("odds", "graded-d100")
    state, _ = record_roll(
        state, d100(30), RollContext(actor="Oda", side="b", mode="defence", params={"chance": 60})
    )
    context = RollContext(actor="Sora", side="a", params={"chance": 70, "defender": "Oda"})
    state = declare(state, context)
    same(grade_chances(odds_of(state)), defended_odds(70, 30, 0, 10))
    system = get_system("graded-d100")
    grades: Counter[str] = Counter()
    for face in range(1, 101):
        _, out = system.resolve(state.tracker, context, d100(face), {})
        grades[str(out.facts["grade"])] += 1
    assert grade_chances(odds_of(state)) == {g: grades[g] / 100 for g in GRADES}


def test_a_defence_roll_shows_its_own_grades() -> None:
    context = RollContext(actor="Oda", side="b", mode="defence", params={"chance": 40})
    same(grade_chances(odds_of(declared("graded-d100", context))), d100_odds(40))


# --- battle-rhythm ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "casters", "acc"),
    [
        ({}, "attacker", None),
        ({"offense": 3, "defense": 2, "casters": "both"}, "both", 1),
        ({"offense": 2, "defense": 4, "casters": "defender"}, "defender", -2),
    ],
)
def test_a_rhythm_attack_shows_its_lots_and_whether_it_lands(
    params: dict[str, Any], casters: str, acc: int | None
) -> None:
    odds = odds_of(declared("battle-rhythm", RollContext(actor="Ash", params=params)))
    same(chances(odds), lot_chances(casters))
    lands = landing_chance(casters, acc)
    same({o.label: o.chance for o in odds.outcomes}, {"lands": lands, "misses": 1 - lands})
    assert odds.rows[-1].label == "attacker CRIT / defender FUMBLE"


def test_rhythm_landing_odds_match_every_tray_the_system_resolves() -> None:
    context = RollContext(mode="attack", params={"offense": 3, "defense": 3, "casters": "both"})
    state = declared("battle-rhythm", context)
    system = get_system("battle-rhythm")
    landed = sum(
        bool(system.resolve(state.tracker, context, d6(*faces), {})[1].facts["lands"])
        for faces in product(range(1, 7), repeat=4)
    )
    assert odds_of(state).outcomes[0].chance == landed / 6**4


# --- no odds ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("system", "context"),
    [
        ("tide", RollContext()),
        ("tide", RollContext(pool=2, params={"tier": "d8", "marks": 3})),
        ("d6-pool", RollContext()),
        ("d6-pool", RollContext(mode="new-clock", params={"clock": "Alarm"})),
        ("d6-pool", RollContext(mode="resist", params={"attribute": 2})),
        ("graded-d100", RollContext()),
        ("graded-d100", RollContext(mode="end-turn")),
        ("battle-rhythm", RollContext(actor="Ash", mode="declare", params={"effort": 3})),
        ("tide-of-battle", RollContext(side="a", params={"attack": 3, "defence": 15})),
    ],
)
def test_no_odds_where_nothing_is_thrown_or_counted(system: str, context: RollContext) -> None:
    fresh = context == RollContext()  # nothing declared yet: a new session's declaration
    state = new_session("odds", system) if fresh else declared(system, context)
    assert declared_odds(state) is None


def test_the_new_fields_are_optional_for_a_v1_reader() -> None:
    state = declared("d6-pool", RollContext(params={"rating": 2}))
    body = session_payload(state).model_dump(mode="json")
    old = {k: v for k, v in body["odds"].items() if k not in ("outcomes", "explosion")}
    old["rows"] = [{k: v for k, v in row.items() if k != "label"} for row in old["rows"]]
    assert SessionPayload.model_validate(body | {"odds": old}).v == 1


# --- on a real broker ------------------------------------------------------------------------


def test_the_retained_session_carries_d6_pool_odds(mosquitto: Mosquitto, tmp_path: Path) -> None:
    settings = mosquitto.settings()
    topics = Topics.of(settings)
    context = RollContext(actor="Kira", params={"rating": 3, "difficulty": 2})
    with TablePublisher(Table(tmp_path / "s.db", system="d6-pool"), settings) as publisher:
        publisher.table.declare(context)
        assert publisher.wait_delivered(WAIT)
        with Listener(settings, topics.session) as late:
            message = late.wait_for(lambda m: m.topic == topics.session)
    session = json.loads(message.payload)
    exact = pool_odds(3, 2, 3)
    odds = session["odds"]
    assert message.retain and session["declared"]["actor"] == "Kira"
    assert odds["counts"] == "hits" and odds["dice"] == "3d6 at 3+ vs 2"
    assert {row["value"]: row["chance"] for row in odds["rows"]} == {
        k: float(v) for k, v in exact.hits.items()
    }
    assert [o["label"] for o in odds["outcomes"]] == ["bad", "partial", "full"]
    assert odds["outcomes"][2]["chance"] == float(exact.full)
    assert odds["explosion"] == float(exact.explosion)


def test_the_page_shows_outcomes_explosions_and_grades(
    mosquitto: Mosquitto, tmp_path: Path, page: Page
) -> None:
    settings = mosquitto.settings()
    table = Table(tmp_path / "s.db", system="d6-pool")
    with TablePublisher(table, settings), DisplayServer(settings, port=free_port()) as server:
        page.goto(server.url)
        table.declare(RollContext(actor="Kira", params={"rating": 3, "difficulty": 2}))
        odds = page.locator("#odds")
        exact = pool_odds(3, 2, 3)
        mean = round(float(sum(k * p for k, p in exact.hits.items())), 4)
        expect(odds.locator("p")).to_have_text(f"Odds for 3d6 at 3+ vs 2: mean {mean} hits")
        expect(odds.locator(".outcome")).to_have_count(4)  # bad, partial, full, explosion
        full = f"{float(exact.full) * 100:.1f}%"
        expect(odds.locator(".outcome", has_text="full")).to_contain_text(full)
        expect(odds.locator(".outcome", has_text="6s explode")).to_contain_text("7.4%")
        table.switch_system("graded-d100")
        table.declare(RollContext(actor="Sora", side="a", params={"chance": 70}))
        expect(odds.locator("p")).to_have_text("Odds for d100 under 70%")
        expect(odds.locator(".row").first).to_contain_text("CRITICAL")
        expect(odds.locator(".row", has_text="SOLID")).to_contain_text("12.0%")
        page.screenshot(path=str(tmp_path / "odds.png"))
