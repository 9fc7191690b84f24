"""Seed 004's graded d100 as pure functions: hit chance, grade, defence (odds in odds.py).

The d100 is rolled under the hit chance: margin = chance - roll (0 or more lands).
The seed gives the grade bands "roughly"; the engine reads them as exact cut-offs:
CRITICAL margin >= 25, CLEAN >= 12, SOLID >= 0, GLANCING >= -9, DEFLECTED >= -19,
WHIFF >= -29, BACKFIRE <= -30.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

from tidetower.engine.rules import JSONValue, RuleError

Grade = Literal["CRITICAL", "CLEAN", "SOLID", "GLANCING", "DEFLECTED", "WHIFF", "BACKFIRE"]
GRADES: tuple[Grade, ...] = (
    "CRITICAL",
    "CLEAN",
    "SOLID",
    "GLANCING",
    "DEFLECTED",
    "WHIFF",
    "BACKFIRE",
)
# The lowest margin of each grade, best first; BACKFIRE takes everything below.
FLOORS: tuple[tuple[Grade, int], ...] = (
    ("CRITICAL", 25),
    ("CLEAN", 12),
    ("SOLID", 0),
    ("GLANCING", -9),
    ("DEFLECTED", -19),
    ("WHIFF", -29),
)
DAMAGE: dict[Grade, Fraction] = {
    "CRITICAL": Fraction(7, 5),
    "CLEAN": Fraction(23, 20),
    "SOLID": Fraction(1),
    "GLANCING": Fraction(1, 2),
    "DEFLECTED": Fraction(1, 5),
    "WHIFF": Fraction(0),
    "BACKFIRE": Fraction(0),
}
# Side momentum per grade: a CRITICAL +3; BACKFIRE the biggest drop of all (ally falls -3).
MOMENTUM: dict[Grade, int] = {
    "CRITICAL": 3,
    "CLEAN": 2,
    "SOLID": 1,
    "GLANCING": 0,
    "DEFLECTED": -1,
    "WHIFF": -2,
    "BACKFIRE": -4,
}
KILL, ALLY_FALLS = 2, -3
BASE = {"hero": 80, "enemy": 65}
TACTICS = {"poor": -5, "standard": 0, "good": 5, "excellent": 8, "brilliant": 12}
RISK = {"safe": 0, "measured": 0, "aggressive": -8, "reckless": -20}
TARGET = {"easy": 5, "standard": 0, "difficult": -8, "extreme": -15}
RANKS = {"D": 0, "C": 10, "B": 20, "A": 30, "S": 40, "SS": 50, "SSS": 60}
GAP_MIN, GAP_MAX = -10, 12


def grade(margin: int) -> Grade:
    """The grade of a roll that came `margin` past (positive) or short of the threshold."""
    for name, floor in FLOORS:
        if margin >= floor:
            return name
    return "BACKFIRE"


def better(name: Grade) -> Grade:
    """One grade better (CRITICAL stays CRITICAL)."""
    return GRADES[max(GRADES.index(name) - 1, 0)]


def worse_of(a: Grade, b: Grade) -> Grade:
    """The worse of two grades."""
    return a if GRADES.index(a) >= GRADES.index(b) else b


def rank_points(rank: JSONValue, field: str = "rank") -> int:
    """Rank points: a letter D..SSS (10 points apart: 10x power) or a number of points;
    a refusal names `field`, the param that gave the rank."""
    if isinstance(rank, int) and not isinstance(rank, bool):
        return rank
    if isinstance(rank, str) and rank.upper() in RANKS:
        return RANKS[rank.upper()]
    raise RuleError(
        f"unknown rank {rank!r}: expected one of {', '.join(RANKS)} or points", field=field
    )


def gap_modifier(gap: int) -> int:
    """Hit-chance modifier for a rank gap in points: one per point, -10 .. +12."""
    return max(GAP_MIN, min(GAP_MAX, gap))


def gap_reading(gap: int) -> str:
    """What the fighter is told about a rank gap (points, positive = you are stronger)."""
    bands = (
        (10, "Beneath you."),
        (3, "upper hand"),
        (-2, "even"),
        (-9, "outmatched"),
        (-19, "Suicidal."),
    )
    return next((text for floor, text in bands if gap >= floor), "cannot meaningfully harm")


def exhaustion(spent: int) -> int:
    """-5, -10 or -15 once over 40%, 60% or 80% of the reserves are spent."""
    if not isinstance(spent, int) or isinstance(spent, bool) or not 0 <= spent <= 100:
        raise RuleError(f"spent must be a percentage 0..100, got {spent!r}", field="spent")
    return next((mod for floor, mod in ((80, -15), (60, -10), (40, -5)) if spent > floor), 0)


def _lookup(table: dict[str, int], key: str, what: str) -> int:
    if key not in table:
        raise RuleError(f"unknown {what} {key!r}: expected one of {', '.join(table)}", field=what)
    return table[key]


def chance_parts(
    base: str,
    tactics: str = "standard",
    risk: str = "safe",
    target: str = "standard",
    gap: int = 0,
    momentum: int = 0,
    spent: int = 0,
) -> dict[str, int]:
    """Each term of the hit chance, by the seed's table (before any clamp)."""
    return {
        "base": _lookup(BASE, base, "base"),
        "tactics": _lookup(TACTICS, tactics, "tactics"),
        "risk": _lookup(RISK, risk, "risk"),
        "target": _lookup(TARGET, target, "target"),
        "gap": gap_modifier(gap),
        "momentum": momentum,
        "exhaustion": exhaustion(spent),
    }


def check_chance(chance: int) -> int:
    """`chance` if it is a whole percentage 0..100."""
    if not isinstance(chance, int) or isinstance(chance, bool) or not 0 <= chance <= 100:
        raise RuleError(f"chance must be a whole percentage 0..100, got {chance!r}", field="chance")
    return chance


def defended(
    attack: Grade, attack_margin: int, defence_margin: int, covered_before: int, penalty: int = 10
) -> Grade:
    """An attack's grade after the defender's one roll this turn.

    The defence is `penalty` harder for each attack it already covered. A defence that
    holds (margin >= 0) turns the attack into a WHIFF if it beat the attack's margin,
    else caps it at GLANCING; a botched defence (a BACKFIRE) makes the attack one grade
    better; any other failed defence changes nothing.
    """
    if grade(defence_margin) == "BACKFIRE":
        return better(attack)
    margin = defence_margin - penalty * covered_before
    if margin < 0:
        return attack
    return "WHIFF" if margin >= attack_margin else worse_of(attack, "GLANCING")
