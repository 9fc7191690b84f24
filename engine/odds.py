"""Exact odds the display nodes show before a roll, one function per table question.

- pool: a d6-pool action roll (tidetower.engine.d6pool_odds)
- marks: a Tide (seed 000) Marks pool, its margin against a reply, and the Tide steps
- d100: the grade of a graded d100 roll (tidetower.engine.grades), and of an attack
  that meets a defence rolled this turn
- lots: the lot of a battle-rhythm attack (tidetower.engine.rhythm) and whether it lands
All values are exact Fractions; callers turn them into floats for display.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from itertools import product

from tidetower.engine.d6pool_odds import PoolOdds, pool_odds
from tidetower.engine.dice import DieError, DieKind
from tidetower.engine.grades import GRADES, Grade, defended, grade, grade_odds
from tidetower.engine.marks import MarksRule, pool_distribution
from tidetower.engine.rhythm import LOT_CASTERS, cast_lots, lands
from tidetower.engine.rules import RuleError
from tidetower.engine.tide import MARKS_PER_STEP, SIZES, Size

__all__ = [
    "MarksOdds",
    "PoolOdds",
    "d100_odds",
    "defended_odds",
    "landing_chance",
    "lot_chances",
    "marks_odds",
    "pool_odds",
]


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
    raise RuleError(f"unknown size {size!r}: expected one of {', '.join(SIZES)}")


def _difference(a: dict[int, Fraction], b: dict[int, Fraction]) -> dict[int, Fraction]:
    out: dict[int, Fraction] = {}
    for x, px in a.items():
        for y, py in b.items():
            out[x - y] = out.get(x - y, Fraction(0)) + px * py
    return dict(sorted(out.items()))


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
    margin = _difference(marks, reply)
    steps: dict[int, Fraction] = {}
    for m, pm in margin.items():
        s = signed_steps(m, scale)
        steps[s] = steps.get(s, Fraction(0)) + pm
    return MarksOdds(marks, reply, margin, dict(sorted(steps.items())), scale)


def d100_odds(chance: int) -> dict[Grade, Fraction]:
    """Exact chance of each grade of a d100 rolled under `chance` percent."""
    return grade_odds(chance)


def defended_odds(
    chance: int, defence_margin: int, covered: int = 0, penalty: int = 10
) -> dict[Grade, Fraction]:
    """Exact chance of each final grade of an attack that meets a defence rolled this turn."""
    odds: dict[Grade, Fraction] = dict.fromkeys(GRADES, Fraction(0))
    for roll in range(1, 101):
        margin = chance - roll
        odds[defended(grade(margin), margin, defence_margin, covered, penalty)] += Fraction(1, 100)
    return odds


_PAIRS = tuple(product(range(1, 7), repeat=2))


def lot_chances(casters: str) -> dict[int, Fraction]:
    """Exact chance of each lot of an attack whose lots are cast by `casters` (2d6 per PC)."""
    if casters not in LOT_CASTERS:
        raise RuleError(f"unknown casters {casters!r}: expected one of {', '.join(LOT_CASTERS)}")
    by_attacker, by_defender = LOT_CASTERS[casters]
    attacker = _PAIRS if by_attacker else (None,)
    defender = _PAIRS if by_defender else (None,)
    each = Fraction(1, len(attacker) * len(defender))
    odds: dict[int, Fraction] = {}
    for a, d in product(attacker, defender):
        lot = cast_lots(a, d)
        odds[lot] = odds.get(lot, Fraction(0)) + each
    return dict(sorted(odds.items()))


def landing_chance(casters: str, accuracy: int | None) -> Fraction:
    """Exact chance an attack lands at `accuracy` (None: undefended) once the lots are cast."""
    return sum((p for lot, p in lot_chances(casters).items() if lands(accuracy, lot)), Fraction(0))
