"""Exact odds of a graded d100 roll: each grade under the hit chance, and after a defence."""

from __future__ import annotations

from fractions import Fraction

from tidetower.engine.chances import Odds
from tidetower.engine.rules import RollContext
from tidetower.engine.systems.graded_d100.fight import (
    GradedFight,
    defence_of,
    defender,
    hit_chance,
)
from tidetower.engine.systems.graded_d100.grades import (
    GRADES,
    Grade,
    check_chance,
    defended,
    grade,
)

PLACES = {len(GRADES) - 1 - i: name for i, name in enumerate(GRADES)}
"""Each grade as a value to count, BACKFIRE 0 up to CRITICAL 6."""
PLACE_OF: dict[str, int] = {name: place for place, name in PLACES.items()}
"""Each grade's value to count, by its name."""


def d100_odds(chance: int) -> dict[Grade, Fraction]:
    """Exact chance of each grade when a d100 (1..100) is rolled under `chance`."""
    check_chance(chance)
    odds: dict[Grade, Fraction] = dict.fromkeys(GRADES, Fraction(0))
    for roll in range(1, 101):
        odds[grade(chance - roll)] += Fraction(1, 100)
    return odds


def defended_odds(
    chance: int, defence_margin: int, covered: int = 0, penalty: int = 10
) -> dict[Grade, Fraction]:
    """Exact chance of each final grade of an attack that meets a defence rolled this turn."""
    odds: dict[Grade, Fraction] = dict.fromkeys(GRADES, Fraction(0))
    for roll in range(1, 101):
        margin = chance - roll
        odds[defended(grade(margin), margin, defence_margin, covered, penalty)] += Fraction(1, 100)
    return odds


def _grade_chances(fight: GradedFight, context: RollContext, chance: int) -> dict[Grade, Fraction]:
    """Each grade's chance: the d100 under `chance`, then the defence an attack meets."""
    name = defender(context) if (context.mode or "attack") == "attack" else None
    held = defence_of(fight, name) if name is not None else None
    if held is None:
        return d100_odds(chance)
    return defended_odds(chance, held.margin, held.covered, fight.settings.extra_attack_penalty)


def declared_grades(fight: GradedFight, context: RollContext) -> Odds | None:
    """An attack's or defence's hit chance and each grade, CRITICAL first."""
    if (context.mode or "attack") not in ("attack", "defence") or context.side is None:
        return None
    chance, _ = hit_chance(fight, context, context.side)
    grades = _grade_chances(fight, context, chance)
    dist = {place: grades[name] for place, name in PLACES.items()}
    return Odds("grade", f"d100 under {chance}%", dist, labels=PLACES, best_first=True)
