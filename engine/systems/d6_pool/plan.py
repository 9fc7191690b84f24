"""A d6-pool action roll as declared: net dice, hit threshold, difficulty, what it spends."""

from __future__ import annotations

from dataclasses import dataclass

from tidetower.engine import params as p
from tidetower.engine.rules import RollContext, RuleError
from tidetower.engine.systems.d6_pool import tracker as t

POOL_PARAMS = (
    "rating",
    "bonus",
    "assists",
    "push",
    "difficulty",
    "action",
    "threshold",
    "combat",
    "clock",
    "spend_momentum",
    "harm",
)
COMBAT_ROLLS = ("strike", "defend")


@dataclass(frozen=True)
class ActionPlan:
    """An action roll as declared: net dice, threshold, difficulty and what it may spend."""

    rating: int
    threshold: int
    difficulty: int
    action: str
    combat: bool
    push: str | None
    assists: tuple[str, ...]
    clock: str | None
    spend_momentum: bool
    harm: int | None


def plan_action(context: RollContext, settings: t.D6Settings) -> ActionPlan:
    """The declared action roll, checked: rating + bonus + assists + a pushed die."""
    prm = context.params
    action = str(prm.get("action", "")).lower()
    default_threshold = 4 if action in COMBAT_ROLLS else 3
    push = p.choice(prm, "push", (None, "die", "difficulty"), None)
    assists = p.names(prm, "assists")
    rating = p.whole(prm, "rating", context.pool, minimum=0, maximum=12)
    net = rating + p.whole(prm, "bonus", 0) + len(assists) + (push == "die")
    difficulty = p.whole(prm, "difficulty", 1, minimum=1, maximum=12)
    plan = ActionPlan(
        rating=net,
        threshold=p.choice(prm, "threshold", (3, 4), default_threshold),
        difficulty=max(difficulty - (push == "difficulty"), 1),
        action=action,
        combat=action in COMBAT_ROLLS or p.flag(prm, "combat"),
        push=push,
        assists=assists,
        clock=p.text(prm, "clock") if "clock" in prm else None,
        spend_momentum=p.flag(prm, "spend_momentum"),
        harm=p.optional_whole(prm, "harm", minimum=0),
    )
    if (push or plan.spend_momentum) and not context.actor:
        raise RuleError("a push or a momentum spend needs the actor's name", field="actor")
    if plan.spend_momentum and action != "strike":
        raise RuleError(
            f"momentum is spent on a strike, not on action {action!r}", field="spend_momentum"
        )
    return plan


def hit_threshold(plan: ActionPlan, settings: t.D6Settings) -> int:
    """Return the face a die must reach: the plan's, or 3 for traitor dice where the table
    reads them so."""
    return 3 if plan.rating < 1 and settings.traitor_threshold == "three" else plan.threshold
