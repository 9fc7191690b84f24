"""Engine state and outbox bodies turned into the wire payloads of tidetower.mqtt.payloads."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from tidetower.engine import params as p
from tidetower.engine.codec import dump
from tidetower.engine.d6pool_odds import traitor_dice
from tidetower.engine.d6pool_table import D6Table
from tidetower.engine.dice import DieError
from tidetower.engine.grades import GRADES, Grade
from tidetower.engine.marks import pool_distribution
from tidetower.engine.odds import (
    PoolOdds,
    d100_odds,
    defended_odds,
    landing_chance,
    lot_chances,
    pool_odds,
)
from tidetower.engine.rhythm import LOT_NAMES, BattleRhythm, accuracy, lot_dice
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.session import SessionState
from tidetower.engine.systems.d6pool import hit_threshold, plan_action
from tidetower.engine.systems.graded import Defence, GradedFight, hit_chance
from tidetower.engine.systems.rhythm import CASTERS
from tidetower.engine.systems.tide import TideScene
from tidetower.mqtt.payloads import (
    DieRead,
    HistoryItem,
    MotionBody,
    OddsBody,
    OddsRow,
    OutcomeBody,
    OutcomeChance,
    Phase,
    RollEvent,
    SessionPayload,
    SideBody,
    TidePayload,
)

HISTORY_LENGTH = 20
ReadingJson = Sequence[Mapping[str, Any]]
"""A reading's dice in their JSON form (`tray.DieRead.to_dict()`), as a roll's record keeps them."""


def tide_payload(bar: Mapping[str, Any]) -> TidePayload:
    """The retained `tide` from a dumped BarState."""
    known = {k: v for k, v in bar.items() if k in TidePayload.model_fields}
    return TidePayload(length=bar["high"] - bar["low"], **known)


def declared_odds(state: SessionState) -> OddsBody | None:
    """Exact odds of the declared roll, where its system can work them out; else None."""
    work_out = ODDS_BY_SYSTEM.get(state.system)
    if work_out is None or state.declared == RollContext():
        return None
    try:
        return work_out(state.tracker, state.declared)
    except (RuleError, DieError):  # a roll the engine cannot count (e.g. over 60 dice)
        return None


def _rows(
    dist: Mapping[int, Fraction], labels: Mapping[int, str] | None = None, best_first: bool = False
) -> list[OddsRow]:
    """One row per value: its chance, the chance of it or more, and its name if it has one."""
    order = sorted(dist, reverse=best_first)
    return [
        OddsRow(
            value=v,
            chance=float(dist[v]),
            at_least=float(sum(c for w, c in dist.items() if w >= v)),
            label=labels[v] if labels else None,
        )
        for v in order
    ]


def _counted(counts: str, dice: str, dist: Mapping[int, Fraction], **extra: Any) -> OddsBody:
    """An OddsBody for a distribution of `counts`, ascending, with its mean."""
    mean = float(sum(v * c for v, c in dist.items()))
    return OddsBody(counts=counts, dice=dice, rows=_rows(dist), mean=round(mean, 4), **extra)


def _chances(*named: tuple[str, Fraction]) -> list[OutcomeChance]:
    """Outcome rows from (label, exact chance) pairs."""
    return [OutcomeChance(label=label, chance=float(chance)) for label, chance in named]


def tide_odds(scene: TideScene, declared: RollContext) -> OddsBody | None:
    """A Tide Marks pool (tier and pool declared, no Marks entered): each Marks count."""
    if declared.marks is not None or declared.tier is None or not declared.pool:
        return None
    dist = pool_distribution(declared.pool, declared.tier, scene.marks_rule)
    return _counted("Marks", f"{declared.pool}{declared.tier.value}", dist)


def _pool_dice(odds: PoolOdds, banded: bool) -> str:
    """'3d6 at 4+ vs 2', '2d6 traitor at 3+ vs 1'; no difficulty for a contest or auction."""
    dice = f"{traitor_dice(odds.rating)}d6 traitor" if odds.traitor else f"{odds.rating}d6"
    return f"{dice} at {odds.threshold}+" + (f" vs {odds.difficulty}" if banded else "")


def d6_pool_odds(table: D6Table, declared: RollContext) -> OddsBody | None:
    """A pool roll's hits and explosion; for an action or group roll, bad/partial/full too."""
    mode = declared.mode or "action"
    if mode not in POOL_MODES:
        return None  # resistance, fortune and GM actions: no pool odds
    plan = plan_action(declared, table.settings)
    odds = pool_odds(plan.rating, plan.difficulty, hit_threshold(plan, table.settings))
    banded = mode in BANDED_MODES
    outcomes = (
        _chances(("bad", odds.bad), ("partial", odds.partial), ("full", odds.full))
        if banded
        else []
    )
    return _counted(
        "hits",
        _pool_dice(odds, banded),
        odds.hits,
        outcomes=outcomes,
        explosion=float(odds.explosion),
    )


def defence_met(fight: GradedFight, declared: RollContext) -> Defence | None:
    """The defence a declared attack meets: the named defender's roll this turn, if any."""
    prm = declared.params
    if "defender" not in prm or p.flag(prm, "undefendable"):
        return None
    return next((d for d in fight.defences if d.name == prm["defender"]), None)


