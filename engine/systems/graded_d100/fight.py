"""The graded-d100 tracker (seed 004): side momentum, this turn's defences, the hit chance."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tidetower.engine import params as p
from tidetower.engine.describe import Field, read_fields
from tidetower.engine.dice import DieKind, Roll, d100
from tidetower.engine.rules import SIDES, JSONValue, RollContext, RuleError, Side
from tidetower.engine.systems.graded_d100 import grades as g


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


SETTINGS = (
    Field("hero_side", "Heroes' side", "choice", SIDES, "a", help="their base chance is 80%"),
    Field("momentum_cap", "Momentum cap", default=10, minimum=1, maximum=50),
    Field("chance_min", "Lowest chance", default=5, minimum=0, maximum=100),
    Field("chance_max", "Highest chance", default=95, minimum=0, maximum=100),
    Field("extra_attack_penalty", "Defence penalty", default=10, minimum=0, maximum=50),
)
"""GradedSettings as the set-up form shows it (declare.py's DESCRIPTION.settings)."""


def settings_from(values: Mapping[str, JSONValue]) -> GradedSettings:
    """GradedSettings from GM settings, read by SETTINGS; unknown keys and bad values are
    errors, and so is a highest chance below the lowest."""
    read: Any = read_fields(SETTINGS, values, "graded-d100 setting(s)")
    p.whole(read, "chance_max", minimum=read["chance_min"])
    return GradedSettings(**read)


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
    raise RuleError(
        f"a graded roll is one d100 (or two d10: tens, units); the tray shows {shown}",
        field="dice",
    )


ROLL_PARAMS = ("chance", "base", "tactics", "risk", "target", "gap", "rank", "target_rank", "spent")


def hit_chance(fight: GradedFight, ctx: RollContext, side: Side) -> tuple[int, dict[str, int]]:
    """The chance for this roll (clamped to the table's floor and ceiling) and its terms."""
    prm = ctx.params
    if "chance" in prm:
        given = g.check_chance(p.whole(prm, "chance"))
        return given, {"given": given}
    default = "hero" if side == fight.settings.hero_side else "enemy"
    gap = p.whole(prm, "gap", 0)
    if "rank" in prm or "target_rank" in prm:
        gap = g.rank_points(prm.get("rank", 0)) - g.rank_points(
            prm.get("target_rank", 0), "target_rank"
        )
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


def defender(ctx: RollContext) -> str | None:
    """The defender a declared attack is aimed at, unless it cannot be defended."""
    if "defender" not in ctx.params or p.flag(ctx.params, "undefendable"):
        return None
    return p.text(ctx.params, "defender")


def defence_of(fight: GradedFight, name: str) -> Defence | None:
    """`name`'s defence roll this turn, if they have made one."""
    return next((d for d in fight.defences if d.name == name), None)
