"""Seed 004 as a rule system: graded d100 attacks, one defence per turn, side momentum.

An "attack" or "defence" throws a d100 (one D100 die, or two d10: tens then units).
GM actions with an empty tray: "end-turn" (momentum fades by one, defences are spent),
"kill" (+2), "ally-falls" (-3), "momentum" (a little for creative or coordinated play).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from tidetower.engine import grades as g
from tidetower.engine import params as p
from tidetower.engine.dice import DieKind, Roll, d100
from tidetower.engine.rules import (
    SIDES,
    BarState,
    JSONValue,
    Outcome,
    RollContext,
    RollRecord,
    RuleError,
    RuleSystem,
    Side,
)
from tidetower.engine.systems import register


@dataclass(frozen=True)
class GradedSettings:
    """Readings a table may choose differently (docs/engine.md, "Graded d100")."""

    hero_side: Side = "a"
    momentum_cap: int = 10
    chance_min: int = 5
    chance_max: int = 95
    extra_attack_penalty: int = 10


@dataclass(frozen=True)
class Defence:
    """A defender's one defence roll this turn, and how many attacks it has met."""

    name: str
    margin: int
    covered: int = 0


@dataclass(frozen=True)
class GradedFight:
    """The tracker: each side's momentum, this turn's defence rolls, the turn number."""

    settings: GradedSettings = field(default_factory=GradedSettings)
    momentum_a: int = 0
    momentum_b: int = 0
    defences: tuple[Defence, ...] = ()
    turn: int = 1

    def momentum(self, side: Side) -> int:
        """A side's momentum score."""
        return self.momentum_a if side == "a" else self.momentum_b


def settings_from(values: Mapping[str, JSONValue]) -> GradedSettings:
    """GradedSettings from GM settings; unknown keys and bad values are errors."""
    p.check_keys(
        values, [f.name for f in dataclasses.fields(GradedSettings)], "graded-d100 setting(s)"
    )
    low = p.whole(values, "chance_min", 5, minimum=0, maximum=100)
    return GradedSettings(
        hero_side=p.choice(values, "hero_side", SIDES, "a"),
        momentum_cap=p.whole(values, "momentum_cap", 10, minimum=1, maximum=50),
        chance_min=low,
        chance_max=p.whole(values, "chance_max", 95, minimum=low, maximum=100),
        extra_attack_penalty=p.whole(values, "extra_attack_penalty", 10, minimum=0, maximum=50),
    )


def add_momentum(fight: GradedFight, side: Side, amount: int) -> GradedFight:
    """The fight with `amount` added to a side's momentum, kept within ±momentum_cap."""
    cap = fight.settings.momentum_cap
    value = max(-cap, min(cap, fight.momentum(side) + amount))
    if side == "a":
        return dataclasses.replace(fight, momentum_a=value)
    return dataclasses.replace(fight, momentum_b=value)


def end_turn(fight: GradedFight) -> GradedFight:
    """A turn ends: each side's momentum fades by one toward zero; defences are spent."""

    def fade(m: int) -> int:
        return m - 1 if m > 0 else m + 1 if m < 0 else 0

    return dataclasses.replace(
        fight,
        momentum_a=fade(fight.momentum_a),
        momentum_b=fade(fight.momentum_b),
        defences=(),
        turn=fight.turn + 1,
    )


def read_d100(roll: Roll) -> int:
    """The d100 of a throw: one D100 die, or two d10 read as tens then units (10 is 0)."""
    kinds = {d.kind for d in roll.dice}
    if len(roll.dice) == 1 and kinds == {DieKind.D100}:
        return roll.dice[0].face
    if len(roll.dice) == 2 and kinds == {DieKind.D10}:
        tens, units = (d.face % 10 for d in roll.dice)
        return d100(tens * 10, units).face
    shown = ", ".join(str(d) for d in roll.dice) or "nothing"
    raise RuleError(f"a graded roll is one d100 (or two d10: tens, units); the tray shows {shown}")


ROLL_PARAMS = ("chance", "base", "tactics", "risk", "target", "gap", "rank", "target_rank", "spent")
ATTACK_PARAMS = (*ROLL_PARAMS, "defender", "undefendable", "kill")


def hit_chance(fight: GradedFight, ctx: RollContext, side: Side) -> tuple[int, dict[str, int]]:
    """The chance for this roll (clamped to the table's floor and ceiling) and its terms."""
    prm = ctx.params
    if "chance" in prm:
        given = g.check_chance(p.whole(prm, "chance"))
        return given, {"given": given}
    default = "hero" if side == fight.settings.hero_side else "enemy"
    gap = p.whole(prm, "gap", 0)
    if "rank" in prm or "target_rank" in prm:
        gap = g.rank_points(prm.get("rank", 0)) - g.rank_points(prm.get("target_rank", 0))
    parts = g.chance_parts(
        str(prm.get("base", default)),
        str(prm.get("tactics", "standard")),
        str(prm.get("risk", "safe")),
        str(prm.get("target", "standard")),
        gap,
        fight.momentum(side),
        p.whole(prm, "spent", 0),
    )
    total = sum(parts.values())
    low, high = fight.settings.chance_min, fight.settings.chance_max
    return max(low, min(high, total)), parts


def _side(ctx: RollContext) -> Side:
    if ctx.side is None:
        raise RuleError("name the roller's side ('a' or 'b')")
    return ctx.side


Step = tuple[GradedFight, dict[str, JSONValue]]


def _defence(fight: GradedFight, ctx: RollContext, roll: Roll) -> Step:
    """The defender's one roll this turn, kept to meet each incoming attack."""
    name = p.text(ctx.params, "defender", ctx.actor or None)
    if any(d.name == name for d in fight.defences):
        raise RuleError(f"{name} has already rolled a defence this turn (one per turn)")
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
    if "defender" not in ctx.params or p.flag(ctx.params, "undefendable"):
        return fight, rolled, {}
    name = p.text(ctx.params, "defender")
    held = next((d for d in fight.defences if d.name == name), None)
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


GM_ACTIONS = {
    "end-turn": (),
    "kill": ("amount",),
    "ally-falls": ("amount",),
    "momentum": ("amount",),
}
MODE_PARAMS: dict[str, tuple[str, ...]] = {
    "attack": ATTACK_PARAMS,
    "defence": (*ROLL_PARAMS, "defender"),
    **GM_ACTIONS,
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

    def check_context(self, state: GradedFight, context: RollContext) -> None:
        mode = context.mode or "attack"
        if mode not in MODE_PARAMS:
            raise RuleError(f"unknown mode {mode!r}: expected one of {', '.join(MODE_PARAMS)}")
        p.check_keys(context.params, MODE_PARAMS[mode], f"{mode} param(s)")
        if mode != "end-turn":
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
                raise RuleError(f"{mode} is a GM action: it takes no dice")
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

    def bar(self, state: GradedFight) -> BarState:
        cap = state.settings.momentum_cap
        return BarState(
            system=self.name,
            low=-2 * cap,
            high=2 * cap,
            position=state.momentum_b - state.momentum_a,
            segments=(
                ("A momentum", state.momentum_a + cap, 2 * cap),
                ("B momentum", state.momentum_b + cap, 2 * cap),
            ),
        )
