"""Seed 003's battle rhythm as pure functions: the Count clock and Cast Lots.

Declare (lowest Mobility first) → Effort becomes Counts → advance to the next scheduled
action → resolve everything due at that Count together → respond → continue.
Every change takes a BattleRhythm and returns a new one.

Cast Lots (the seed names four lots but no dice): each PC involved throws 2d6.
12 is that PC's CRIT, 11 a WEAL, 3 a WOE, 2 a FUMBLE; 4..10 leaves fate out.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Literal

from tidetower.engine.rules import RuleError

DeclareOrder = Literal["mobility", "free"]

# A PC's 2d6 lot, from that PC's point of view: +2 CRIT … -2 FUMBLE.
LOT_BY_SUM: dict[int, int] = {12: 2, 11: 1, 3: -1, 2: -2}
LOT_NAMES: dict[int, str] = {
    2: "attacker CRIT / defender FUMBLE",
    1: "attacker WEAL / defender WOE",
    0: "no intervention of fate",
    -1: "defender WEAL / attacker WOE",
    -2: "defender CRIT / attacker FUMBLE",
}


@dataclass(frozen=True)
class Scheduled:
    """A declared action: who, what, the Effort committed, and the Count it resolves at."""

    actor: str
    action: str
    effort: int
    due: int

    def remaining(self, count: int) -> int:
        """Counts left before it resolves."""
        return self.due - count


@dataclass(frozen=True)
class Checkpoint:
    """The scene just after the most recent resolution: where a rewind returns to."""

    count: int
    pending: tuple[Scheduled, ...]


@dataclass(frozen=True)
class BattleRhythm:
    """The Count clock: the current Count, pending actions, the last resolution."""

    count: int = 0
    pending: tuple[Scheduled, ...] = ()
    mobility: dict[str, int] = field(default_factory=dict)
    declare_order: DeclareOrder = "mobility"
    declared: tuple[str, ...] = ()
    resolved: tuple[Scheduled, ...] = ()
    checkpoint: Checkpoint | None = None

    def next_due(self) -> int | None:
        """The Count of the next scheduled action, if any."""
        return min((a.due for a in self.pending), default=None)


def _check_order(scene: BattleRhythm, actor: str) -> None:
    """Lowest Mobility declares first: no one faster may have declared since the last move."""
    if scene.declare_order == "free" or actor not in scene.mobility:
        return
    mine = scene.mobility[actor]
    faster = [n for n in scene.declared if scene.mobility.get(n, mine) > mine]
    if faster:
        raise RuleError(
            f"{actor} (Mobility {mine}) must declare before {faster[0]} "
            f"(Mobility {scene.mobility[faster[0]]}): lowest Mobility first",
            field="actor",
        )


def declare(
    scene: BattleRhythm,
    actor: str,
    action: str,
    effort: int,
    starts_at: int | None = None,
    alongside: bool = False,
) -> BattleRhythm:
    """Schedule an action `effort` Counts ahead; a new action abandons the actor's others
    unless it is declared `alongside` them. Before anything has resolved, an action may be
    declared as starting at a later Count (`starts_at` >= 1)."""
    if not actor:
        raise RuleError("a declaration needs the actor's name", field="actor")
    if not isinstance(effort, int) or isinstance(effort, bool) or effort < 1:
        raise RuleError(
            f"effort must be a whole number of Counts >= 1, got {effort!r}", field="effort"
        )
    _check_order(scene, actor)
    start = scene.count
    if starts_at is not None:
        if scene.checkpoint is not None:
            raise RuleError(
                "starts_at is only for the beginning of a battle, before any action has resolved",
                field="starts_at",
            )
        if starts_at < max(scene.count, 1):
            raise RuleError(
                f"starts_at must be a Count after 0 and not in the past, got {starts_at}",
                field="starts_at",
            )
        start = starts_at
    kept = scene.pending if alongside else tuple(a for a in scene.pending if a.actor != actor)
    entry = Scheduled(actor, action or "action", effort, start + effort)
    return dataclasses.replace(scene, pending=(*kept, entry), declared=(*scene.declared, actor))


def abandon(scene: BattleRhythm, actor: str, action: str | None = None) -> BattleRhythm:
    """Drop an actor's pending action(s); the Counts already spent are not refunded."""
    gone = [a for a in scene.pending if a.actor == actor and action in (None, a.action)]
    if not gone:
        raise RuleError(
            f"{actor} has no pending action" + (f" {action!r}" if action else ""),
            field="action" if action else "actor",
        )
    return dataclasses.replace(scene, pending=tuple(a for a in scene.pending if a not in gone))


