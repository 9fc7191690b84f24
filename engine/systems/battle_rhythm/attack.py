"""A battle-rhythm attack as declared (who casts lots, Offense, Defense) and as thrown."""

from __future__ import annotations

from dataclasses import dataclass

from tidetower.engine import params as p
from tidetower.engine.dice import DieKind, Roll
from tidetower.engine.rules import JSONValue, RollContext, RuleError
from tidetower.engine.systems.battle_rhythm import rhythm as r

ATTACK_PARAMS = ("offense", "defense", "casters")


@dataclass(frozen=True)
class Attack:
    """Who casts the attack's lots, and its Accuracy (None: the target did not defend)."""

    casters: str
    accuracy: int | None

    @property
    def dice(self) -> int:
        """The d6 its lots take: two for each side that casts."""
        return r.lot_dice(self.casters)


def declared_casters(context: RollContext) -> str:
    """Who casts the declared attack's lots (default: the attacker)."""
    return p.choice(context.params, "casters", tuple(r.LOT_CASTERS), "attacker")


def declared_attack(context: RollContext) -> Attack:
    """The attack `context` declares: who casts its lots, and Offense - Defense."""
    casters = declared_casters(context)
    offense = p.whole(context.params, "offense", 0)
    defense = p.optional_whole(context.params, "defense")
    return Attack(casters, None if defense is None else r.accuracy(offense, defense))


def attack_facts(context: RollContext, roll: Roll) -> dict[str, JSONValue]:
    """Cast Lots (the attacker's pair first), then whether the attack lands."""
    stray = [d for d in roll.dice if d.kind is not DieKind.D6]
    if stray:
        raise RuleError(f"{stray[0].kind.value} is not a lot: Cast Lots with d6", field="dice")
    faces = roll.faces(DieKind.D6)
    casters = declared_casters(context)
    if len(faces) != r.lot_dice(casters):
        raise RuleError(
            f"casters {casters!r} throw {r.lot_dice(casters)} d6 (2 per PC), "
            f"the tray shows {len(faces)}",
            field="dice",
        )
    attack = declared_attack(context)
    by_attacker, by_defender = r.LOT_CASTERS[attack.casters]
    lot = r.cast_lots(faces[:2] if by_attacker else None, faces[-2:] if by_defender else None)
    return {
        "lot": lot,
        "lot_name": r.LOT_NAMES[lot],
        "accuracy": attack.accuracy,
        "defended": attack.accuracy is not None,
        "lands": r.lands(attack.accuracy, lot),
    }