def grade_chances(fight: GradedFight, declared: RollContext, chance: int) -> dict[Grade, Fraction]:
    """Each grade's chance: the d100 under `chance`, then the defence an attack meets."""
    held = defence_met(fight, declared) if (declared.mode or "attack") == "attack" else None
    if held is None:
        return d100_odds(chance)
    return defended_odds(chance, held.margin, held.covered, fight.settings.extra_attack_penalty)


def graded_odds(fight: GradedFight, declared: RollContext) -> OddsBody | None:
    """An attack's or defence's hit chance and each grade, CRITICAL first."""
    if (declared.mode or "attack") not in ("attack", "defence") or declared.side is None:
        return None
    chance, _ = hit_chance(fight, declared, declared.side)
    grades = grade_chances(fight, declared, chance)
    places = {len(GRADES) - 1 - i: name for i, name in enumerate(GRADES)}
    dist = {place: grades[name] for place, name in places.items()}
    mean = float(sum(v * c for v, c in dist.items()))
    return OddsBody(
        counts="grade",
        dice=f"d100 under {chance}%",
        rows=_rows(dist, places, best_first=True),
        mean=round(mean, 4),
    )


def rhythm_odds(scene: BattleRhythm, declared: RollContext) -> OddsBody | None:
    """An attack's Cast Lots (attacker's side, CRIT +2 .. FUMBLE -2) and whether it lands."""
    if declared.mode not in ("", "attack"):
        return None  # the Count clock's GM actions throw no dice
    prm = declared.params
    casters = p.choice(prm, "casters", CASTERS, "attacker")
    defense = p.optional_whole(prm, "defense")
    acc = None if defense is None else accuracy(p.whole(prm, "offense", 0), defense)
    lots, lands = lot_chances(casters), landing_chance(casters, acc)
    mean = float(sum(v * c for v, c in lots.items()))
    return OddsBody(
        counts="lot",
        dice=f"{lot_dice(casters)}d6 lots ({casters})",
        rows=_rows(lots, LOT_NAMES),
        mean=round(mean, 4),
        outcomes=_chances(("lands", lands), ("misses", 1 - lands)),
    )


# tide-of-battle has none: its attack adds whatever dice are thrown, which the
# declaration does not name, and the engine has no odds for it.
ODDS_BY_SYSTEM: dict[str, Callable[[Any, RollContext], OddsBody | None]] = {
    "tide": tide_odds,
    "d6-pool": d6_pool_odds,
    "graded-d100": graded_odds,
    "battle-rhythm": rhythm_odds,
}
POOL_MODES = ("action", "group", "contest", "auction")
BANDED_MODES = ("action", "group")


def session_payload(
    state: SessionState, readings: Mapping[str, ReadingJson] | None = None
) -> SessionPayload:
    """The retained `session`: system, sides, declared next roll, its odds, recent rolls."""
    bar = state.bar()
    history = [
        HistoryItem(
            id=r.id, seq=r.seq, summary=r.outcome.summary, dice=[str(d) for d in r.roll.dice]
        )
        for r in state.history[-HISTORY_LENGTH:]
    ]
    return SessionPayload(
        session_id=state.session_id,
        system=state.system,
        sides={
            "a": SideBody(label=bar.label_a, colour=bar.colour_a),
            "b": SideBody(label=bar.label_b, colour=bar.colour_b),
        },
        declared=dump(state.declared),
        odds=declared_odds(state),
        history=history,
        last_roll=_last_roll(state, readings or {}),
    )


def _last_roll(state: SessionState, readings: Mapping[str, ReadingJson]) -> RollEvent | None:
    last = state.last
    if last is None:
        return None
    return roll_event(dump(last), "result", readings.get(last.id))


def dice_read(dice: Sequence[Mapping[str, Any]], reading: ReadingJson | None) -> list[DieRead]:
    """The record's dice, with confidence and box from the reading when it matches them."""
    read = [DieRead(kind=d["kind"], value=d["face"]) for d in dice]
    if reading is None or len(reading) != len(read):
        return read
    seen = [DieRead.from_reading(item) for item in reading]
    if [(d.kind, d.value) for d in seen] != [(d.kind, d.value) for d in read]:
        return read  # corrected by hand since: the camera's boxes no longer belong
    return seen


def roll_event(
    record: Mapping[str, Any], phase: Phase, reading: ReadingJson | None = None
) -> RollEvent:
    """A `roll` event (result or undone) from a dumped RollRecord."""
    outcome = record["outcome"]
    motions = [MotionBody(**m) for m in outcome.get("motions", [])]
    return RollEvent(
        event=f"{record['id']}:{phase}",
        id=record["id"],
        seq=record["seq"],
        phase=phase,
        system=record["system"],
        roller=record["roll"].get("roller", ""),
        context=record["context"],
        dice=dice_read(record["roll"]["dice"], reading),
        outcome=OutcomeBody(summary=outcome["summary"], facts=outcome.get("facts", {})),
        motions=motions,
    )


def seen_event(state: SessionState, reading: ReadingJson) -> RollEvent:
    """The `new` event for dice just seen, under the id the roll will be recorded with."""
    roll_id = f"{state.session_id}-{state.next_seq}"
    return RollEvent(
        event=f"{roll_id}:new",
        id=roll_id,
        seq=state.next_seq,
        phase="new",
        system=state.system,
        context=dump(state.declared),
        dice=[DieRead.from_reading(item) for item in reading],
    )
