"""Exact odds of a Tide Marks pool: its Marks, its margin against a reply, the Tide steps."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from tidetower.engine.chances import Odds, difference
from tidetower.engine.dice import DieError, DieKind
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.systems.tide.declare import entered_marks, tier
from tidetower.engine.systems.tide.marks import MarksRule, pool_distribution
from tidetower.engine.systems.tide.track import (
    MARKS_PER_STEP,
    OMEN_DIE_SIDES,
    SIZES,
    Size,
    TideTrack,
)


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
    die = tier(context)
    if entered_marks(context) is not None or die is None or not context.pool:
        return None
    dist = pool_distribution(context.pool, die, rule)
    return Odds("Marks", f"{context.pool}{die.value}", dist)


def omen_bands(track: TideTrack) -> dict[int, Fraction]:
    """One d20 face for each way the Omen can fall (toward A's collapse, toward B's, in
    neither band) with the chance the Omen falls that way."""
    bands = track.omen_faces()
    neither = [f for f in range(1, OMEN_DIE_SIDES + 1) if f not in bands["a"] + bands["b"]]
    ways = {
        bands["a"][0]: len(bands["a"]),
        bands["b"][0]: len(bands["b"]),
        neither[0]: len(neither),
    }
    return {face: Fraction(count, OMEN_DIE_SIDES) for face, count in ways.items()}


def tide_directions(
    before: int, after: Mapping[int, Fraction], label_a: str, label_b: str
) -> dict[str, Fraction]:
    """The chance the Tide moves toward each side's collapse or holds, from the chance of
    each position after the roll (A's collapse is position 0)."""
    return {
        f"Tide moves toward {label_a}'s collapse": sum(
            (c for p, c in after.items() if p < before), Fraction(0)
        ),
        "Tide holds": after.get(before, Fraction(0)),
        f"Tide moves toward {label_b}'s collapse": sum(
            (c for p, c in after.items() if p > before), Fraction(0)
        ),
    }
