"""Seed 004 as a rule system: graded d100 attacks, one defence per turn, side momentum.

An "attack" or "defence" throws a d100 (one D100 die, or two d10: tens then units).
GM actions with an empty tray: "end-turn" (momentum fades by one, defences are spent),
"kill" (+2), "ally-falls" (-3), "momentum" (a little for creative or coordinated play).
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence

from tidetower.engine import params as p
from tidetower.engine.chances import Odds
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
    Side,
    attack_in_turn,
)
from tidetower.engine.systems import register
from tidetower.engine.systems.graded_d100 import grades as g
from tidetower.engine.systems.graded_d100.declare import (
    DESCRIPTION,
    GM_ACTIONS,
    MODE_PARAMS,
    SIDELESS,
)
from tidetower.engine.systems.graded_d100.fight import (
    Defence,
    GradedFight,
    add_momentum,
    defence_of,
    defender,
    end_turn,
    hit_chance,
    read_d100,
    settings_from,
)
from tidetower.engine.systems.graded_d100.odds import PLACE_OF, declared_grades


def _side(ctx: RollContext) -> Side:
    if ctx.side is None:
        raise RuleError("name the roller's side ('a' or 'b')", field="side")
    return ctx.side


Step = tuple[GradedFight, dict[str, JSONValue]]


def _defence(fight: GradedFight, ctx: RollContext, roll: Roll) -> Step:
    """The defender's one roll this turn, kept to meet each incoming attack."""
    name = p.text(ctx.params, "defender", ctx.actor or None)
    if any(d.name == name for d in fight.defences):
        raise RuleError(
            f"{name} has already rolled a defence this turn (one per turn)",
            field="defender" if "defender" in ctx.params else "actor",
        )
    chance, parts = hit_chance(fight, ctx, _side(ctx))
    face = read_d100(roll)
    margin = chance - face
    fight = dataclasses.replace(fight, defences=(*fight.defences, Defence(name, margin)))
    return fight, {
        "defender": name,
        "chance": chance,
        "parts": dict(parts),
        "roll": face,
        "margin": margin,
        "grade": g.grade(margin),
    }


def _meet_defence(
    fight: GradedFight, ctx: RollContext, rolled: g.Grade, margin: int
) -> tuple[GradedFight, g.Grade, dict[str, JSONValue]]:
    name = defender(ctx)
    if name is None:
        return fight, rolled, {}
    held = defence_of(fight, name)
    if held is None:
        return fight, rolled, {"defence": f"{name} has not rolled a defence this turn"}
    final = g.defended(
        rolled, margin, held.margin, held.covered, fight.settings.extra_attack_penalty
    )
    kept = tuple(
        dataclasses.replace(d, covered=d.covered + 1) if d.name == name else d
        for d in fight.defences
    )
    return (
        dataclasses.replace(fight, defences=kept),
        final,
        {"defence_margin": held.margin, "attacks_covered_before": held.covered},
    )


def _attack(fight: GradedFight, ctx: RollContext, roll: Roll) -> Step:
    """An attack: chance, d100, grade, the defence it meets, and side momentum."""
    side = _side(ctx)
    chance, parts = hit_chance(fight, ctx, side)
    face = read_d100(roll)
    rolled = g.grade(chance - face)
    fight, final, met = _meet_defence(fight, ctx, rolled, chance - face)
    change = g.MOMENTUM[final] + (g.KILL if p.flag(ctx.params, "kill") else 0)
    fight = add_momentum(fight, side, change)
    return fight, met | {
        "chance": chance,
        "parts": dict(parts),
        "roll": face,
        "margin": chance - face,
        "rolled_grade": rolled,
        "grade": final,
        "damage": float(g.DAMAGE[final]),
        "momentum_change": change,
        "momentum": fight.momentum(side),
    }


def gm_action(fight: GradedFight, ctx: RollContext) -> GradedFight:
    """The fight after a GM action (no dice) named by ctx.mode."""
    if ctx.mode == "end-turn":
        return end_turn(fight)
    default = {"kill": g.KILL, "ally-falls": g.ALLY_FALLS, "momentum": None}[ctx.mode]
    return add_momentum(fight, _side(ctx), p.whole(ctx.params, "amount", default, -10, 10))


@register
class GradedSystem(RuleSystem[GradedFight]):
    """Seed 004: d100 under a graded hit chance, with shared side momentum."""

    name = "graded-d100"
    state_type = GradedFight

    def initial_state(self, settings: Mapping[str, JSONValue]) -> GradedFight:
        return GradedFight(settings=settings_from(settings))

    def describe(self) -> Description:
        return DESCRIPTION

    def check_context(self, state: GradedFight, context: RollContext) -> None:
        mode = p.mode(context.mode, MODE_PARAMS, "attack")
        p.check_keys(context.params, MODE_PARAMS[mode], f"{mode} param(s)")
        if mode not in SIDELESS:
            _side(context)

    def resolve(
        self,
        state: GradedFight,
        context: RollContext,
        roll: Roll,
        earlier: Mapping[str, RollRecord],
    ) -> tuple[GradedFight, Outcome]:
        self.check_context(state, context)
        mode = context.mode or "attack"
        if mode in GM_ACTIONS:
            if roll.dice:
                raise RuleError(f"{mode} is a GM action: it takes no dice", field="dice")
            fight = gm_action(state, context)
            facts: dict[str, JSONValue] = {
                "momentum_a": fight.momentum_a,
                "momentum_b": fight.momentum_b,
                "turn": fight.turn,
            }
            summary = f"{mode}: momentum A {fight.momentum_a}, B {fight.momentum_b}"
        elif mode == "defence":
            fight, facts = _defence(state, context, roll)
            summary = f"{facts['defender']} defends: {facts['grade']} (margin {facts['margin']})"
        else:
            fight, facts = _attack(state, context, roll)
            summary = (
                f"{context.actor or 'attack'}: {facts['roll']} vs {facts['chance']}% "
                f"→ {facts['grade']} x{facts['damage']:g}"
            )
        return fight, Outcome(summary, facts | {"mode": mode})

    def odds(
        self, state: GradedFight, context: RollContext, earlier: Mapping[str, RollRecord]
    ) -> Odds | None:
        return declared_grades(state, context)

    def scored(self, outcome: Outcome) -> int | None:
        """The final grade's place (BACKFIRE 0 .. CRITICAL 6), as its odds count it."""
        return PLACE_OF.get(str(outcome.facts.get("grade")))

    def practice_turn(
        self,
        state: GradedFight,
        history: Sequence[RollRecord],
        rng: random.Random,
        options: Mapping[str, JSONValue],
    ) -> PracticeTurn:
        """The sides take turns to attack, each with a d100."""
        return attack_in_turn(history, DieKind.D100)

    def bar(self, state: GradedFight) -> BarState:
        cap = state.settings.momentum_cap
        return BarState(
            system=self.name,
            low=-2 * cap,
            high=2 * cap,
            position=state.momentum_b - state.momentum_a,
            label_a="A",
            label_b="B",
            segments=(
                ("A momentum", state.momentum_a + cap, 2 * cap),
                ("B momentum", state.momentum_b + cap, 2 * cap),
            ),
        )