def advance(scene: BattleRhythm, counts: int | None = None) -> BattleRhythm:
    """Move to the next scheduled action (or `counts` ahead, never past it); resolve all
    actions that reach 0 there, together."""
    due = scene.next_due()
    if due is None:
        raise RuleError("no action is scheduled: declare one before advancing")
    if counts is not None and (not isinstance(counts, int) or counts < 1):
        raise RuleError(f"counts must be a whole number >= 1, got {counts!r}", field="counts")
    count = due if counts is None else min(scene.count + counts, due)
    if count < due:
        return dataclasses.replace(scene, count=count, declared=(), resolved=())
    batch = tuple(a for a in scene.pending if a.due == count)
    pending = tuple(a for a in scene.pending if a.due != count)
    return dataclasses.replace(
        scene,
        count=count,
        pending=pending,
        declared=(),
        resolved=batch,
        checkpoint=Checkpoint(count, pending),
    )


def rewind(scene: BattleRhythm) -> BattleRhythm:
    """Back to just after the most recent resolution, for everyone."""
    if scene.checkpoint is None:
        raise RuleError("nothing has resolved yet: there is no resolution to rewind to")
    point = scene.checkpoint
    return dataclasses.replace(scene, count=point.count, pending=point.pending, declared=())


def accuracy(offense: int, defense: int) -> int:
    """Offense - Defense; above 0 the attack lands, barring the intervention of fate."""
    return offense - defense


def lot(faces: Sequence[int]) -> int:
    """One PC's lot from 2d6, from that PC's side: +2 CRIT, +1 WEAL, -1 WOE, -2 FUMBLE."""
    if len(faces) != 2 or any(not 1 <= f <= 6 for f in faces):
        raise RuleError(f"Cast Lots is two d6 per PC, got faces {list(faces)!r}", field="dice")
    return LOT_BY_SUM.get(sum(faces), 0)


LOT_CASTERS: dict[str, tuple[bool, bool]] = {
    "attacker": (True, False),
    "defender": (False, True),
    "both": (True, True),
    "none": (False, False),
}
"""Who casts an attack's lots: (the attacker's side, the defender's side), 2d6 each."""


def lot_dice(casters: str) -> int:
    """Return how many d6 an attack's lots take: two for each side that casts."""
    return 2 * sum(LOT_CASTERS[casters])


def cast_lots(attacker: Sequence[int] | None, defender: Sequence[int] | None) -> int:
    """The lot of an attack from the attacker's side; when both are PCs, the two lots
    add up (a WEAL against a WEAL cancels) within CRIT..FUMBLE."""
    total = (lot(attacker) if attacker is not None else 0) - (
        lot(defender) if defender is not None else 0
    )
    return max(-2, min(2, total))


def lands(accuracy_value: int | None, lot_value: int) -> bool:
    """Does the attack land? No Defensive Maneuver (None): yes; else Accuracy > 0.
    Fate overrides: an attacker CRIT hits hard, a defender CRIT makes it miss."""
    if lot_value == 2:
        return True
    if lot_value == -2:
        return False
    return accuracy_value is None or accuracy_value > 0


def lot_odds() -> dict[int, Fraction]:
    """Exact chance of each lot from one PC's 2d6."""
    odds: dict[int, Fraction] = {}
    for a in range(1, 7):
        for b in range(1, 7):
            value = LOT_BY_SUM.get(a + b, 0)
            odds[value] = odds.get(value, Fraction(0)) + Fraction(1, 36)
    return dict(sorted(odds.items()))
