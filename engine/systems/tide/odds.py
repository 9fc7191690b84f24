"""Exact odds of a Tide Marks pool: its Marks, its margin against a reply, the Tide steps."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from tidetower.engine.chances import Odds, difference
from tidetower.engine.dice import DieError, DieKind
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.systems.tide.marks import MarksRule, pool_distribution
from tidetower.engine.systems.tide.track import MARKS_PER_STEP, SIZES, Size


@dataclass(frozen=True)
class MarksOdds:
    """Exact chances of a Marks pool against a reply: Marks, margin, signed Tide steps."""

    marks: dict[int, Fraction]
    reply: dict[int, Fraction]
    margin: dict[int, Fraction]
    steps: dict[int, Fraction]
    size: Size


def signed_steps(margin: int, size: Size) -> int:
    """Tide steps of a margin: floor(|margin| / Marks per step), toward the winner."""
    steps = abs(margin) // MARKS_PER_STEP[size]
    return steps if margin >= 0 else -steps


def _size(size: str) -> Size:
    for known in SIZES:
        if size == known:
            return known
    raise RuleError(f"unknown size {size!r}: expected one of {', '.join(SIZES)}", field="size")


def marks_odds(
    dice: int,
    tier: DieKind,
    vs: int = 0,
    vs_tier: DieKind | None = None,
    size: str = "skirmish",
    rule: MarksRule | None = None,
) -> MarksOdds:
    """Odds of `dice` tier dice against a reply of `vs` dice (0: unopposed, margin = Marks)."""
    scale = _size(size)
    for name, count in (("dice", dice), ("vs", vs)):
        if count < 0:
            raise DieError(f"{name} cannot be negative, got {count}")
    rule = rule or MarksRule()
    marks = pool_distribution(dice, tier, rule)
    reply = pool_distribution(vs, vs_tier or tier, rule)
    margin = difference(marks, reply)
    steps: dict[int, Fraction] = {}
    for m, pm in margin.items():
        s = signed_steps(m, scale)
        steps[s] = steps.get(s, Fraction(0)) + pm
    return MarksOdds(marks, reply, margin, dict(sorted(steps.items())), scale)


def declared_marks(context: RollContext, rule: MarksRule) -> Odds | None:
    """Each Marks count of a declared pool (tier and pool named, no Marks entered)."""
    if context.marks is not None or context.tier is None or not context.pool:
        return None
    dist = pool_distribution(context.pool, context.tier, rule)
    return Odds("Marks", f"{context.pool}{context.tier.value}", dist)
