"""Exact odds of a battle-rhythm attack: the lot its casters cast, and whether it lands."""

from __future__ import annotations

from fractions import Fraction
from itertools import product

from tidetower.engine.chances import Odds
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.systems.battle_rhythm.attack import declared_attack
from tidetower.engine.systems.battle_rhythm.rhythm import LOT_CASTERS, LOT_NAMES, cast_lots, lands

_PAIRS = tuple(product(range(1, 7), repeat=2))


def lot_chances(casters: str) -> dict[int, Fraction]:
    """Exact chance of each lot of an attack whose lots are cast by `casters` (2d6 per PC)."""
    if casters not in LOT_CASTERS:
        raise RuleError(
            f"unknown casters {casters!r}: expected one of {', '.join(LOT_CASTERS)}",
            field="casters",
        )
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


def declared_lots(context: RollContext) -> Odds | None:
    """An attack's Cast Lots (attacker's side, CRIT +2 .. FUMBLE -2) and whether it lands."""
    if context.mode not in ("", "attack"):
        return None  # the Count clock's GM actions throw no dice
    attack = declared_attack(context)
    landing = landing_chance(attack.casters, attack.accuracy)
    return Odds(
        "lot",
        f"{attack.dice}d6 lots ({attack.casters})",
        lot_chances(attack.casters),
        labels=LOT_NAMES,
        outcomes={"lands": landing, "misses": 1 - landing},
    )
