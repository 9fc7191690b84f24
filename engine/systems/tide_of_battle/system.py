"""Seed 001 as a rule system: the Tide of Battle's bonus to attacks and defences.

GM actions (shift, recount, demoralise, restore) come through `resolve` with an empty
tray; an "attack" roll reports the tide's bonus to the attack and to the defence.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence

from tidetower.engine import params as p
from tidetower.engine.describe import Description
from tidetower.engine.dice import DieKind, Roll
from tidetower.engine.rules import (
    BarState,
    JSONValue,
    Outcome,
    PracticeTurn,
    RollContext,
    RollRecord,
    RuleError,
    RuleSystem,
    attack_in_turn,
)
from tidetower.engine.systems import register
from tidetower.engine.systems.tide_of_battle.declare import DESCRIPTION, MODE_PARAMS, THROWS
from tidetower.engine.systems.tide_of_battle.tide import (
    BattleTide,
    demoralise,
    position,
    recount,
    restore,
    rosters,
    shift,
    start,
    two_sides,
    walk,
)


def _side(tide: BattleTide, context: RollContext) -> int:
    value = context.params.get("side", context.side)
    if value is None:
        raise RuleError("name the side ('a', 'b', …) in side or params.side", field="side")
    return tide.side_index(str(value))


def _creature(context: RollContext) -> str:
    return p.text(context.params, "creature", context.actor or None)


def _attack(tide: BattleTide, context: RollContext, roll: Roll) -> dict[str, JSONValue]:
    """An attack roll: the faces, the attacker's modifier and tide bonus, the defence's."""
    if not roll.dice:
        raise RuleError("an attack roll needs dice in the tray", field="dice")
    side = _side(tide, context)
    target = (
        tide.side_index(p.text(context.params, "target"), "target")
        if "target" in context.params
        else None
    )
    if target is None:
        two_sides(tide, "an attack without a target side", "target")
        target = 1 - side
    faces = sum(d.face for d in roll.dice)
    total = faces + p.whole(context.params, "attack", 0) + tide.bonus(side)
    facts: dict[str, JSONValue] = {
        "faces": faces,
        "attack_bonus": tide.bonus(side),
        "defence_bonus": tide.bonus(target),
        "total": total,
    }
    if "defence" in context.params:
        defence = p.whole(context.params, "defence") + tide.bonus(target)
        facts |= {"defence": defence, "hit": total >= defence}
    return facts


def _steps(context: RollContext) -> int:
    return p.whole(context.params, "steps", 1, minimum=0)


def gm_action(tide: BattleTide, context: RollContext) -> BattleTide:
    """The tide after a GM action named by context.mode (no dice)."""
    prm, mode = context.params, context.mode
    if mode == "shift":
        return shift(tide, _side(tide, context), _steps(context), p.text(prm, "cause", "shift"))
    if mode == "recount":
        return recount(tide, *rosters(prm.get("numbers")))
    if mode == "demoralise":
        favour = tide.side_index(p.text(prm, "favour"), "favour") if "favour" in prm else None
        return demoralise(tide, _creature(context), _side(tide, context), favour)
    return restore(tide, _creature(context))


@register
class BattleTideSystem(RuleSystem[BattleTide]):
    """Seed 001: the Tide of Battle, a bonus to attacks and defences of the favoured side.

    No odds: an attack adds whatever dice are thrown, which the declaration does not name.
    """

    name = "tide-of-battle"
    state_type = BattleTide

    def initial_state(self, settings: Mapping[str, JSONValue]) -> BattleTide:
        return start(settings)

    def describe(self) -> Description:
        return DESCRIPTION

    def check_context(self, state: BattleTide, context: RollContext) -> None:
        mode = p.mode(context.mode, MODE_PARAMS, "attack")
        p.check_keys(context.params, MODE_PARAMS[mode], f"{mode} param(s)")
        if mode in ("attack", "shift", "demoralise"):
            _side(state, context)

    def resolve(
        self, state: BattleTide, context: RollContext, roll: Roll, earlier: Mapping[str, RollRecord]
    ) -> tuple[BattleTide, Outcome]:
        self.check_context(state, context)
        mode = context.mode or "attack"
        if mode in THROWS:
            facts = _attack(state, context, roll)
            tide = state
        else:
            if roll.dice:
                raise RuleError(
                    f"{mode} is a GM action: it takes no dice, the tray shows {len(roll.dice)}",
                    field="dice",
                )
            tide = gm_action(dataclasses.replace(state, last_motion=None), context)
            facts = (
                {"path": walk(state, _side(state, context), _steps(context))}
                if mode == "shift"
                else {}
            )
        motions = (tide.last_motion,) if tide.last_motion and tide is not state else ()
        facts |= {"mode": mode, "tide": tide.describe(), "position": position(tide)}
        summary = f"{mode}: the tide stands at {tide.describe()}"
        if "total" in facts:
            summary = (
                f"attack {facts['total']}"
                + (
                    f" vs defence {facts['defence']}: {'hit' if facts['hit'] else 'miss'}"
                    if "hit" in facts
                    else ""
                )
                + f" (tide {tide.describe()})"
            )
        return tide, Outcome(summary, facts, motions)

    def practice_turn(
        self,
        state: BattleTide,
        history: Sequence[RollRecord],
        rng: random.Random,
        options: Mapping[str, JSONValue],
    ) -> PracticeTurn:
        """The sides take turns to attack, each with a d20."""
        return attack_in_turn(history, DieKind.D20)

    def bar(self, state: BattleTide) -> BarState:
        reach = max(state.span, state.steps)
        if len(state.sides) == 2:
            return BarState(
                system=self.name,
                low=-reach,
                high=reach,
                position=state.signed,
                label_a=state.sides[0],
                label_b=state.sides[1],
                last_motion=state.last_motion,
            )
        leader = state.sides[state.favoured] if state.favoured is not None else "Neutral"
        return BarState(
            system=self.name,
            low=-reach,
            high=reach,
            position=-state.steps,
            label_a=leader,
            label_b="the others",
            last_motion=state.last_motion,
        )
